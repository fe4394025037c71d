# Installation layout, the CMake package (find_package(Kiln)), the
# pkg-config file and the Debian package (cpack -G DEB).
#
# Layout under the prefix (the host finds its default plugin directory at
# <dir of libkiln>/kiln/plugins, so plugins go under the same libdir):
#   bin/kiln                                  CLI
#   include/kiln/*.h, include/kiln/sdk/*.h    C API, extension API, C++ SDK
#   <libdir>/libkiln.so.<C API version>       application library (+ links)
#   <libdir>/kiln/plugins/*.so                in-tree plugins
#   <libdir>/cmake/Kiln/                      KilnConfig.cmake & co.
#   <libdir>/pkgconfig/kiln.pc
#   share/kiln/proto/kiln/*.proto             delegate settings schema
#   share/kiln/template, share/kiln/examples  plugin template and examples
#
# Targets defined elsewhere bring their own install rules where they have
# them (kiln_cli, the plugins); this file installs the rest.
include(CMakePackageConfigHelpers)

set(KILN_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Kiln")

# Public headers.
install(DIRECTORY "${CMAKE_SOURCE_DIR}/abi/include/kiln"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY "${CMAKE_SOURCE_DIR}/sdk/include/kiln/sdk"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/kiln"
        FILES_MATCHING PATTERN "*.h")

# Plugin starting point and examples, for vendors to copy
# (docs/vendor-guide.md).
install(DIRECTORY "${CMAKE_SOURCE_DIR}/sdk/template" "${CMAKE_SOURCE_DIR}/sdk/examples"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/kiln")

# Delegate settings schema, so applications and delegates can generate code.
install(FILES "${CMAKE_SOURCE_DIR}/abi/proto/kiln/delegate_settings.proto"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/kiln/proto/kiln")

# libkiln and the header-only targets, exported as Kiln::kiln, Kiln::abi and
# Kiln::sdk.
set_target_properties(kiln PROPERTIES EXPORT_NAME kiln)
set_target_properties(kiln_abi PROPERTIES EXPORT_NAME abi)
set_target_properties(kiln_sdk PROPERTIES EXPORT_NAME sdk)
install(TARGETS kiln kiln_abi kiln_sdk
        EXPORT KilnTargets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT KilnTargets
        NAMESPACE Kiln::
        DESTINATION "${KILN_CMAKE_INSTALL_DIR}")

# CMake package: targets, version check, kiln_add_plugin.
configure_package_config_file(
  "${CMAKE_SOURCE_DIR}/sdk/cmake/KilnConfig.cmake.in"
  "${CMAKE_BINARY_DIR}/sdk/cmake/KilnConfig.cmake"
  INSTALL_DESTINATION "${KILN_CMAKE_INSTALL_DIR}"
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR
            KILN_PLUGIN_INSTALL_DIR)
# Pre-1.0 runtime releases may break between minor versions.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_kiln_package_compat SameMinorVersion)
else()
  set(_kiln_package_compat SameMajorVersion)
endif()
write_basic_package_version_file(
  "${CMAKE_BINARY_DIR}/sdk/cmake/KilnConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY ${_kiln_package_compat})
install(FILES
          "${CMAKE_BINARY_DIR}/sdk/cmake/KilnConfig.cmake"
          "${CMAKE_BINARY_DIR}/sdk/cmake/KilnConfigVersion.cmake"
          "${CMAKE_SOURCE_DIR}/sdk/cmake/KilnPlugin.cmake"
          "${CMAKE_SOURCE_DIR}/sdk/cmake/kiln_plugin.map"
        DESTINATION "${KILN_CMAKE_INSTALL_DIR}")

# pkg-config (application library). The prefix is computed from the .pc
# file's own location, so the installed tree can be moved.
file(RELATIVE_PATH KILN_PC_RELATIVE_PREFIX
     "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" KILN_PC_RELATIVE_PREFIX "${KILN_PC_RELATIVE_PREFIX}")
configure_file("${CMAKE_SOURCE_DIR}/sdk/cmake/kiln.pc.in"
               "${CMAKE_BINARY_DIR}/sdk/cmake/kiln.pc" @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/sdk/cmake/kiln.pc"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

# Debian package: `cpack -G DEB` in the build directory. Dependencies come
# from dpkg-shlibdeps over every installed ELF file (libkiln, the CLI, the
# plugins), so they match what was actually linked.
set(CPACK_PACKAGE_NAME "kiln")
set(CPACK_PACKAGE_VENDOR "Kiln")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Kiln: TFLite inference runtime with versioned kernel/delegate plugins")
set(CPACK_PACKAGE_DESCRIPTION
    "Runtime library (libkiln), the kiln command-line tool, the CPU kernel plugin, C headers, the C++ plugin SDK and the CMake/pkg-config files to build applications and plugins.")
set(CPACK_PACKAGE_CONTACT "Kiln maintainers <kiln@example.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "libs")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
# The OpenCL delegate needs an ICD at run time; cmake and pkg-config are for
# building applications and plugins against the installed SDK.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "pocl-opencl-icd | opencl-icd, cmake, pkg-config")
set(CPACK_GENERATOR "DEB")
set(CPACK_SOURCE_GENERATOR "")
include(CPack)
