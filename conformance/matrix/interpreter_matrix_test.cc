// The extension API matrix through the full interpreter (model parsing,
// plugin search and negotiation, delegation, memory planning, invoke), at
// every extension API level this host serves (ServedAbiLevels(): a new
// minor level appears as a new column by itself):
//   - builtin ops of Kiln's CPU plugin, float and version-true (quantized,
//     hybrid, rank-5, ...) cases, outputs compared with LiteRT's references
//     (conformance/references/golden);
//   - the matrix plugins' custom op (matrix_plugin.c, one build per row,
//     including the next major, refused at every level), outputs compared
//     with hand-computed values;
//   - a delegate row: the SDK example delegate (acme) with the CPU plugin for
//     what it leaves, outputs compared with LiteRT's references.
// Older hosts are the current host capped (plugins.max_abi_version); the
// real released hosts run in conformance.release_host.*.
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "case_models.h"
#include "conformance_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "model/model.h"
#include "model/model_builder.h"
#include "references.h"
#include "runtime/host_api.h"
#include "runtime/single_node_runner.h"

namespace kiln::conformance {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t V(uint32_t minor) { return KILN_MAKE_VERSION(1, minor, 0); }

enum class Outcome { kMatches, kRefused, kFails };

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kMatches:
      return "RUNS, matches";
    case Outcome::kRefused:
      return "REFUSED";
    case Outcome::kFails:
      return "FAILS";
  }
  return "?";
}

struct Cell {
  Outcome outcome = Outcome::kFails;
  std::string message;
};

// One interpreter over `model` with the plugins at `paths`, capped at
// `level`, the delegate `delegate` requested when not empty; feeds
// `inputs` (bytes per model input) and invokes. `check` judges the outputs
// ("" when right).
Cell RunModel(const std::vector<uint8_t>& model_bytes,
              const std::vector<std::string>& paths, uint32_t level,
              const std::string& delegate,
              const std::vector<std::vector<uint8_t>>& inputs,
              const std::function<std::string(Interpreter&)>& check) {
  Cell cell;
  absl::StatusOr<std::shared_ptr<const Model>> model =
      Model::FromBuffer(model_bytes.data(), model_bytes.size(), "matrix");
  if (!model.ok()) {
    cell.message = model.status().ToString();
    return cell;
  }
  InterpreterOptions options;
  options.plugins.paths = paths;
  options.plugins.use_default_locations = false;
  options.plugins.max_abi_version = level;
  if (!delegate.empty()) {
    DelegateRequest request;
    request.name = delegate;
    options.delegates.push_back(request);
  }
  absl::StatusOr<std::unique_ptr<Interpreter>> interpreter =
      Interpreter::Create(*model, options);
  if (!interpreter.ok()) {
    cell.outcome = Outcome::kRefused;
    cell.message = std::string(interpreter.status().message());
    return cell;
  }
  Interpreter& in = **interpreter;
  for (const std::string& w : in.warnings()) {
    if (!delegate.empty() && w.find(delegate) != std::string::npos) {
      cell.outcome = Outcome::kRefused;
      cell.message = w;
      return cell;
    }
  }
  absl::Status status = in.AllocateTensors();
  for (size_t i = 0; status.ok() && i < inputs.size(); ++i) {
    TensorState* t = in.input(static_cast<int>(i));
    if (t == nullptr || t->bytes != inputs[i].size()) {
      status = absl::InternalError("input size mismatch");
      break;
    }
    std::memcpy(t->data, inputs[i].data(), inputs[i].size());
  }
  if (status.ok()) status = in.Invoke();
  if (!status.ok()) {
    cell.message = std::string(status.message());
    return cell;
  }
  cell.message = check(in);
  if (cell.message.empty()) cell.outcome = Outcome::kMatches;
  return cell;
}

std::string CpuPlugin() {
  return std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so";
}

// ---- Builtin ops (and the delegate row): generated graphs vs LiteRT ----

struct GraphRow {
  const char* label;
  int32_t op;
  int32_t version;
  const char* graph;  // kGraphSingle, kGraphChain, ...
  int32_t interrupt = 0;
  bool same_shape = false;  // no broadcast (the acme delegate needs that)
};

const GraphRow kBuiltinRows[] = {
    {"ADD v1 float, broadcast", KILN_OP_ADD, 1, kGraphSingle},
    {"ADD v1 chain of 3", KILN_OP_ADD, 1, kGraphChain},
    {"ADD v2 int8", KILN_OP_ADD, 2, kGraphSingle},
    {"SUB v3 rank-5 broadcast", KILN_OP_SUB, 3, kGraphSingle},
    {"CONV_2D v1 float", KILN_OP_CONV_2D, 1, kGraphSingle},
    {"CONV_2D v2 hybrid", KILN_OP_CONV_2D, 2, kGraphSingle},
    {"CONV_2D v3 int8 per-channel", KILN_OP_CONV_2D, 3, kGraphSingle},
    {"DEPTHWISE_CONV_2D v2 dilation", KILN_OP_DEPTHWISE_CONV_2D, 2,
     kGraphSingle},
    {"FULLY_CONNECTED v4 int8", KILN_OP_FULLY_CONNECTED, 4, kGraphSingle},
    {"SOFTMAX v2 int8", KILN_OP_SOFTMAX, 2, kGraphSingle},
    {"LOGISTIC v2 int8", KILN_OP_LOGISTIC, 2, kGraphSingle},
    {"TANH v1 float", KILN_OP_TANH, 1, kGraphSingle},
    {"MEAN v2 int8", KILN_OP_MEAN, 2, kGraphSingle},
    {"PAD v4 rank 5", KILN_OP_PAD, 4, kGraphSingle},
    {"QUANTIZE v1", KILN_OP_QUANTIZE, 1, kGraphSingle},
    {"DEQUANTIZE v2 int8", KILN_OP_DEQUANTIZE, 2, kGraphSingle},
};

const GraphRow kDelegateRows[] = {
    {"acme: ADD v1", KILN_OP_ADD, 1, kGraphSingle, 0, true},
    {"acme: MUL v1", KILN_OP_MUL, 1, kGraphSingle, 0, true},
    {"acme: ADD chain", KILN_OP_ADD, 1, kGraphChain, 0, true},
    {"acme: ADD->FLOOR->ADD", KILN_OP_ADD, 1, kGraphInterrupted, KILN_OP_FLOOR,
     true},
};

bool Quantized(const GeneratedGraph& g) {
  for (const GeneratedTensor& t : g.tensors) {
    if (t.quantization.quantized()) return true;
  }
  return false;
}

// Runs row `r` at `level` and compares with its LiteRT reference.
Cell RunGraphRow(const GraphRow& r, uint32_t level,
                 const std::vector<std::string>& paths,
                 const std::string& delegate, GeneratedGraph* graph_out) {
  absl::StatusOr<GeneratedGraph> g =
      MakeGraph(r.graph, r.op, r.version, 1, r.interrupt, r.same_shape);
  if (!g.ok()) return Cell{Outcome::kFails, g.status().ToString()};
  *graph_out = *g;
  absl::StatusOr<Reference> ref =
      FindGraphReference(DefaultReferenceDirectory(), *g);
  if (!ref.ok()) {
    return Cell{Outcome::kFails,
                absl::StrCat("no reference: ", ref.status().message())};
  }
  absl::StatusOr<std::vector<uint8_t>> bytes = BuildGraphModel(*g);
  if (!bytes.ok()) return Cell{Outcome::kFails, bytes.status().ToString()};
  std::vector<std::vector<uint8_t>> inputs;
  for (int32_t i : g->inputs) {
    inputs.push_back(g->tensors[static_cast<size_t>(i)].bytes);
  }
  return RunModel(*bytes, paths, level, delegate, inputs, [&](Interpreter& in) {
    if (!delegate.empty()) {
      bool claimed = false;
      std::string declined;
      for (const NodeInfo& n : in.DescribeNodes(0)) {
        claimed = claimed || n.delegated;
        absl::StrAppend(&declined, " ", n.op, ": ",
                        in.DelegateDeclineReason(0, n.index));
      }
      if (!claimed) {
        return absl::StrCat("the delegate claimed no node;", declined);
      }
    }
    if (static_cast<size_t>(in.num_outputs()) != ref->outputs.size()) {
      return std::string("output count differs from the reference");
    }
    for (int i = 0; i < in.num_outputs(); ++i) {
      const TensorState* t = in.output(i);
      const std::string diff =
          CompareWithReference(t->ElementType(), t->shape, t->data, t->bytes,
                               ref->outputs[static_cast<size_t>(i)],
                               ref->abs_tolerance, ref->rel_tolerance);
      if (!diff.empty()) return absl::StrCat("output ", i, ": ", diff);
    }
    return std::string();
  });
}

// ---- The matrix plugins' custom op, hand-computed ------------------------

constexpr char kOpName[] = "KilnMatrixDequantize";
constexpr float kScale = 0.25f;
constexpr int32_t kZeroPoint = -3;
const std::vector<int8_t> kInput = {-128, -3, 0, 1, 7, 42, 100, 127};

std::vector<uint8_t> CustomOpModel() {
  ModelBuilder builder;
  SubgraphBuilder& main = builder.AddSubgraph("main");
  TensorSpec x;
  x.name = "q";
  x.type = KILN_TYPE_INT8;
  x.shape = {2, 4};
  x.quantization.scales = {kScale};
  x.quantization.zero_points = {kZeroPoint};
  TensorSpec y;
  y.name = "y";
  y.type = KILN_TYPE_FLOAT32;
  y.has_rank = false;
  const int32_t in = main.AddTensor(x), out = main.AddTensor(y);
  std::vector<uint8_t> options(8);
  std::memcpy(options.data(), &kScale, 4);
  std::memcpy(options.data() + 4, &kZeroPoint, 4);
  main.AddCustomOperator(kOpName, 1, {in}, {out}, options);
  main.SetInputs({in});
  main.SetOutputs({out});
  absl::StatusOr<std::vector<uint8_t>> bytes = builder.Build();
  return bytes.ok() ? *bytes : std::vector<uint8_t>();
}

struct CustomRow {
  const char* file;
  const char* label;
  // The verdict at `level` (the expected matrix; README section 1).
  Outcome (*expected)(uint32_t level);
  const char* reason;  // in the message unless it runs
};

const CustomRow kCustomRows[] = {
    {"libkiln_matrix_abi10.so", "custom op, frozen 1.0 headers",
     [](uint32_t) { return Outcome::kMatches; }, ""},
    {"libkiln_matrix_abi11_plain.so", "custom op, 1.1 headers, plain",
     [](uint32_t) { return Outcome::kMatches; }, ""},
    {"libkiln_matrix_abi11_needs_quant.so", "custom op, min_host 1.1",
     [](uint32_t l) {
       return l < V(1) ? Outcome::kRefused : Outcome::kMatches;
     },
     "requires a host serving extension API 1.1 or newer"},
    {"libkiln_matrix_abi11_optional_quant.so",
     "custom op, tensor_quantization optional",
     [](uint32_t l) { return l < V(1) ? Outcome::kFails : Outcome::kMatches; },
     "tensor_quantization"},
    {"libkiln_matrix_abi11_fallback_quant.so", "custom op, falls back",
     [](uint32_t) { return Outcome::kMatches; }, ""},
    {"libkiln_matrix_abi20_next_major.so", "next major (2.0)",
     [](uint32_t) { return Outcome::kRefused; },
     "a newer major version than this host serves"},
};

Cell RunCustomRow(const CustomRow& r, uint32_t level) {
  std::vector<uint8_t> input(kInput.size());
  std::memcpy(input.data(), kInput.data(), input.size());
  return RunModel(
      CustomOpModel(),
      {std::string(KILN_CONFORMANCE_MATRIX_PLUGIN_DIR) + "/" + r.file}, level,
      "", {input}, [](Interpreter& in) {
        const TensorState* t = in.output(0);
        std::vector<float> got(t->bytes / sizeof(float));
        std::memcpy(got.data(), t->data, got.size() * sizeof(float));
        for (size_t i = 0; i < kInput.size(); ++i) {
          const float want =
              kScale * static_cast<float>(int32_t{kInput[i]} - kZeroPoint);
          if (i >= got.size() || got[i] != want) {
            return absl::StrCat("element ", i, ": want ", want);
          }
        }
        return std::string();
      });
}

// ---- The matrix ---------------------------------------------------------

class Table {
 public:
  explicit Table(const std::vector<uint32_t>& levels) {
    text_ << std::left << std::setw(40) << "row \\ host (capped)";
    for (uint32_t l : levels)
      text_ << " | " << std::setw(34) << AbiLevelName(l);
    text_ << "\n";
  }
  void Row(const std::string& label) { text_ << std::setw(40) << label; }
  void Add(const Cell& c) {
    std::string s = OutcomeName(c.outcome);
    // Why, in a word or two.
    for (const auto& [needle, why] :
         {std::pair<const char*, const char*>{"tensor_quantization",
                                              "needs 1.1 quantization"},
          {"newer major", "next major"},
          {"requires a host serving", "min_host"}}) {
      if (c.outcome != Outcome::kMatches &&
          c.message.find(needle) != std::string::npos) {
        s = s + " (" + why + ")";
        break;
      }
    }
    text_ << " | " << std::setw(34) << s;
  }
  void End() { text_ << "\n"; }
  std::string str() const { return text_.str(); }

 private:
  std::ostringstream text_;
};

TEST(InterpreterMatrixTest, EveryRowAtEveryServedLevel) {
  const std::vector<uint32_t> levels = ServedAbiLevels();
  ASSERT_GE(levels.size(), 3u);  // 1.0, 1.1, 1.2, ... as the host serves
  Table table(levels);
  for (const GraphRow& r : kBuiltinRows) {
    table.Row(r.label);
    for (uint32_t level : levels) {
      SCOPED_TRACE(absl::StrCat(r.label, " at ", AbiLevelName(level)));
      GeneratedGraph g;
      const Cell c = RunGraphRow(r, level, {CpuPlugin()}, "", &g);
      table.Add(c);
      // Below 1.1 a kernel cannot read quantization (tensor_quantization is
      // 1.1): the CPU plugin refuses quantized tensors there, naming it.
      if (Quantized(g) && level < V(1)) {
        EXPECT_EQ(c.outcome, Outcome::kFails) << c.message;
        EXPECT_THAT(c.message, HasSubstr("tensor_quantization"));
      } else {
        EXPECT_EQ(c.outcome, Outcome::kMatches) << c.message;
      }
    }
    table.End();
  }
  // The delegate row: from the level its plugin requires, it claims nodes
  // and the outputs match; below, the plugin is refused.
  const std::string acme =
      std::string(KILN_CONFORMANCE_BAD_PLUGIN_DIR) + "/libacme_delegate.so";
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin =
      LoadPluginForTest(acme);
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  const uint32_t min_host = (*plugin)->descriptor()->min_host_abi_version;
  for (const GraphRow& r : kDelegateRows) {
    table.Row(r.label);
    for (uint32_t level : levels) {
      SCOPED_TRACE(absl::StrCat(r.label, " at ", AbiLevelName(level)));
      GeneratedGraph g;
      const Cell c = RunGraphRow(r, level, {acme, CpuPlugin()}, "acme", &g);
      table.Add(c);
      EXPECT_EQ(c.outcome,
                level < min_host ? Outcome::kRefused : Outcome::kMatches)
          << c.message;
    }
    table.End();
  }
  for (const CustomRow& r : kCustomRows) {
    table.Row(r.label);
    for (uint32_t level : levels) {
      SCOPED_TRACE(absl::StrCat(r.file, " at ", AbiLevelName(level)));
      const Cell c = RunCustomRow(r, level);
      table.Add(c);
      EXPECT_EQ(OutcomeName(c.outcome),
                std::string(OutcomeName(r.expected(level))))
          << c.message;
      if (c.outcome != Outcome::kMatches) {
        EXPECT_THAT(c.message, HasSubstr(r.reason));
      }
    }
    table.End();
  }
  std::cout << "\nExtension API matrix through the interpreter (outputs "
               "compared with LiteRT references / hand-computed values):\n"
            << table.str() << std::endl;
}

}  // namespace
}  // namespace kiln::conformance
