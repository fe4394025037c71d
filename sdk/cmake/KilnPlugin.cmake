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
    "LINKER:--exclude-libs,ALL")
  # KILN_PLUGIN_ALLOW_UNDEFINED: clang sanitizer and fuzzing builds, whose
  # runtimes live in the executable that loads the plugin.
  if(NOT KILN_PLUGIN_ALLOW_UNDEFINED)
    target_link_options(${name} PRIVATE "LINKER:--no-undefined")
  endif()
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

# kiln_add_settings_descriptor_set(TARGET PROTO file.proto NAME kSymbol
#                                  [IMPORT_DIRS dir...])
#
# For a delegate with a settings message of its own (extension API 1.2):
# runs protoc --descriptor_set_out --include_imports on PROTO at build time
# and adds to TARGET a header <kSymbol>.h defining
#   inline constexpr unsigned char kSymbol[] = {...};
# the serialized google.protobuf.FileDescriptorSet to hand to
# kiln::sdk::DelegateManifest::VendorSettings. Kiln then parses users' text
# settings into the message; the plugin itself needs no libprotobuf. Uses
# the protoc of find_package(Protobuf) when there is one, else `protoc` on
# the PATH (Debian: protobuf-compiler).
function(kiln_add_settings_descriptor_set target)
  cmake_parse_arguments(ARG "" "PROTO;NAME" "IMPORT_DIRS" ${ARGN})
  if(NOT ARG_PROTO OR NOT ARG_NAME)
    message(FATAL_ERROR "kiln_add_settings_descriptor_set(${target}): PROTO "
                        "and NAME are required")
  endif()
  if(TARGET protobuf::protoc)
    set(_protoc protobuf::protoc)
  else()
    find_program(KILN_PROTOC protoc)
    if(NOT KILN_PROTOC)
      message(FATAL_ERROR "kiln_add_settings_descriptor_set(${target}): "
                          "protoc not found; install protobuf-compiler")
    endif()
    set(_protoc "${KILN_PROTOC}")
  endif()
  get_filename_component(_proto "${ARG_PROTO}" ABSOLUTE)
  get_filename_component(_proto_dir "${_proto}" DIRECTORY)
  set(_out "${CMAKE_CURRENT_BINARY_DIR}/kiln_settings/${target}")
  set(_set "${_out}/${ARG_NAME}.binpb")
  set(_header "${_out}/${ARG_NAME}.h")
  set(_includes -I "${_proto_dir}")
  foreach(_dir IN LISTS ARG_IMPORT_DIRS)
    list(APPEND _includes -I "${_dir}")
  endforeach()
  add_custom_command(
    OUTPUT "${_header}" "${_set}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${_out}"
    COMMAND ${_protoc} ${_includes} --include_imports
            "--descriptor_set_out=${_set}" "${_proto}"
    COMMAND "${CMAKE_COMMAND}" -D "INPUT=${_set}" -D "OUTPUT=${_header}"
            -D "NAME=${ARG_NAME}" -P "${_KILN_PLUGIN_CMAKE_DIR}/KilnEmbedBytes.cmake"
    DEPENDS "${_proto}" "${_KILN_PLUGIN_CMAKE_DIR}/KilnEmbedBytes.cmake"
    COMMENT "Embedding the settings descriptor set of ${ARG_PROTO}"
    VERBATIM)
  target_sources(${target} PRIVATE "${_header}")
  target_include_directories(${target} PRIVATE "${_out}")
endfunction()
