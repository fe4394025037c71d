#include "case_models.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "model/model_builder.h"
#include "nlohmann/json.hpp"
#include "version_inputs.h"

namespace kiln::conformance {
namespace {

bool In(int32_t op, std::initializer_list<int32_t> set) {
  return std::find(set.begin(), set.end(), op) != set.end();
}

bool Binary(int32_t op) {
  return In(op, {KILN_OP_ADD, KILN_OP_SUB, KILN_OP_MUL, KILN_OP_MAXIMUM,
                 KILN_OP_MINIMUM, KILN_OP_SQUARED_DIFFERENCE});
}

// A tensor of the graph with no data: an intermediate or output, of a
// static shape when `shape` is given (else unknown until prepare).
int32_t AddActivation(GeneratedGraph* g, KilnTensorType type,
                      std::vector<int32_t> shape = {}) {
  GeneratedTensor t;
  t.type = type;
  t.shape = std::move(shape);
  g->tensors.push_back(t);
  return static_cast<int32_t>(g->tensors.size() - 1);
}

}  // namespace

bool Chainable(int32_t op) {
  return Binary(op) ||
         In(op, {KILN_OP_RELU, KILN_OP_RELU6, KILN_OP_RELU_N1_TO_1,
                 KILN_OP_TANH, KILN_OP_LOGISTIC, KILN_OP_ABS, KILN_OP_NEG,
                 KILN_OP_FLOOR, KILN_OP_CEIL, KILN_OP_ELU, KILN_OP_HARD_SWISH,
                 KILN_OP_LEAKY_RELU, KILN_OP_SQUARE, KILN_OP_ROUND});
}

const std::vector<int32_t>& InterruptCandidates() {
  static const std::vector<int32_t> kCandidates = {
      KILN_OP_FLOOR, KILN_OP_NEG, KILN_OP_ABS, KILN_OP_CEIL, KILN_OP_SQUARE};
  return kCandidates;
}

bool HasSameShapeVariant(int32_t op) { return Binary(op); }

namespace {

// Replaces the second operand of a binary float case by one of the first's
// shape: y[i] = 0.5 * x[(i + 1) % n] + 0.25.
absl::Status MakeSameShape(int32_t op, GeneratedCase& c) {
  if (c.tensors[static_cast<size_t>(c.inputs[0])].type != KILN_TYPE_FLOAT32) {
    return absl::NotFoundError("same-shape variants are float only");
  }
  if (!HasSameShapeVariant(op) || c.inputs.size() != 2) {
    return absl::NotFoundError(
        absl::StrCat("no same-shape variant for ", BuiltinOpName(op)));
  }
  const GeneratedTensor& x = c.tensors[static_cast<size_t>(c.inputs[0])];
  GeneratedTensor& y = c.tensors[static_cast<size_t>(c.inputs[1])];
  y.shape = x.shape;
  const size_t n = x.bytes.size() / sizeof(float);
  std::vector<float> xs(n), ys(n);
  std::memcpy(xs.data(), x.bytes.data(), n * sizeof(float));
  for (size_t i = 0; i < n; ++i) ys[i] = 0.5f * xs[(i + 1) % n] + 0.25f;
  y.bytes.resize(n * sizeof(float));
  std::memcpy(y.bytes.data(), ys.data(), n * sizeof(float));
  return absl::OkStatus();
}

// Appends a node of the case's op writing `output`; returns `output`.
int32_t AddOpNode(GeneratedGraph& g, const GeneratedCase& c, int32_t op,
                  int32_t version, std::vector<int32_t> inputs,
                  int32_t output) {
  GeneratedNode n;
  n.builtin_code = op;
  n.version = version;
  n.inputs = std::move(inputs);
  n.outputs = {output};
  n.options = c.options;
  g.nodes.push_back(std::move(n));
  return output;
}

// The nodes of a chain, branch or interrupted graph (see MakeGraph).
absl::Status AddMultiOpNodes(GeneratedGraph& g, const GeneratedCase& c,
                             const std::string& kind, int32_t op,
                             int32_t version, int32_t interrupt_op) {
  if (!Chainable(op)) {
    return absl::NotFoundError(absl::StrCat(
        "no ", kind, " graph for ", BuiltinOpName(op),
        " (multi-op graphs use shape-preserving elementwise ops)"));
  }
  const auto node = [&](std::vector<int32_t> inputs, int32_t output) {
    return AddOpNode(g, c, op, version, std::move(inputs), output);
  };
  // Input 0 is the chained operand; the others (a broadcast operand) are
  // shared by every node.
  std::vector<int32_t> rest(c.inputs.begin() + 1, c.inputs.end());
  const auto with_rest = [&](int32_t first) {
    std::vector<int32_t> in = {first};
    in.insert(in.end(), rest.begin(), rest.end());
    return in;
  };
  const KilnTensorType type = c.tensors[static_cast<size_t>(c.outputs[0])].type;
  // Every tensor has the static shape of x (chainable ops keep it), so a
  // delegate sees shapes at partition time.
  const std::vector<int32_t> shape =
      c.tensors[static_cast<size_t>(c.inputs[0])].shape;
  const auto act = [&] { return AddActivation(&g, type, shape); };
  // The case's own output tensor is reused as the last one.
  const int32_t last = c.outputs[0];
  g.tensors[static_cast<size_t>(last)].shape = shape;
  if (kind == kGraphChain) {
    const int32_t t1 = node(with_rest(c.inputs[0]), act());
    const int32_t t2 = node(with_rest(t1), act());
    g.outputs = {node(with_rest(t2), last)};
  } else if (kind == kGraphBranch) {
    const int32_t a = node(with_rest(c.inputs[0]), act());
    const int32_t b = node(with_rest(c.inputs[0]), act());
    g.outputs = Binary(op) ? std::vector<int32_t>{node({a, b}, last)}
                           : std::vector<int32_t>{node(with_rest(a), last), b};
  } else if (kind == kGraphInterrupted) {
    if (interrupt_op == 0) {
      return absl::InvalidArgumentError("an interrupted graph needs an op");
    }
    const int32_t t1 = node(with_rest(c.inputs[0]), act());
    GeneratedNode u;
    u.builtin_code = interrupt_op;
    u.inputs = {t1};
    u.outputs = {act()};
    g.nodes.push_back(u);
    g.outputs = {node(with_rest(u.outputs[0]), last)};
    absl::StrAppend(&g.key, ".", BuiltinOpName(interrupt_op));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown graph kind '", kind, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GeneratedGraph> MakeGraph(const std::string& kind, int32_t op,
                                         int32_t version, uint64_t seed,
                                         int32_t interrupt_op,
                                         bool same_shape) {
  // The same-shape variant is made from the float case, then converted to
  // the version's inputs like the broadcasting one.
  absl::StatusOr<GeneratedCase> c =
      GenerateCase(op, seed, same_shape ? 1 : version);
  if (!c.ok()) return c.status();
  if (same_shape) {
    absl::Status s = MakeSameShape(op, *c);
    if (!s.ok()) return s;
    ApplyVersionInputs(op, version, &*c);
  }
  GeneratedGraph g;
  g.family = c->family;
  g.tensors = c->tensors;
  for (int32_t i : c->inputs) {
    if (i >= 0 && !c->tensors[static_cast<size_t>(i)].constant) {
      g.inputs.push_back(i);
    }
  }
  g.key = absl::StrCat(BuiltinOpName(op), ".v", version, ".", kind);
  if (kind == kGraphSingle) {
    GeneratedNode n;
    n.builtin_code = op;
    n.version = version;
    n.inputs = c->inputs;
    n.outputs = c->outputs;
    n.options = c->options;
    g.nodes.push_back(std::move(n));
    g.outputs = c->outputs;
  } else {
    absl::Status s = AddMultiOpNodes(g, *c, kind, op, version, interrupt_op);
    if (!s.ok()) return s;
  }
  if (same_shape) {
    absl::StrAppend(&g.key, ".same_shape");
    g.family += " (same-shape variant)";
  }
  absl::StrAppend(&g.key, ".s", seed);
  return g;
}

namespace {

// `t` (rank 2, dense bytes) as TFLite sparse data: rows DENSE, columns
// SPARSE_CSR over the elements with a non-zero byte; returns the values the
// traversal reaches.
std::vector<uint8_t> SparseCsr(const GeneratedTensor& t, SparsitySpec* spec) {
  const size_t rows = static_cast<size_t>(t.shape.at(0));
  const size_t cols = static_cast<size_t>(t.shape.at(1));
  const size_t element = t.bytes.size() / (rows * cols);
  SparsitySpec::Level dense, csr;
  dense.dense_size = static_cast<int32_t>(rows);
  csr.compressed = true;
  csr.segments.push_back(0);
  std::vector<uint8_t> values;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const uint8_t* e = t.bytes.data() + (r * cols + c) * element;
      if (std::all_of(e, e + element, [](uint8_t b) { return b == 0; })) {
        continue;
      }
      csr.indices.push_back(static_cast<int32_t>(c));
      values.insert(values.end(), e, e + element);
    }
    csr.segments.push_back(static_cast<int32_t>(csr.indices.size()));
  }
  spec->traversal_order = {0, 1};
  spec->levels = {dense, csr};
  return values;
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> BuildGraphModel(const GeneratedGraph& g) {
  ModelBuilder builder;
  SubgraphBuilder& main = builder.AddSubgraph("main");
  std::vector<int32_t> index;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const GeneratedTensor& t = g.tensors[i];
    TensorSpec spec;
    spec.name = absl::StrCat("t", i);
    spec.type = t.type;
    spec.quantization = t.quantization;
    if (t.constant) {
      spec.shape = t.shape;
      const std::vector<uint8_t> data =
          t.sparse_csr ? SparseCsr(t, &spec.sparsity) : t.bytes;
      index.push_back(main.AddConstantTensor(spec, data.data(), data.size()));
      continue;
    }
    if (!t.bytes.empty() || !t.shape.empty()) {
      spec.shape = t.shape;
    } else {
      spec.has_rank = false;  // an activation: the op's prepare shapes it
    }
    index.push_back(main.AddTensor(spec));
  }
  const auto map = [&](const std::vector<int32_t>& in) {
    std::vector<int32_t> out;
    for (int32_t i : in)
      out.push_back(i < 0 ? -1 : index[static_cast<size_t>(i)]);
    return out;
  };
  for (const GeneratedNode& n : g.nodes) {
    main.AddOperator(n.builtin_code, n.version, map(n.inputs), map(n.outputs),
                     n.options);
  }
  main.SetInputs(map(g.inputs));
  main.SetOutputs(map(g.outputs));
  return builder.Build();
}

namespace {

template <typename T>
nlohmann::json Numbers(const std::vector<uint8_t>& bytes) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i + sizeof(T) <= bytes.size(); i += sizeof(T)) {
    T v;
    std::memcpy(&v, bytes.data() + i, sizeof(T));
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<nlohmann::json> TensorValues(const GeneratedTensor& t) {
  switch (t.type) {
    case KILN_TYPE_FLOAT32:
      return Numbers<float>(t.bytes);
    case KILN_TYPE_INT32:
      return Numbers<int32_t>(t.bytes);
    case KILN_TYPE_INT64:
      return Numbers<int64_t>(t.bytes);
    case KILN_TYPE_INT16:
      return Numbers<int16_t>(t.bytes);
    case KILN_TYPE_INT8:
      return Numbers<int8_t>(t.bytes);
    case KILN_TYPE_UINT8:
    case KILN_TYPE_BOOL:
      return Numbers<uint8_t>(t.bytes);
    default:
      return absl::UnimplementedError(
          absl::StrCat("inputs of type ", TypeName(t.type)));
  }
}

absl::Status WriteBytes(const std::string& path, const void* data,
                        size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// The whole graph, for drivers of hosts that cannot read a model file
// (conformance/releases/release_kernel_driver.cc): tensors with their type
// code, shape, bytes and quantization; nodes with op code, version,
// operands and options.
nlohmann::json GraphJson(const GeneratedGraph& g) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const GeneratedTensor& t : g.tensors) {
    tensors.push_back(
        {{"type", static_cast<int32_t>(t.type)},
         {"shape", t.shape},
         {"constant", t.constant},
         {"bytes", t.bytes},
         {"scales", t.quantization.scales},
         {"zero_points", t.quantization.zero_points},
         {"quantized_dimension", t.quantization.quantized_dimension}});
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (const GeneratedNode& n : g.nodes) {
    nlohmann::json options = nlohmann::json::array();
    for (const auto& [key, o] : n.options) {
      switch (o.kind) {
        case OptionValue::Kind::kInt:
          options.push_back({{"key", key}, {"kind", "int"}, {"value", o.i}});
          break;
        case OptionValue::Kind::kFloat:
          options.push_back({{"key", key}, {"kind", "float"}, {"value", o.f}});
          break;
        case OptionValue::Kind::kIntArray:
          options.push_back(
              {{"key", key}, {"kind", "ints"}, {"value", o.array}});
          break;
        case OptionValue::Kind::kString:  // host-private, never a plugin's
          break;
      }
    }
    nodes.push_back({{"op", n.builtin_code},
                     {"version", n.version},
                     {"inputs", n.inputs},
                     {"outputs", n.outputs},
                     {"options", options}});
  }
  return {{"tensors", tensors},
          {"nodes", nodes},
          {"inputs", g.inputs},
          {"outputs", g.outputs}};
}

absl::Status WriteGraph(const std::string& dir, const GeneratedGraph& g) {
  absl::StatusOr<std::vector<uint8_t>> bytes = BuildGraphModel(g);
  if (!bytes.ok()) return bytes.status();
  nlohmann::json inputs = nlohmann::json::array();
  for (int32_t i : g.inputs) {
    const GeneratedTensor& t = g.tensors[static_cast<size_t>(i)];
    absl::StatusOr<nlohmann::json> values = TensorValues(t);
    if (!values.ok()) return values.status();
    inputs.push_back(
        {{"type", TypeName(t.type)}, {"shape", t.shape}, {"values", *values}});
  }
  const nlohmann::json meta = {{"key", g.key},
                               {"model_hash", GraphHash(g)},
                               {"family", g.family},
                               {"inputs", inputs},
                               {"graph", GraphJson(g)}};
  const std::string text = meta.dump();
  if (absl::Status s = WriteBytes(absl::StrCat(dir, "/", g.key, ".tflite"),
                                  bytes->data(), bytes->size());
      !s.ok()) {
    return s;
  }
  return WriteBytes(absl::StrCat(dir, "/", g.key, ".json"), text.data(),
                    text.size());
}

}  // namespace

absl::StatusOr<int> WriteCaseModels(const std::string& dir, uint64_t seed) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  int written = 0;
  int32_t version = 1;
  const auto write = [&](const std::string& kind, int32_t op, int32_t u,
                         bool same_shape) -> absl::Status {
    absl::StatusOr<GeneratedGraph> g =
        MakeGraph(kind, op, version, seed, u, same_shape);
    if (!g.ok()) return absl::OkStatus();  // no such graph
    absl::Status s = WriteGraph(dir, *g);
    if (s.code() == absl::StatusCode::kUnimplemented) return absl::OkStatus();
    if (s.ok()) ++written;
    return s;
  };
  for (int32_t op = 0; op <= KILN_OP_STABLEHLO_CASE; ++op) {
    if (op == KILN_OP_CUSTOM) continue;
    // Version-true inputs beyond version 1: single-op models (and their
    // same-shape variants, for delegates that do not broadcast) only.
    for (int32_t v : InputVersions(op)) {
      if (v == 1) continue;
      version = v;
      for (bool same_shape : {false, true}) {
        if (same_shape && !HasSameShapeVariant(op)) continue;
        if (absl::Status s = write(kGraphSingle, op, 0, same_shape); !s.ok()) {
          return s;
        }
      }
    }
    version = 1;
    for (bool same_shape : {false, true}) {
      if (same_shape && !HasSameShapeVariant(op)) continue;
      for (const char* kind : {kGraphSingle, kGraphChain, kGraphBranch}) {
        if (absl::Status s = write(kind, op, 0, same_shape); !s.ok()) return s;
      }
      if (!Chainable(op)) continue;
      for (int32_t u : InterruptCandidates()) {
        if (u == op) continue;
        if (absl::Status s = write(kGraphInterrupted, op, u, same_shape);
            !s.ok()) {
          return s;
        }
      }
    }
  }
  return written;
}

absl::StatusOr<Reference> FindGraphReference(const std::string& dir,
                                             const GeneratedGraph& g) {
  if (dir.empty()) return absl::NotFoundError("no reference directory");
  absl::StatusOr<Reference> r = LoadReference(dir, g.key);
  if (!r.ok()) return r.status();
  if (r->model_hash != GraphHash(g)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the reference ", r->path, " was computed for other content (hash ",
        r->model_hash, ", this case ", GraphHash(g),
        "): stale; regenerate with "
        "conformance/references/generate_references.py"));
  }
  return r;
}

std::string GraphHash(const GeneratedGraph& g) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto bytes = [&h](const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < size; ++i) {
      h ^= p[i];
      h *= 0x100000001b3ull;
    }
  };
  const auto i64 = [&](int64_t v) { bytes(&v, sizeof(v)); };
  const auto ints = [&](const std::vector<int32_t>& v) {
    i64(static_cast<int64_t>(v.size()));
    for (int32_t x : v) i64(x);
  };
  i64(static_cast<int64_t>(g.tensors.size()));
  for (const GeneratedTensor& t : g.tensors) {
    i64(t.type);
    ints(t.shape);
    i64(t.constant ? 1 : 0);
    i64(static_cast<int64_t>(t.bytes.size()));
    bytes(t.bytes.data(), t.bytes.size());
    i64(static_cast<int64_t>(t.quantization.scales.size()));
    for (float s : t.quantization.scales) bytes(&s, sizeof(s));
    for (int64_t z : t.quantization.zero_points) i64(z);
    if (t.sparse_csr) i64(0x435352);  // "CSR": only sparse cases change
  }
  i64(static_cast<int64_t>(g.nodes.size()));
  for (const GeneratedNode& n : g.nodes) {
    i64(n.builtin_code);
    i64(n.version);
    ints(n.inputs);
    ints(n.outputs);
    i64(static_cast<int64_t>(n.options.size()));
    for (const auto& [key, value] : n.options) {
      i64(key);
      i64(static_cast<int64_t>(value.kind));
      i64(value.i);
      bytes(&value.f, sizeof(value.f));
      ints(value.array);
      bytes(value.s.data(), value.s.size());
    }
  }
  ints(g.inputs);
  ints(g.outputs);
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx",
                static_cast<unsigned long long>(h));
  return out;
}

}  // namespace kiln::conformance
