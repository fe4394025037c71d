# kiln_add_plugin(NAME SOURCES src...)
#
# Builds a Kiln plugin: a shared module that exports exactly one symbol
# (KilnPluginEntry), hides everything else, refuses undefined symbols at link
# time, and links no libkiln. Link further libraries with
# target_link_libraries(NAME PRIVATE ...) as usual.
#
# In-tree builds use the targets kiln_abi and kiln_sdk; an installed SDK
# provides Kiln::abi and Kiln::sdk (see KilnConfig.cmake).
set(_KILN_PLUGIN_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")

function(kiln_add_plugin name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "kiln_add_plugin(${name}): SOURCES is required")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  if(TARGET kiln_sdk)
    target_link_libraries(${name} PRIVATE kiln_sdk)
  else()
    target_link_libraries(${name} PRIVATE Kiln::sdk)
  endif()
  set(_map "${_KILN_PLUGIN_CMAKE_DIR}/kiln_plugin.map")
  set_target_properties(${name} PROPERTIES
    PREFIX "lib"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS "${_map}")
  target_link_options(${name} PRIVATE
    "LINKER:--version-script=${_map}"
    "LINKER:--no-undefined"
    "LINKER:--exclude-libs,ALL")
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  endif()
endfunction()
