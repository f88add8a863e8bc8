# rig_warnings: the warning set every rig target compiles with.
add_library(rig_warnings INTERFACE)
target_compile_options(rig_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Wimplicit-fallthrough>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${RIG_WERROR}>>:-Werror>)
