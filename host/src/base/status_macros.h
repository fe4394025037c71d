// Status propagation macros for the host, the CLI and the conformance
// runner: the one error path (absl::Status / absl::StatusOr) written once.
//
//   KILN_RETURN_IF_ERROR(expr);           // expr: absl::Status
//   KILN_ASSIGN_OR_RETURN(auto x, expr);  // expr: absl::StatusOr<T>
//
// Both return the failing status unchanged from the enclosing function,
// which must return absl::Status or absl::StatusOr<U>.
#ifndef KILN_HOST_BASE_STATUS_MACROS_H_
#define KILN_HOST_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define KILN_STATUS_CONCAT_INNER_(a, b) a##b
#define KILN_STATUS_CONCAT_(a, b) KILN_STATUS_CONCAT_INNER_(a, b)

#define KILN_RETURN_IF_ERROR(expr)                           \
  do {                                                       \
    ::absl::Status kiln_status_macro_ = (expr);              \
    if (!kiln_status_macro_.ok()) return kiln_status_macro_; \
  } while (0)

#define KILN_ASSIGN_OR_RETURN(lhs, expr) \
  KILN_ASSIGN_OR_RETURN_IMPL_(           \
      KILN_STATUS_CONCAT_(kiln_statusor_macro_, __LINE__), lhs, expr)

#define KILN_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr)   \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // KILN_HOST_BASE_STATUS_MACROS_H_
