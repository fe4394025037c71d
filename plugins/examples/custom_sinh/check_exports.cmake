# cmake -DNM=<nm> -DPLUGIN=<plugin.so> -P check_exports.cmake
# Fails unless the plugin's defined dynamic symbols are exactly KilnPluginEntry.
execute_process(COMMAND "${NM}" -D --defined-only "${PLUGIN}"
  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "nm -D --defined-only ${PLUGIN} failed (${_rc}): ${_err}")
endif()
string(REGEX MATCHALL "[^\n]+" _lines "${_out}")
set(_symbols)
foreach(_line IN LISTS _lines)
  # "<address> <type> <name>[@@version]"
  if(_line MATCHES "^[0-9a-fA-F]+ +[A-Za-z] +([^ @]+)")
    list(APPEND _symbols "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT _symbols STREQUAL "KilnPluginEntry")
  message(FATAL_ERROR "${PLUGIN} must export exactly KilnPluginEntry; nm shows: ${_symbols}")
endif()
message(STATUS "${PLUGIN} exports exactly KilnPluginEntry")
