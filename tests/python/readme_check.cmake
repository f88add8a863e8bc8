# cmake -DREADME=README.md -DEXAMPLE=examples/python/send_tensor.py -P readme_check.cmake
# Fails unless README.md's "## Python" section shows EXAMPLE verbatim in a ```python block.
file(READ "${README}" readme)
file(READ "${EXAMPLE}" example)
string(FIND "${readme}" "## Python" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md has no \"## Python\" section")
endif()
string(SUBSTRING "${readme}" ${at} -1 section)
string(FIND "${section}" "```python\n${example}```" shown)
if(shown EQUAL -1)
  message(FATAL_ERROR "README.md's Python section does not show ${EXAMPLE} verbatim in a ```python block")
endif()
