# kiln_add_test(NAME SOURCES src... [LIBS lib...] [LABELS label...])
# A GoogleTest executable whose tests are registered with CTest one by one.
# Tests get these compile definitions:
#   KILN_TEST_PLUGIN_DIR       in-tree plugins (build tree)
#   KILN_TEST_BAD_PLUGIN_DIR   purpose-built bad/test plugins
#   KILN_SHARED_MODELS_DIR     ../shared/models (may not exist: skip then)
#   KILN_BINARY_DIR            the build tree
set(KILN_TEST_PLUGIN_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib/kiln/test_plugins")
get_filename_component(KILN_SHARED_MODELS_DIR "${CMAKE_SOURCE_DIR}/../shared/models" ABSOLUTE)

function(kiln_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main kiln_warnings)
  # Test sources (GoogleTest's macros, many instantiations) compile about
  # twice as fast unoptimized; the code under test keeps its build type's
  # flags in the libraries and plugins it links.
  target_compile_options(${name} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O0>)
  target_compile_definitions(${name} PRIVATE
    KILN_TEST_PLUGIN_DIR="${KILN_PLUGIN_OUTPUT_DIRECTORY}"
    KILN_TEST_BAD_PLUGIN_DIR="${KILN_TEST_PLUGIN_OUTPUT_DIRECTORY}"
    KILN_SHARED_MODELS_DIR="${KILN_SHARED_MODELS_DIR}"
    KILN_BINARY_DIR="${CMAKE_BINARY_DIR}")
  set(_props ENVIRONMENT "KILN_PLUGIN_PATH=")
  if(ARG_LABELS)
    list(APPEND _props LABELS "${ARG_LABELS}")
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST PROPERTIES ${_props})
endfunction()
