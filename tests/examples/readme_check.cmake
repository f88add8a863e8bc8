# cmake -DREADME=README.md -DEXAMPLE=main.cpp -P readme_check.cmake
# Fails unless README.md's "## Quick start" holds one sh block of exactly two commands,
# the second `tools/deps.sh && cmake --workflow --preset default` (.ci/run runs it), and
# the README's "## Using rig from CMake" shows EXAMPLE verbatim in a ```cpp block.
file(READ "${README}" readme)

string(FIND "${readme}" "## Quick start" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md has no \"## Quick start\" section")
endif()
string(SUBSTRING "${readme}" ${at} -1 quick)
string(REGEX MATCH "\n```sh\n([^`]*)```" block "${quick}")
if(NOT block)
  message(FATAL_ERROR "README.md's Quick start has no ```sh block")
endif()
string(STRIP "${CMAKE_MATCH_1}" commands)
string(REPLACE "\n" ";" lines "${commands}")
list(LENGTH lines count)
if(NOT count EQUAL 2)
  message(FATAL_ERROR "README.md's Quick start block holds ${count} lines, not two commands:\n${commands}")
endif()
list(GET lines 1 second)
if(NOT second STREQUAL "tools/deps.sh && cmake --workflow --preset default")
  message(FATAL_ERROR "README.md's second Quick start command is \"${second}\"")
endif()

set(SECTION "## Using rig from CMake")
set(LANG cpp)
include(${CMAKE_CURRENT_LIST_DIR}/../support/readme_shows.cmake)
