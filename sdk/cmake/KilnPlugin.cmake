# kiln_add_plugin(NAME SOURCES src...)
#
# Builds a Kiln plugin: a shared module that exports exactly one symbol
# (KilnPluginEntry), hides everything else, refuses undefined symbols at link
# time, and links no libkiln. Link further libraries with
# target_link_libraries(NAME PRIVATE ...) as usual.
#
# The plugin links only Kiln::sdk (headers): in-tree it is an alias of
# kiln_sdk, in an installed SDK an imported target of KilnConfig.cmake.
# Installed with the SDK next to kiln_plugin.map (cmake/KilnInstall.cmake).
set(_KILN_PLUGIN_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")

function(kiln_add_plugin name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "kiln_add_plugin(${name}): SOURCES is required")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  if(NOT TARGET Kiln::sdk)
    message(FATAL_ERROR "kiln_add_plugin(${name}): target Kiln::sdk is not "
                        "defined; call find_package(Kiln REQUIRED) first")
  endif()
  target_link_libraries(${name} PRIVATE Kiln::sdk)
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
  # Checked once the calling directory is fully processed, so that a later
  # target_link_libraries(NAME ... kiln) is caught too.
  # (EVAL expands ${name} now; DEFER alone would expand it at the end.)
  cmake_language(EVAL CODE
    "cmake_language(DEFER CALL _kiln_plugin_check_no_libkiln [[${name}]])")
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  endif()
endfunction()

# A plugin receives every host service through KilnHostApi; linking libkiln
# would load a second, unrelated copy of the runtime into the host process.
function(_kiln_plugin_check_no_libkiln name)
  get_target_property(_libs ${name} LINK_LIBRARIES)
  foreach(_lib IN LISTS _libs)
    if(_lib MATCHES "^(kiln|Kiln::kiln|kiln_core)$" OR _lib MATCHES "libkiln\\.so")
      message(FATAL_ERROR
        "Kiln plugin '${name}' links '${_lib}'. Plugins must not link libkiln: "
        "use the host functions in KilnHostApi (kiln/kiln_extension.h) instead "
        "and remove '${_lib}' from target_link_libraries(${name} ...).")
    endif()
  endforeach()
endfunction()
