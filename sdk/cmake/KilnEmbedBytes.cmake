# cmake -D INPUT=file -D OUTPUT=header.h -D NAME=kSymbol -P KilnEmbedBytes.cmake
#
# Writes a C++17 header defining `inline constexpr unsigned char NAME[]` with
# the bytes of INPUT (used by kiln_add_settings_descriptor_set to embed a
# serialized FileDescriptorSet in a plugin).
if(NOT INPUT OR NOT OUTPUT OR NOT NAME)
  message(FATAL_ERROR "KilnEmbedBytes.cmake needs INPUT, OUTPUT and NAME")
endif()
file(READ "${INPUT}" _hex HEX)
string(LENGTH "${_hex}" _length)
math(EXPR _bytes "${_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _list "${_hex}")
# Sixteen values a line.
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n    " _list "${_list}")
get_filename_component(_source "${INPUT}" NAME)
file(WRITE "${OUTPUT}"
  "// Generated from ${_source} by KilnEmbedBytes.cmake; do not edit.\n"
  "#pragma once\n\n"
  "// ${_bytes} bytes.\n"
  "inline constexpr unsigned char ${NAME}[] = {\n    ${_list}};\n")
