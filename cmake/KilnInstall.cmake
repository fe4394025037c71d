# Installation layout, the CMake package (find_package(Kiln)), the
# pkg-config file and the Debian packages (cpack -G DEB).
#
# Layout under the prefix (GNUInstallDirs; <libdir> is lib/<multiarch
# triplet> when configured with -DCMAKE_INSTALL_PREFIX=/usr, as for the
# .deb, else lib). The host finds its default plugin directory at run time
# relative to where it is installed (host/src/plugin/install_paths.h):
# <dir of libkiln>/kiln/plugins, or <dir of the kiln executable>/<relative
# bindir->libdir>/kiln/plugins. So plugins go under the same libdir and the
# tree can be installed or moved anywhere.
#   bin/kiln                                  CLI                [tools]
#   <libdir>/libkiln.so.<C API version>       application library [runtime]
#   <libdir>/kiln/plugins/*.so                in-tree plugins      [runtime]
#   include/kiln/*.h, include/kiln/sdk/*.h    C API, extension API, C++ SDK
#   <libdir>/libkiln.so                       link-time name
#   <libdir>/cmake/Kiln/                      KilnConfig.cmake & co.
#   <libdir>/pkgconfig/kiln.pc
#   share/kiln/proto/kiln/*.proto             delegate settings schema
#   share/kiln/template, share/kiln/examples  plugin template and examples
#                                                           (all [development])
# [component] is the install component: runtime -> Debian package libkiln1,
# development -> libkiln-dev, tools -> kiln-tools. The Python wheel installs
# the runtime component (python/CMakeLists.txt).
#
# Targets defined elsewhere bring their own install rules where they have
# them (kiln_cli, the plugins: their directories set the default component);
# this file installs the rest.
include(CMakePackageConfigHelpers)

set(KILN_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Kiln")

# Public headers.
install(DIRECTORY "${CMAKE_SOURCE_DIR}/abi/include/kiln"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        COMPONENT development
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY "${CMAKE_SOURCE_DIR}/sdk/include/kiln/sdk"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/kiln"
        COMPONENT development
        FILES_MATCHING PATTERN "*.h")

# Plugin starting point and examples, for vendors to copy
# (docs/vendor-guide.md).
install(DIRECTORY "${CMAKE_SOURCE_DIR}/sdk/template" "${CMAKE_SOURCE_DIR}/sdk/examples"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/kiln"
        COMPONENT development)

# Delegate settings schema, so applications and delegates can generate code.
install(FILES "${CMAKE_SOURCE_DIR}/abi/proto/kiln/delegate_settings.proto"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/kiln/proto/kiln"
        COMPONENT development)

# libkiln and the header-only targets, exported as Kiln::kiln, Kiln::abi and
# Kiln::sdk.
set_target_properties(kiln PROPERTIES EXPORT_NAME kiln)
set_target_properties(kiln_abi PROPERTIES EXPORT_NAME abi)
set_target_properties(kiln_sdk PROPERTIES EXPORT_NAME sdk)
install(TARGETS kiln kiln_abi kiln_sdk
        EXPORT KilnTargets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
          COMPONENT runtime NAMELINK_COMPONENT development
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT development
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT runtime
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT KilnTargets
        NAMESPACE Kiln::
        DESTINATION "${KILN_CMAKE_INSTALL_DIR}"
        COMPONENT development)

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
          "${CMAKE_SOURCE_DIR}/sdk/cmake/KilnEmbedBytes.cmake"
          "${CMAKE_SOURCE_DIR}/sdk/cmake/kiln_plugin.map"
        DESTINATION "${KILN_CMAKE_INSTALL_DIR}"
        COMPONENT development)

# pkg-config (application library). The prefix is computed from the .pc
# file's own location, so the installed tree can be moved.
file(RELATIVE_PATH KILN_PC_RELATIVE_PREFIX
     "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" KILN_PC_RELATIVE_PREFIX "${KILN_PC_RELATIVE_PREFIX}")
configure_file("${CMAKE_SOURCE_DIR}/sdk/cmake/kiln.pc.in"
               "${CMAKE_BINARY_DIR}/sdk/cmake/kiln.pc" @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/sdk/cmake/kiln.pc"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
        COMPONENT development)

# Debian packages: `cpack -G DEB` in a build directory configured with
# -DCMAKE_INSTALL_PREFIX=/usr (Debian's layout: multiarch libdir). One
# package per component, as Debian splits libraries:
#   libkiln<soname major>  runtime: libkiln.so.N and the plugins
#   libkiln-dev            headers, libkiln.so, CMake package, pkg-config,
#                          delegate settings schema, plugin template/examples
#   kiln-tools             the kiln command-line tool
# Dependencies on shared libraries (libc, libstdc++, protobuf, abseil, and
# any library a plugin links, e.g. XNNPACK's) are computed by dpkg-shlibdeps
# over the ELF files of each package. Libraries a plugin loads with dlopen
# are invisible to it and are listed in KILN_DEB_RUNTIME_DLOPEN_DEPENDS.
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(STATUS "Kiln: CMAKE_INSTALL_PREFIX is ${CMAKE_INSTALL_PREFIX}; "
                 "configure with -DCMAKE_INSTALL_PREFIX=/usr for .deb "
                 "packages in Debian's layout (cpack -G DEB)")
endif()
# Libraries loaded with dlopen by in-tree plugins (Debian dependency syntax):
#   OpenCL delegate: the ICD loader (libOpenCL.so.1).
#   XNNPACK plugin: dlopens libXNNPACK.so.0 and libpthreadpool.so.0; they
#     are Recommends (below), not Depends: without them the delegate says
#     UNAVAILABLE and models run on the CPU plugin.
set(KILN_DEB_RUNTIME_DLOPEN_DEPENDS "ocl-icd-libopencl1 | libopencl1")

set(CPACK_PACKAGE_NAME "kiln")
set(CPACK_PACKAGE_VENDOR "Kiln")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Kiln: TFLite inference runtime with versioned kernel/delegate plugins")
set(CPACK_PACKAGE_CONTACT "Kiln maintainers <kiln@example.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_GENERATOR "DEB")
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime development tools)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libkiln1 carries a shlibs file, so packages built against it depend on it.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_COMPONENT_DEVELOPMENT_DEPENDS runtime)
set(CPACK_COMPONENT_TOOLS_DEPENDS runtime)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "libkiln${KILN_C_API_VERSION_MAJOR}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION "libs")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "${KILN_DEB_RUNTIME_DLOPEN_DEPENDS}")
# The OpenCL delegate needs an ICD (a driver) to find a device.
# The default xnnpack delegate needs libXNNPACK (dlopened).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS
    "pocl-opencl-icd | opencl-icd, libxnnpack0, libpthreadpool0")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "Kiln inference runtime: libkiln and the in-tree plugins\n"
    "libkiln runs TFLite models with kernels and delegates from versioned "
    "plugins; this package has the library, the CPU kernel plugin and the "
    "OpenCL delegate plugin (default plugin directory "
    "${CMAKE_INSTALL_LIBDIR}/kiln/plugins).")

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME "libkiln-dev")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION "libdevel")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SUGGESTS "cmake, pkg-config")
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION
    "Kiln inference runtime: development files\n"
    "C headers of the application C API and the plugin extension API, the "
    "C++ plugin SDK, find_package(Kiln), pkg-config kiln, the delegate "
    "settings schema and the plugin template and examples.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME "kiln-tools")
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION "utils")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "Kiln inference runtime: the kiln command-line tool\n"
    "kiln version, inspect, run, bench, build-example, plugin validate and "
    "conformance.")
include(CPack)

if(KILN_BUILD_TESTS)
  # What Debian users install, installed into a clean root and run there
  # without any build tree (cmake/tests/deb_package_test.sh). The packaging
  # build lives beside this build directory (<build>-deb, like build-asan),
  # so it is incremental and ccache reuses this build's objects.
  add_test(NAME package.deb
    COMMAND "${CMAKE_SOURCE_DIR}/cmake/tests/deb_package_test.sh"
            "${CMAKE_SOURCE_DIR}" "${CMAKE_BINARY_DIR}-deb" "${KILN_SHARED_MODELS_DIR}")
  set_tests_properties(package.deb PROPERTIES
    LABELS package TIMEOUT 1800 SKIP_RETURN_CODE 77
    RESOURCE_LOCK kiln_deb_build ENVIRONMENT "KILN_PLUGIN_PATH=")
endif()
