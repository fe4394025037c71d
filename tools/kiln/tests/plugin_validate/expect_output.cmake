# cmake -DEXPECT_EXIT=N -DEXPECT_REGEX="re1@@re2" -DCOMMAND="prog@@arg@@..." -P expect_output.cmake
# Runs COMMAND and fails unless it exits with EXPECT_EXIT and its combined
# stdout+stderr matches every regular expression in EXPECT_REGEX.
string(REPLACE "@@" ";" COMMAND "${COMMAND}")
string(REPLACE "@@" ";" EXPECT_REGEX "${EXPECT_REGEX}")
execute_process(COMMAND ${COMMAND}
                RESULT_VARIABLE rc
                OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
message("${out}")
if(NOT "${rc}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_EXIT}: ${COMMAND}")
endif()
foreach(re IN LISTS EXPECT_REGEX)
  if(NOT out MATCHES "${re}")
    message(FATAL_ERROR "output does not match '${re}'")
  endif()
endforeach()
