// The same checks as header_compile_test.c, compiled as C++17.
#include "header_compile_test.c"  // NOLINT(bugprone-suspicious-include)
