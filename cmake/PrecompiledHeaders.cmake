# Precompiled headers: much of a translation unit's compile time here is parsing the same
# standard, JSON, Boost.Asio, CLI11 and GoogleTest headers again. Each library precompiles the
# ones its sources use (once per library, with that library's flags, so a sanitizer or fuzzing
# build gets its own), which makes a build from nothing (tests/demo.sh) markedly faster.
# PROFCOLLECT_PRECOMPILED_HEADERS=OFF turns it off, e.g. to check that every source includes
# what it uses.
option(PROFCOLLECT_PRECOMPILED_HEADERS "Precompile the common headers of each library" ON)

set(PROFCOLLECT_PCH_STANDARD
    <algorithm> <array> <chrono> <cstdint> <cstring> <filesystem> <functional> <map> <memory>
    <optional> <set> <stdexcept> <string> <string_view> <system_error> <unordered_map> <utility>
    <vector>)

# profcollect_precompile(TARGET [JSON] [ASIO] [CLI11] [GTEST])
function(profcollect_precompile target)
  if(NOT PROFCOLLECT_PRECOMPILED_HEADERS)
    return()
  endif()
  cmake_parse_arguments(PCH "JSON;ASIO;CLI11;GTEST" "" "" ${ARGN})
  set(headers ${PROFCOLLECT_PCH_STANDARD})
  if(PCH_JSON)
    list(APPEND headers <nlohmann/json.hpp>)
  endif()
  if(PCH_ASIO)
    list(APPEND headers <boost/asio.hpp>)
  endif()
  if(PCH_CLI11)
    list(APPEND headers <CLI/CLI.hpp>)
  endif()
  if(PCH_GTEST)
    list(APPEND headers <gtest/gtest.h>)
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
