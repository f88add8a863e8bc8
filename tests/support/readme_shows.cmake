# include()d by a README check, or run as
#   cmake -DREADME=README.md -DSECTION="## Python" -DLANG=python -DEXAMPLE=file -P readme_shows.cmake
# Fails unless README's section SECTION (from its heading to the end of the file) shows
# EXAMPLE verbatim in a ```LANG block.
file(READ "${README}" readme)
file(READ "${EXAMPLE}" example)
string(FIND "${readme}" "\n${SECTION}\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md has no \"${SECTION}\" section")
endif()
string(SUBSTRING "${readme}" ${at} -1 section)
string(FIND "${section}" "```${LANG}\n${example}```" shown)
if(shown EQUAL -1)
  message(FATAL_ERROR "README.md's \"${SECTION}\" section does not show ${EXAMPLE} verbatim in a ```${LANG} block")
endif()
