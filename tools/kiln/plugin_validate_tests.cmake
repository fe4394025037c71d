# Tests of `kiln plugin validate` (plugin_validate_command.cc): the CLI is run
# on a good plugin and on plugins that break one rule each, and its exit
# code and report are checked.
set(_pv_dir "${CMAKE_CURRENT_SOURCE_DIR}/tests/plugin_validate")
set(_pv_out "${CMAKE_BINARY_DIR}/lib/kiln/validate_test_plugins")

# Exports a second symbol: plain MODULE, default visibility, no version script.
add_library(kiln_validate_extra_symbol MODULE "${_pv_dir}/extra_symbol_plugin.cc")
target_link_libraries(kiln_validate_extra_symbol PRIVATE Kiln::sdk kiln_warnings)
set_target_properties(kiln_validate_extra_symbol PROPERTIES
  OUTPUT_NAME validate_extra_symbol LIBRARY_OUTPUT_DIRECTORY "${_pv_out}")
# Links libkiln (kiln_add_plugin would refuse to, so it is a plain MODULE).
add_library(kiln_validate_links_libkiln MODULE "${_pv_dir}/links_libkiln_plugin.cc")
target_link_libraries(kiln_validate_links_libkiln PRIVATE Kiln::sdk kiln kiln_warnings)
set_target_properties(kiln_validate_links_libkiln PROPERTIES
  OUTPUT_NAME validate_links_libkiln LIBRARY_OUTPUT_DIRECTORY "${_pv_out}"
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
add_dependencies(kiln_cli kiln_validate_extra_symbol kiln_validate_links_libkiln)

# kiln_validate_test(NAME EXIT code ARGS args... EXPECT regex...)
function(kiln_validate_test name)
  cmake_parse_arguments(ARG "" "EXIT" "ARGS;EXPECT" ${ARGN})
  # Lists travel to the script joined with "@@" (see expect_output.cmake).
  string(REPLACE ";" "@@" _args "$<TARGET_FILE:kiln_cli>;${ARG_ARGS}")
  string(REPLACE ";" "@@" _expect "${ARG_EXPECT}")
  add_test(NAME plugin_validate.${name}
    COMMAND "${CMAKE_COMMAND}" "-DEXPECT_EXIT=${ARG_EXIT}"
            "-DEXPECT_REGEX=${_expect}" "-DCOMMAND=${_args}"
            -P "${_pv_dir}/expect_output.cmake")
  set_tests_properties(plugin_validate.${name} PROPERTIES
    LABELS cli ENVIRONMENT "KILN_PLUGIN_PATH=")
endfunction()

set(_cpu "${KILN_PLUGIN_OUTPUT_DIRECTORY}/libkiln_cpu.so")
set(_bad "${KILN_TEST_PLUGIN_OUTPUT_DIRECTORY}")
kiln_validate_test(cpu_plugin_passes EXIT 0
  ARGS plugin validate "${_cpu}"
  EXPECT "\\[PASS\\] elf" "\\[PASS\\] exports +exports exactly KilnPluginEntry"
         "\\[PASS\\] no_libkiln" "\\[PASS\\] dependencies" "\\[PASS\\] load"
         "name +kiln_cpu" "ADD +op versions 1\\.\\." "Result: PASS")
kiln_validate_test(cpu_plugin_json EXIT 0
  ARGS plugin validate --json "${_cpu}"
  EXPECT "\"passed\": true" "\"name\": \"kiln_cpu\"" "\"kernels\": ")
kiln_validate_test(test_plugin_declarations EXIT 0
  ARGS plugin validate "${_bad}/libtest_good.so"
  EXPECT "ADD +op versions 1\\.\\.2" "MUL +op versions 1\\.\\.3"
         "delegate +test_delegate")
kiln_validate_test(not_a_library_fails EXIT 1
  ARGS plugin validate "${_bad}/libtest_not_a_library.so"
  EXPECT "\\[FAIL\\] elf +it is not an ELF file" "\\[FAIL\\] load" "Result: FAIL")
kiln_validate_test(no_entry_fails EXIT 1
  ARGS plugin validate "${_bad}/libtest_no_entry.so"
  EXPECT "\\[FAIL\\] exports +it does not export 'KilnPluginEntry' \\(it exports: NotTheKilnEntry\\)"
         "\\[FAIL\\] load")
kiln_validate_test(wrong_major_fails_negotiation EXIT 1
  ARGS plugin validate "${_bad}/libtest_wrong_major.so"
  EXPECT "\\[PASS\\] exports" "\\[FAIL\\] load .*extension API 2\\.0"
         "negotiation +refused")
kiln_validate_test(extra_symbol_fails EXIT 1
  ARGS plugin validate "${_pv_out}/libvalidate_extra_symbol.so"
  EXPECT "\\[FAIL\\] exports +it exports [0-9]+ symbol\\(s\\) besides KilnPluginEntry: .*acme_leaked_helper"
         "\\[PASS\\] load")
kiln_validate_test(links_libkiln_fails EXIT 1
  ARGS plugin validate "${_pv_out}/libvalidate_links_libkiln.so"
  EXPECT "\\[FAIL\\] no_libkiln +it links libkiln\\.so\\.[0-9]+"
         "\\[FAIL\\] dependencies .*KilnRuntimeVersion \\(from libkiln\\.so\\.[0-9]+\\)"
         "\\[FAIL\\] load +not attempted: the plugin links libkiln")
kiln_validate_test(links_libkiln_allowed_lib_still_fails_no_libkiln EXIT 1
  ARGS plugin validate --allow-lib libkiln.so "${_pv_out}/libvalidate_links_libkiln.so"
  EXPECT "\\[PASS\\] dependencies" "\\[FAIL\\] no_libkiln")
kiln_validate_test(missing_file_fails EXIT 1
  ARGS plugin validate "${_bad}/does_not_exist.so"
  EXPECT "\\[FAIL\\] elf +cannot open the file" "\\[FAIL\\] load .*not found")
kiln_validate_test(no_argument_is_usage_error EXIT 2
  ARGS plugin validate
  EXPECT "missing PLUGIN\\.so")
