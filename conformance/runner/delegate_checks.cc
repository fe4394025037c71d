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

// The generated graph of one variant, its model bytes and the model that
// points into them (the bytes live as long as the model is used).
struct VariantModel {
  GeneratedGraph graph;
  std::vector<uint8_t> bytes;
  std::shared_ptr<const Model> model;
};

// Builds the variant's model, or says why the check ends here.
std::optional<DelegateCheckOutcome> BuildVariantModel(
    const DelegateCheckSpec& s, bool same_shape, VariantModel& v) {
  absl::StatusOr<GeneratedGraph> graph =
      MakeGraph(s.graph, s.op, s.version, s.seed, s.interrupt_op, same_shape);
  if (!graph.ok()) {
    return Make(Verdict::kSkip, std::string(graph.status().message()));
  }
  v.graph = *std::move(graph);
  absl::StatusOr<std::vector<uint8_t>> bytes = BuildGraphModel(v.graph);
  if (!bytes.ok()) {
    return Make(
        Verdict::kFail,
        absl::StrCat("the runner could not build the ", v.graph.key,
                     " model (a runner bug): ", bytes.status().message()));
  }
  v.bytes = *std::move(bytes);
  absl::StatusOr<std::shared_ptr<const Model>> model =
      Model::FromBuffer(v.bytes.data(), v.bytes.size(), v.graph.key);
  if (!model.ok()) return Make(Verdict::kFail, model.status().ToString());
  v.model = *std::move(model);
  return std::nullopt;
}

InterpreterOptions DelegateOptions(const DelegateCheckSpec& s) {
  InterpreterOptions options;
  options.plugins.paths = {s.plugin};
  if (!s.kernels.empty()) options.plugins.paths.push_back(s.kernels);
  options.plugins.use_default_locations = false;
  options.plugins.max_abi_version = s.cap;
  DelegateRequest request;
  request.name = s.delegate;
  options.delegates.push_back(request);
  return options;
}

// The verdict on an interpreter that could not be created.
DelegateCheckOutcome CreateFailure(const DelegateCheckSpec& s,
                                   const std::string& op,
                                   const std::string& what,
                                   const std::string& message) {
  if (message.find("has no implementation in this Kiln") != std::string::npos) {
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
  return Make(
      Verdict::kFail,
      absl::StrCat("creating an interpreter with delegate '", s.delegate,
                   "' on ", what, " failed (create or partition): ", message));
}

// Creates the interpreter with the delegate applied, or says why the check
// ends here.
std::optional<DelegateCheckOutcome> CreateDelegated(
    const DelegateCheckSpec& s, const std::string& op, const std::string& what,
    const VariantModel& v, std::unique_ptr<Interpreter>& interpreter) {
  absl::StatusOr<std::unique_ptr<Interpreter>> created;
  try {
    created = Interpreter::Create(v.model, DelegateOptions(s));
  } catch (...) {
    return Make(Verdict::kFail,
                absl::StrCat("a C++ exception crossed the delegate's C "
                             "boundary during create/partition (",
                             CurrentExceptionText(), ")"));
  }
  if (!created.ok()) {
    return CreateFailure(s, op, what, std::string(created.status().message()));
  }
  interpreter = *std::move(created);
  for (const std::string& w : interpreter->warnings()) {
    if (w.find(s.delegate) != std::string::npos) {
      return Make(Verdict::kFail,
                  absl::StrCat("the delegate was not applied: ", w));
    }
  }
  return std::nullopt;
}

// What the delegate claimed, and why it left the rest.
struct Claims {
  std::vector<NodeInfo> nodes;
  std::vector<int32_t> claimed;
  std::vector<std::string> declined;
};

Claims DescribeClaims(Interpreter& interpreter) {
  Claims c;
  c.nodes = interpreter.DescribeNodes(0);
  for (const NodeInfo& n : c.nodes) {
    if (n.delegated) {
      c.claimed.push_back(n.index);
    } else {
      const std::string why = interpreter.DelegateDeclineReason(0, n.index);
      c.declined.push_back(absl::StrCat("node ", n.index, " ", n.op, ": ",
                                        why.empty() ? "(no reason)" : why));
    }
  }
  return c;
}

// Judges the claims alone; `out` carries the claim details into a verdict
// given here. Returns nothing when the graph should run.
std::optional<DelegateCheckOutcome> JudgeClaims(const DelegateCheckSpec& s,
                                                const std::string& op,
                                                const std::string& what,
                                                const Claims& c,
                                                DelegateCheckOutcome& out) {
  if (s.outside_declaration) {
    if (!c.claimed.empty()) {
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
    for (int32_t n : c.claimed) {
      if (n == 1) {
        return Make(
            Verdict::kFail,
            absl::StrCat("claimed node 1 (", BuiltinOpName(s.interrupt_op),
                         "), which it does not declare"));
      }
    }
  }
  if (c.claimed.empty()) {
    const bool reasons =
        c.declined.empty() ||
        std::all_of(c.declined.begin(), c.declined.end(),
                    [](const std::string& d) {
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
        ": ", absl::StrJoin(c.declined, "; "));
    return out;
  }
  return std::nullopt;
}

// Allocates, copies the graph's inputs in and invokes.
absl::Status FeedAndInvoke(Interpreter& interpreter,
                           const GeneratedGraph& graph) {
  absl::Status status = interpreter.AllocateTensors();
  for (size_t i = 0; status.ok() && i < graph.inputs.size(); ++i) {
    const GeneratedTensor& t =
        graph.tensors[static_cast<size_t>(graph.inputs[i])];
    TensorState* in = interpreter.input(static_cast<int>(i));
    if (in == nullptr || in->data == nullptr || in->bytes != t.bytes.size()) {
      status = absl::InternalError(absl::StrCat(
          "input ", i, " is not allocated as ", t.bytes.size(), " bytes"));
      break;
    }
    std::memcpy(in->data, t.bytes.data(), t.bytes.size());
  }
  if (status.ok()) status = interpreter.Invoke();
  return status;
}

// Runs the claimed graph, or says why the check ends here.
std::optional<DelegateCheckOutcome> RunDelegated(Interpreter& interpreter,
                                                 const GeneratedGraph& graph,
                                                 const std::string& what,
                                                 const Claims& c) {
  const absl::Status status = FeedAndInvoke(interpreter, graph);
  if (!status.ok()) {
    return Make(Verdict::kFail,
                absl::StrCat("running ", what, " with ", c.claimed.size(),
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
  return std::nullopt;
}

// Compares the outputs of the run with the graph's reference.
DelegateCheckOutcome CompareOutputs(const DelegateCheckSpec& s, bool same_shape,
                                    Interpreter& interpreter,
                                    const std::string& what, const Claims& c,
                                    DelegateCheckOutcome out) {
  const ReferenceLookup lookup = FindReference(s, same_shape);
  const std::string ran =
      absl::StrCat("ran ", what, ": ", c.claimed.size(), " of ", c.nodes.size(),
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

// One variant of the check's graph (see RunDelegateCheck).
DelegateCheckOutcome RunVariant(const DelegateCheckSpec& s, bool same_shape) {
  const std::string op = BuiltinOpName(s.op);
  VariantModel v;
  if (std::optional<DelegateCheckOutcome> o =
          BuildVariantModel(s, same_shape, v)) {
    return *std::move(o);
  }
  const std::string what =
      absl::StrCat(op, " v", s.version, " (", v.graph.key, ", ",
                   v.graph.nodes.size(), " node(s), ", v.graph.family, ")");
  std::unique_ptr<Interpreter> interpreter;
  if (std::optional<DelegateCheckOutcome> o =
          CreateDelegated(s, op, what, v, interpreter)) {
    return *std::move(o);
  }
  const Claims claims = DescribeClaims(*interpreter);
  DelegateCheckOutcome out;
  out.extra["claimed_nodes"] = claims.claimed;
  out.extra["declined"] = claims.declined;
  out.extra["partitions"] = interpreter->Partitions(0).size();
  if (std::optional<DelegateCheckOutcome> o =
          JudgeClaims(s, op, what, claims, out)) {
    return *std::move(o);
  }
  if (std::optional<DelegateCheckOutcome> o =
          RunDelegated(*interpreter, v.graph, what, claims)) {
    return *std::move(o);
  }
  return CompareOutputs(s, same_shape, *interpreter, what, claims,
                        std::move(out));
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
