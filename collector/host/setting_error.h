// Library messages name settings, not command-line flags. A setting appears in a message as
// {event}, {frequency}, {period}, {branch_any}, {branch_filter}, {mmap_pages}, {binaries},
// {engine} or {output_dir} (a kernel profile's: {vmlinux}, {kallsyms}); each front end spells them its own way (the CLI as its flags -e, -F, ...; the
// daemon as its configuration keys). Without a spelling, the settings' own names are used.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace profcollect {

// The spelling of a setting's name (given without braces); empty: the setting's own name.
using SettingSpelling = std::function<std::string(std::string_view setting)>;

// `text` with every {setting} spelled.
std::string spell_settings(std::string_view text, const SettingSpelling& spelling = {});

// An error about settings; what() is spelled with the settings' own names.
class SettingError : public std::runtime_error {
 public:
  explicit SettingError(const std::string& text)
      : std::runtime_error(spell_settings(text)), text_(text) {}
  const std::string& text() const { return text_; }
  std::string spelled(const SettingSpelling& spelling) const {
    return spell_settings(text_, spelling);
  }

 private:
  std::string text_;
};

}  // namespace profcollect
