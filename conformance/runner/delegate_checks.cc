#include "delegate_checks.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "case_models.h"
#include "interpreter/interpreter.h"
#include "model/model.h"
#include "references.h"

namespace kiln::conformance {
namespace {

DelegateCheckOutcome Make(Verdict v, std::string message) {
  DelegateCheckOutcome o;
  o.verdict = v;
  o.message = std::move(message);
  return o;
}

// The graph's independent reference: the graph built at the version whose
// inputs the case exercises (version 1 semantics for every generated case
// today), looked up by key and checked against the model's hash.
struct ReferenceLookup {
  std::optional<Reference> reference;
  std::string missing;  // why there is none
};

ReferenceLookup FindReference(const DelegateCheckSpec& s, bool same_shape) {
  ReferenceLookup out;
  absl::StatusOr<GeneratedGraph> g =
      MakeGraph(s.graph, s.op, InputVersion(s.op, s.version), s.seed,
                s.interrupt_op, same_shape);
  absl::StatusOr<Reference> r = g.ok() ? FindGraphReference(s.references, *g)
                                       : absl::StatusOr<Reference>(g.status());
  if (!r.ok()) {
    out.missing = std::string(r.status().message());
    return out;
  }
  out.reference = *std::move(r);
  return out;
}

std::string CurrentExceptionText() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

// One variant of the check's graph (see RunDelegateCheck).
DelegateCheckOutcome RunVariant(const DelegateCheckSpec& s, bool same_shape) {
  const std::string op = BuiltinOpName(s.op);
  absl::StatusOr<GeneratedGraph> graph =
      MakeGraph(s.graph, s.op, s.version, s.seed, s.interrupt_op, same_shape);
  if (!graph.ok()) {
    return Make(Verdict::kSkip, std::string(graph.status().message()));
  }
  absl::StatusOr<std::vector<uint8_t>> bytes = BuildGraphModel(*graph);
  if (!bytes.ok()) {
    return Make(
        Verdict::kFail,
        absl::StrCat("the runner could not build the ", graph->key,
                     " model (a runner bug): ", bytes.status().message()));
  }
  // The model keeps pointers into the bytes: they live as long as `bytes`.
  absl::StatusOr<std::shared_ptr<const Model>> model =
      Model::FromBuffer(bytes->data(), bytes->size(), graph->key);
  if (!model.ok()) return Make(Verdict::kFail, model.status().ToString());

  InterpreterOptions options;
  options.plugins.paths = {s.plugin};
  if (!s.kernels.empty()) options.plugins.paths.push_back(s.kernels);
  options.plugins.use_default_locations = false;
  options.plugins.max_abi_version = s.cap;
  DelegateRequest request;
  request.name = s.delegate;
  options.delegates.push_back(request);

  const std::string what =
      absl::StrCat(op, " v", s.version, " (", graph->key, ", ",
                   graph->nodes.size(), " node(s), ", graph->family, ")");
  absl::StatusOr<std::unique_ptr<Interpreter>> created;
  try {
    created = Interpreter::Create(*model, options);
  } catch (...) {
    return Make(Verdict::kFail,
                absl::StrCat("a C++ exception crossed the delegate's C "
                             "boundary during create/partition (",
                             CurrentExceptionText(), ")"));
  }
  if (!created.ok()) {
    const std::string message(created.status().message());
    if (message.find("has no implementation in this Kiln") !=
        std::string::npos) {
      // The interpreter resolves a kernel for every node before delegating;
      // without one in the kernel plugin the case cannot be built.
      return Make(Verdict::kSkip,
                  absl::StrCat("not run: the kernel plugin ", s.kernels,
                               " has no kernel for ", op, " v", s.version,
                               ", and the interpreter resolves every node "
                               "before delegating (",
                               message.substr(0, message.find('\n')), ")"));
    }
    if (message.find("declared supported_ops do not cover") !=
        std::string::npos) {
      return Make(Verdict::kFail,
                  absl::StrCat("claim outside the declared ops: ", message));
    }
    return Make(Verdict::kFail,
                absl::StrCat("creating an interpreter with delegate '",
                             s.delegate, "' on ", what,
                             " failed (create or partition): ", message));
  }
  Interpreter& interpreter = **created;
  for (const std::string& w : interpreter.warnings()) {
    if (w.find(s.delegate) != std::string::npos) {
      return Make(Verdict::kFail,
                  absl::StrCat("the delegate was not applied: ", w));
    }
  }

  // What it claimed, and why it left the rest.
  const std::vector<NodeInfo> nodes = interpreter.DescribeNodes(0);
  std::vector<int32_t> claimed;
  std::vector<std::string> declined;
  for (const NodeInfo& n : nodes) {
    if (n.delegated) {
      claimed.push_back(n.index);
    } else {
      const std::string why = interpreter.DelegateDeclineReason(0, n.index);
      declined.push_back(absl::StrCat("node ", n.index, " ", n.op, ": ",
                                      why.empty() ? "(no reason)" : why));
    }
  }
  DelegateCheckOutcome out;
  out.extra["claimed_nodes"] = claimed;
  out.extra["declined"] = declined;
  out.extra["partitions"] = interpreter.Partitions(0).size();

  if (s.outside_declaration) {
    if (!claimed.empty()) {
      return Make(Verdict::kFail,
                  absl::StrCat("claimed ", op, " v", s.version,
                               ", outside its declared versions"));
    }
    out.verdict = Verdict::kPass;
    out.message = absl::StrCat("left ", op, " v", s.version,
                               " (outside its declared versions) to kernels");
    return out;
  }
  if (s.graph == kGraphInterrupted) {
    // Node 1 is the interrupting op, which the delegate did not declare.
    for (int32_t n : claimed) {
      if (n == 1) {
        return Make(
            Verdict::kFail,
            absl::StrCat("claimed node 1 (", BuiltinOpName(s.interrupt_op),
                         "), which it does not declare"));
      }
    }
  }
  if (claimed.empty()) {
    const bool reasons =
        declined.empty() ||
        std::all_of(declined.begin(), declined.end(), [](const std::string& d) {
          return d.find("(no reason)") == std::string::npos;
        });
    out.verdict = reasons ? Verdict::kSkip : Verdict::kFail;
    out.message = absl::StrCat(
        reasons ? "declined every node of " : "claimed no node of ", what,
        reasons ? ""
                : " and gave no reason: a delegate that declares an op and "
                  "declines a node of it should say why "
                  "(kiln.delegate_decline_reasons/1, the SDK's "
                  "NodeSupport::Unsupported)",
        ": ", absl::StrJoin(declined, "; "));
    return out;
  }

  absl::Status status = interpreter.AllocateTensors();
  for (size_t i = 0; status.ok() && i < graph->inputs.size(); ++i) {
    const GeneratedTensor& t =
        graph->tensors[static_cast<size_t>(graph->inputs[i])];
    TensorState* in = interpreter.input(static_cast<int>(i));
    if (in == nullptr || in->data == nullptr || in->bytes != t.bytes.size()) {
      status = absl::InternalError(absl::StrCat(
          "input ", i, " is not allocated as ", t.bytes.size(), " bytes"));
      break;
    }
    std::memcpy(in->data, t.bytes.data(), t.bytes.size());
  }
  if (status.ok()) status = interpreter.Invoke();
  if (!status.ok()) {
    return Make(Verdict::kFail,
                absl::StrCat("running ", what, " with ", claimed.size(),
                             " node(s) delegated failed: ", status.message()));
  }
  for (const PartitionInfo& p : interpreter.Partitions(0)) {
    if (p.fell_back) {
      return Make(Verdict::kFail,
                  absl::StrCat("the partition of node(s) [",
                               absl::StrJoin(p.delegated_nodes, ","),
                               "] fell back to kernels (the delegate's "
                               "partition_init, prepare or invoke failed): ",
                               p.fallback_reason));
    }
  }

  const ReferenceLookup lookup = FindReference(s, same_shape);
  const std::string ran =
      absl::StrCat("ran ", what, ": ", claimed.size(), " of ", nodes.size(),
                   " node(s) delegated in ", interpreter.Partitions(0).size(),
                   " partition(s)");
  if (!lookup.reference) {
    out.verdict = Verdict::kNoReference;
    out.message = absl::StrCat(ran, "; outputs not compared: ", lookup.missing);
    return out;
  }
  const Reference& ref = *lookup.reference;
  if (ref.outputs.size() != static_cast<size_t>(interpreter.num_outputs())) {
    return Make(Verdict::kFail,
                absl::StrCat("the model has ", interpreter.num_outputs(),
                             " outputs, the reference ", ref.outputs.size()));
  }
  for (int i = 0; i < interpreter.num_outputs(); ++i) {
    const TensorState* t = interpreter.output(i);
    const std::string diff =
        CompareWithReference(t->ElementType(), t->shape, t->data, t->bytes,
                             ref.outputs[static_cast<size_t>(i)],
                             ref.abs_tolerance, ref.rel_tolerance);
    if (!diff.empty()) {
      return Make(Verdict::kFail,
                  absl::StrCat("wrong output: ", ran, "; output ", i,
                               " differs from the reference (", ref.source,
                               ", ", ref.path, "): ", diff));
    }
  }
  out.verdict = Verdict::kPass;
  out.message =
      absl::StrCat(ran, "; outputs match the reference (", ref.source, ")");
  return out;
}

}  // namespace

// The generated graph first; when the delegate declines all of it (with
// reasons) and the op has a same-shape variant (no broadcast), that one too,
// so delegates that do not broadcast are still exercised.
DelegateCheckOutcome RunDelegateCheck(const DelegateCheckSpec& s) {
  DelegateCheckOutcome first = RunVariant(s, false);
  if (first.verdict != Verdict::kSkip || s.outside_declaration ||
      !HasSameShapeVariant(s.op)) {
    return first;
  }
  DelegateCheckOutcome second = RunVariant(s, true);
  if (second.verdict == Verdict::kSkip) {
    second.message =
        absl::StrCat(first.message, "; same-shape variant: ", second.message);
  }
  return second;
}

}  // namespace kiln::conformance
