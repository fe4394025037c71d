// Child side of the delegate checks of `kiln conformance`: one generated
// model (case_models.h) through the real interpreter with the delegate under
// test requested, so create -> partition -> partition_init/prepare -> invoke
// all run, in the check process the parent watches for crashes, hangs and
// memory. Nodes the delegate leaves run on the kernel plugin given (Kiln's
// CPU plugin); outputs are compared with the independent references
// (references.h), never with another Kiln plugin.
#ifndef KILN_CONFORMANCE_RUNNER_DELEGATE_CHECKS_H_
#define KILN_CONFORMANCE_RUNNER_DELEGATE_CHECKS_H_

#include <cstdint>
#include <string>

#include "conformance_runner.h"
#include "nlohmann/json.hpp"

namespace kiln::conformance {

struct DelegateCheckSpec {
  std::string plugin;      // the delegate plugin under test
  std::string delegate;    // its KilnDelegateInterface.name
  std::string kernels;     // kernel plugin for the nodes left to kernels
  std::string references;  // reference directory ("" = none)
  uint32_t cap = 0;        // extension API level served
  std::string graph = "single";
  int32_t op = 0, version = 1, interrupt_op = 0;
  uint64_t seed = 1;
  // The op version is outside what the delegate declares: it must leave the
  // node to kernels (a claim is refused by the host and fails the check).
  bool outside_declaration = false;
};

struct DelegateCheckOutcome {
  Verdict verdict = Verdict::kFail;
  std::string message;
  nlohmann::json extra = nlohmann::json::object();
};

DelegateCheckOutcome RunDelegateCheck(const DelegateCheckSpec& spec);

}  // namespace kiln::conformance

#endif  // KILN_CONFORMANCE_RUNNER_DELEGATE_CHECKS_H_
