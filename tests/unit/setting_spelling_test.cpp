// Library messages name settings ({event}, {period}, ...), each front end spells them: without a
// spelling the settings' own names, on the command line its flags. Errors of the event
// selection read as settings from the library and as flags from the CLI.
#include <gtest/gtest.h>

#include "collector/cli/cli_spelling.h"
#include "collector/live/event_selection.h"
#include "collector/host/setting_error.h"

namespace profcollect {
namespace {

TEST(SettingSpelling, OwnNamesWithoutASpelling) {
  EXPECT_EQ(spell_settings("{frequency} and {period} exclude each other"),
            "frequency and period exclude each other");
  EXPECT_EQ(spell_settings("use {event} lbr"), "use event lbr");
  EXPECT_EQ(spell_settings("{mmap_pages} 8"), "buffer pages 8");
}

TEST(SettingSpelling, TheCommandLineSpellsItsFlags) {
  EXPECT_EQ(in_cli_terms("{frequency} and {period} exclude each other"),
            "-F and -c exclude each other");
  EXPECT_EQ(in_cli_terms("{branch_any} and {branch_filter}; {mmap_pages} 4; {event} brs"),
            "-b and -j; -m 4; -e brs");
}

TEST(SettingSpelling, BracesThatNameNoSettingAreKept) {
  EXPECT_EQ(spell_settings("a {b} c {unclosed"), "a {b} c {unclosed");
  EXPECT_EQ(in_cli_terms("{}{event}"), "{}-e");
}

TEST(SettingSpelling, EventSelectionErrorsSpeakOfSettingsAndReadAsFlagsOnTheCommandLine) {
  EventOptions o;
  o.frequency_hz = 10;
  o.period = 10;
  try {
    select_event(o, SelectionContext{});
    FAIL() << "a frequency and a period accepted together";
  } catch (const EventSelectionError& e) {
    EXPECT_STREQ(e.what(), "frequency and period exclude each other");
    EXPECT_EQ(e.spelled(cli_flag_of), "-F and -c exclude each other");
  }
}

}  // namespace
}  // namespace profcollect
