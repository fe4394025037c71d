// Kiln's performance benchmarks (Google Benchmark).
//
//   BM_DispatchOverhead/<N>     Invoke of a chain of N (1, 1000) ADD nodes
//                               on [1] float32 tensors; counter ns_per_node.
//   BM_ModelOpen/<MiB>          Model::FromFile (mmap + verify) of a model
//   BM_ModelOpenExternal/<MiB>  with <MiB> of FULLY_CONNECTED weights, in the
//                               FlatBuffer or after it (external data).
//   BM_InvokeExampleCnn         Invoke latency of the example CNN.
//   BM_InvokeMobilenetLike      Invoke latency of
//                               ../shared/models/misc/mobilenet_like_model.bin
//                               (skipped with an error when absent).
//   BM_AlternateShapes{Fixed,Cached,Uncached}/<case>
//                               A dynamic-shape corpus model run at two
//                               input shapes A and B: cases 0-2 the
//                               converter's transformer_block, mobilenet_v2
//                               and unet_small (float32) at batch 1 and 2;
//                               case 3 tflite-testdata/dynamic_shapes.bin
//                               with y of 90 and 30 rows. One iteration
//                               runs A then B. Fixed: two interpreters, one
//                               per shape, invoke only. Cached / Uncached:
//                               one interpreter, resize + AllocateTensors +
//                               invoke per shape, plan cache on (4 plans) /
//                               off. Every variant copies the same input
//                               bytes before each invoke. Counters: hits,
//                               misses (per iteration), plan_cache_bytes.
// Every invoke benchmark reports arena_bytes (Interpreter::arena_bytes()).
//
// Generated models are written once per process, on first use, to the
// directory given by --kiln_model_dir=DIR (or $KILN_BENCH_MODEL_DIR); files
// there are kept so other tools (tools/bench/compare_with_litert.py) can load
// the very same files. Without either, a temporary directory is used and
// removed at exit. Names: dispatch_add_<N>.tflite, example_cnn.tflite,
// large_<MiB>mib.tflite, large_<MiB>mib_external.tflite.
//
// Kernels come from the default plugin locations (in the build tree:
// <build>/lib/kiln/plugins).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "interpreter/interpreter.h"
#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_extension.h"
#include "model/example_models.h"
#include "model/model.h"
#include "model/model_builder.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// Where generated models go. Set once in main before any benchmark runs.
struct ModelDirectory {
  std::string path;
  bool remove_at_exit = false;
};
ModelDirectory& GetModelDirectory() {
  static ModelDirectory dir;
  return dir;
}

// Writes a model built by `build` to `name` in the model directory, once per
// process. Returns the path, or the builder's / writer's error.
absl::StatusOr<std::string> GeneratedModel(
    const std::string& name,
    absl::StatusOr<std::vector<uint8_t>> (*build)(uint64_t, bool),
    uint64_t arg0 = 0, bool arg1 = false) {
  static std::mutex mu;
  static std::map<std::string, absl::StatusOr<std::string>> written;
  std::lock_guard<std::mutex> lock(mu);
  auto it = written.find(name);
  if (it != written.end()) return it->second;
  const std::string path = (fs::path(GetModelDirectory().path) / name).string();
  absl::StatusOr<std::string> result = path;
  absl::StatusOr<std::vector<uint8_t>> bytes = build(arg0, arg1);
  if (!bytes.ok()) {
    result = absl::Status(bytes.status().code(),
                          absl::StrCat("building benchmark model ", path, ": ",
                                       bytes.status().message()));
  } else if (absl::Status s = WriteModelFile(path, *bytes); !s.ok()) {
    result = s;
  }
  written.emplace(name, result);
  return result;
}

// x [1] -> t1 = x + x -> t2 = t1 + x -> ... -> tN "y" [1]: a chain of
// `num_nodes` ADD v1 nodes whose kernels do almost no work, so Invoke time
// is dispatch.
absl::StatusOr<std::vector<uint8_t>> BuildDispatchModel(uint64_t num_nodes,
                                                        bool) {
  const int kDispatchNodes = static_cast<int>(num_nodes);
  ModelBuilder builder;
  builder.SetDescription(absl::StrCat("Kiln dispatch benchmark: ", num_nodes,
                                      " ADD nodes on [1]"));
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1}));
  int32_t previous = x;
  for (int i = 1; i <= kDispatchNodes; ++i) {
    const int32_t t = g.AddTensor(
        FloatTensor(i == kDispatchNodes ? "y" : absl::StrCat("t", i), {1}));
    g.AddOperator(
        KILN_OP_ADD, 1, {previous, x}, {t},
        {{KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_NONE)}});
    previous = t;
  }
  g.SetInputs({x});
  g.SetOutputs({previous});
  return builder.Build();
}

absl::StatusOr<std::vector<uint8_t>> BuildExampleCnn(uint64_t, bool) {
  return BuildExampleCnnModel();
}

absl::StatusOr<std::vector<uint8_t>> BuildLargeWeights(uint64_t mib,
                                                       bool external) {
  return BuildLargeWeightsModel(mib << 20, external);
}

// Opens `path`, creates an interpreter with default plugin locations,
// allocates, and fills float inputs with a fixed pattern (other types: 0).
absl::StatusOr<std::unique_ptr<Interpreter>> ReadyInterpreter(
    const std::string& path) {
  absl::StatusOr<std::shared_ptr<const Model>> model = Model::FromFile(path);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::unique_ptr<Interpreter>> interpreter =
      Interpreter::Create(*model, InterpreterOptions{});
  if (!interpreter.ok()) return interpreter.status();
  if (absl::Status s = (*interpreter)->AllocateTensors(); !s.ok()) return s;
  for (int i = 0; i < (*interpreter)->num_inputs(); ++i) {
    TensorState* t = (*interpreter)->input(i);
    if (t == nullptr || t->data == nullptr) continue;
    if (t->desc->type == KILN_TYPE_FLOAT32) {
      float* values = static_cast<float*>(t->data);
      for (int64_t k = 0; k < t->NumElements(); ++k) {
        values[k] = static_cast<float>(k % 17) / 17.0f;
      }
    } else {
      std::memset(t->data, 0, t->bytes);
    }
  }
  return interpreter;
}

// Times Invoke of the model at `path`; reports arena_bytes. Returns the
// total nanoseconds spent in the timed loop (0 when skipped).
double RunInvokeBenchmark(benchmark::State& state,
                          const absl::StatusOr<std::string>& path) {
  if (!path.ok()) {
    state.SkipWithError(std::string(path.status().message()).c_str());
    return 0;
  }
  absl::StatusOr<std::unique_ptr<Interpreter>> interpreter =
      ReadyInterpreter(*path);
  if (!interpreter.ok()) {
    state.SkipWithError(std::string(interpreter.status().message()).c_str());
    return 0;
  }
  Interpreter& interp = **interpreter;
  // One untimed run: first-invoke work (lazy preparation) is not latency.
  if (absl::Status s = interp.Invoke(); !s.ok()) {
    state.SkipWithError(std::string(s.message()).c_str());
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    absl::Status s = interp.Invoke();
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return 0;
    }
  }
  const double elapsed_ns = std::chrono::duration<double, std::nano>(
                                std::chrono::steady_clock::now() - start)
                                .count();
  state.counters["arena_bytes"] =
      benchmark::Counter(static_cast<double>(interp.arena_bytes()));
  return elapsed_ns;
}

// Arg: number of ADD nodes. ns_per_node = invoke time / nodes (includes the
// fixed per-invoke cost; compare /1 and /1000 for the marginal cost).
void BM_DispatchOverhead(benchmark::State& state) {
  const int64_t num_nodes = state.range(0);
  const double elapsed_ns = RunInvokeBenchmark(
      state,
      GeneratedModel(absl::StrCat("dispatch_add_", num_nodes, ".tflite"),
                     BuildDispatchModel, static_cast<uint64_t>(num_nodes)));
  if (elapsed_ns <= 0 || state.iterations() == 0) return;
  state.counters["nodes"] = benchmark::Counter(static_cast<double>(num_nodes));
  state.counters["ns_per_node"] =
      benchmark::Counter(elapsed_ns / (static_cast<double>(state.iterations()) *
                                       static_cast<double>(num_nodes)));
}
BENCHMARK(BM_DispatchOverhead)
    ->Arg(1)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);

void BM_InvokeExampleCnn(benchmark::State& state) {
  RunInvokeBenchmark(state,
                     GeneratedModel("example_cnn.tflite", BuildExampleCnn));
}
BENCHMARK(BM_InvokeExampleCnn)->Unit(benchmark::kMicrosecond);

void BM_InvokeMobilenetLike(benchmark::State& state) {
  const std::string path = std::string(KILN_BENCH_SHARED_MODELS_DIR) +
                           "/misc/mobilenet_like_model.bin";
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    state.SkipWithError(
        absl::StrCat(path, " absent (the shared model corpus is not here)")
            .c_str());
    return;
  }
  RunInvokeBenchmark(state, path);
}
BENCHMARK(BM_InvokeMobilenetLike)->Unit(benchmark::kMicrosecond);

// ---- Plan cache: one model alternating between two input shapes ----

struct ShapeSwitchCase {
  const char* model;                       // relative to the shared corpus
  std::vector<std::vector<int32_t>> a, b;  // every input's shape
};

const ShapeSwitchCase& ShapeSwitchCaseAt(int64_t index) {
  static const auto* cases = new std::vector<ShapeSwitchCase>{
      {"converter/transformer_block_float32.tflite",
       {{1, 64, 128}},
       {{2, 64, 128}}},
      {"converter/mobilenet_v2_float32.tflite",
       {{1, 224, 224, 3}},
       {{2, 224, 224, 3}}},
      {"converter/unet_small_float32.tflite",
       {{1, 128, 128, 3}},
       {{2, 128, 128, 3}}},
      {"tflite-testdata/dynamic_shapes.bin",
       {{8, 42, 1024}, {1, 90, 1024}, {1, 1}},
       {{8, 42, 1024}, {1, 30, 1024}, {1, 1}}}};
  return (*cases)[static_cast<size_t>(index)];
}

// One interpreter of the case's model and the input bytes it gets before
// every invoke (float inputs: a fixed pattern; single-element inputs: 3,
// which is dynamic_shapes.bin's output row count).
class ShapeSwitchRunner {
 public:
  absl::Status Open(const std::string& path, int32_t max_plans) {
    absl::StatusOr<std::shared_ptr<const Model>> model = Model::FromFile(path);
    if (!model.ok()) return model.status();
    InterpreterOptions options;
    options.plan_cache.max_plans = max_plans;
    options.plan_cache.retrace_threshold = 0;  // switching is the point
    absl::StatusOr<std::unique_ptr<Interpreter>> created =
        Interpreter::Create(*model, options);
    if (!created.ok()) return created.status();
    interpreter_ = *std::move(created);
    return absl::OkStatus();
  }

  // Resizes every input to `shapes` and allocates.
  absl::Status Switch(const std::vector<std::vector<int32_t>>& shapes) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      absl::Status s =
          interpreter_->ResizeInput(static_cast<int>(i), shapes[i]);
      if (!s.ok()) return s;
    }
    return interpreter_->AllocateTensors();
  }

  // Copies the inputs' bytes in and invokes.
  absl::Status FillAndInvoke() {
    for (int i = 0; i < interpreter_->num_inputs(); ++i) {
      TensorState* t = interpreter_->input(i);
      const std::vector<uint8_t>& bytes = InputBytes(*t);
      std::memcpy(t->data, bytes.data(), std::min(bytes.size(), t->bytes));
    }
    return interpreter_->Invoke();
  }

  Interpreter& interpreter() { return *interpreter_; }

 private:
  const std::vector<uint8_t>& InputBytes(const TensorState& t) {
    std::vector<uint8_t>& bytes = inputs_[{t.desc, t.bytes}];
    if (bytes.size() == t.bytes) return bytes;
    bytes.assign(t.bytes, 0);
    if (t.desc->type == KILN_TYPE_FLOAT32) {
      auto* values = reinterpret_cast<float*>(bytes.data());
      const int64_t n = t.NumElements();
      for (int64_t k = 0; k < n; ++k) {
        values[k] = n == 1 ? 3.0f : static_cast<float>(k % 17) / 17.0f;
      }
    }
    return bytes;
  }

  std::unique_ptr<Interpreter> interpreter_;
  std::map<std::pair<const TensorDesc*, size_t>, std::vector<uint8_t>> inputs_;
};

// The case's model path, or "" after skipping the benchmark.
std::string ShapeSwitchModel(benchmark::State& state) {
  const std::string path = std::string(KILN_BENCH_SHARED_MODELS_DIR) + "/" +
                           ShapeSwitchCaseAt(state.range(0)).model;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    state.SkipWithError(
        absl::StrCat(path, " absent (the shared model corpus is not here)")
            .c_str());
    return "";
  }
  return path;
}

bool SkipOnError(benchmark::State& state, const absl::Status& s) {
  if (s.ok()) return false;
  state.SkipWithError(std::string(s.message()).c_str());
  return true;
}

void BM_AlternateShapesFixed(benchmark::State& state) {
  const std::string path = ShapeSwitchModel(state);
  if (path.empty()) return;
  const ShapeSwitchCase& c = ShapeSwitchCaseAt(state.range(0));
  ShapeSwitchRunner a, b;
  for (auto [runner, shapes] : {std::pair{&a, &c.a}, std::pair{&b, &c.b}}) {
    if (SkipOnError(state, runner->Open(path, 4)) ||
        SkipOnError(state, runner->Switch(*shapes)) ||
        SkipOnError(state, runner->FillAndInvoke())) {
      return;
    }
  }
  for (auto _ : state) {
    if (SkipOnError(state, a.FillAndInvoke()) ||
        SkipOnError(state, b.FillAndInvoke())) {
      return;
    }
  }
}
BENCHMARK(BM_AlternateShapesFixed)
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMicrosecond);

void RunAlternating(benchmark::State& state, int32_t max_plans) {
  const std::string path = ShapeSwitchModel(state);
  if (path.empty()) return;
  const ShapeSwitchCase& c = ShapeSwitchCaseAt(state.range(0));
  ShapeSwitchRunner r;
  if (SkipOnError(state, r.Open(path, max_plans))) return;
  // One untimed round prepares both shapes.
  for (const auto* shapes : {&c.a, &c.b}) {
    if (SkipOnError(state, r.Switch(*shapes)) ||
        SkipOnError(state, r.FillAndInvoke())) {
      return;
    }
  }
  const PlanCacheStats before = r.interpreter().plan_cache_stats();
  for (auto _ : state) {
    for (const auto* shapes : {&c.a, &c.b}) {
      if (SkipOnError(state, r.Switch(*shapes)) ||
          SkipOnError(state, r.FillAndInvoke())) {
        return;
      }
    }
  }
  const PlanCacheStats after = r.interpreter().plan_cache_stats();
  const double iterations = static_cast<double>(state.iterations());
  state.counters["hits"] = benchmark::Counter(
      static_cast<double>(after.hits - before.hits) / iterations);
  state.counters["misses"] = benchmark::Counter(
      static_cast<double>(after.misses - before.misses) / iterations);
  state.counters["plan_cache_bytes"] =
      benchmark::Counter(static_cast<double>(after.bytes));
}

void BM_AlternateShapesCached(benchmark::State& state) {
  RunAlternating(state, 4);
}
BENCHMARK(BM_AlternateShapesCached)
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMicrosecond);

void BM_AlternateShapesUncached(benchmark::State& state) {
  RunAlternating(state, 0);
}
BENCHMARK(BM_AlternateShapesUncached)
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMicrosecond);

// Model::FromFile only (mmap + FlatBuffers verifier + Kiln's checks); the
// model's destruction (munmap) is outside the timed region.
void RunOpenBenchmark(benchmark::State& state, bool external) {
  const uint64_t mib = static_cast<uint64_t>(state.range(0));
  const absl::StatusOr<std::string> path =
      GeneratedModel(absl::StrCat("large_", mib, "mib",
                                  external ? "_external" : "", ".tflite"),
                     BuildLargeWeights, mib, external);
  if (!path.ok()) {
    state.SkipWithError(std::string(path.status().message()).c_str());
    return;
  }
  size_t file_bytes = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::shared_ptr<const Model>> model = Model::FromFile(*path);
    const auto end = std::chrono::steady_clock::now();
    if (!model.ok()) {
      state.SkipWithError(std::string(model.status().message()).c_str());
      return;
    }
    file_bytes = (*model)->byte_size();
    benchmark::DoNotOptimize(file_bytes);
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
  }
  state.counters["weight_mib"] = benchmark::Counter(static_cast<double>(mib));
  state.counters["file_bytes"] =
      benchmark::Counter(static_cast<double>(file_bytes));
}

void BM_ModelOpen(benchmark::State& state) { RunOpenBenchmark(state, false); }
BENCHMARK(BM_ModelOpen)
    ->Arg(64)
    ->Arg(128)
    ->Arg(256)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

void BM_ModelOpenExternal(benchmark::State& state) {
  RunOpenBenchmark(state, true);
}
BENCHMARK(BM_ModelOpenExternal)
    ->Arg(64)
    ->Arg(128)
    ->Arg(256)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Removes --kiln_model_dir=DIR from argv and sets up the model directory.
// Returns false (after printing why) when it cannot be used.
bool SetUpModelDirectory(int* argc, char** argv) {
  ModelDirectory& dir = GetModelDirectory();
  constexpr const char kFlag[] = "--kiln_model_dir=";
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], kFlag, sizeof(kFlag) - 1) == 0) {
      dir.path = argv[i] + sizeof(kFlag) - 1;
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  if (dir.path.empty()) {
    if (const char* env = std::getenv("KILN_BENCH_MODEL_DIR")) dir.path = env;
  }
  std::error_code ec;
  if (dir.path.empty()) {
    dir.path = (fs::temp_directory_path(ec) /
                absl::StrCat("kiln_benchmarks_", getpid()))
                   .string();
    dir.remove_at_exit = true;
  }
  fs::create_directories(dir.path, ec);
  if (ec || !fs::is_directory(dir.path)) {
    std::cerr << "kiln_benchmarks: cannot create the model directory '"
              << dir.path << "': " << ec.message()
              << "; pass a writable directory with --kiln_model_dir=DIR\n";
    return false;
  }
  return true;
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  if (!kiln::SetUpModelDirectory(&argc, argv)) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("kiln_model_dir", kiln::GetModelDirectory().path);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (kiln::GetModelDirectory().remove_at_exit) {
    std::error_code ec;
    std::filesystem::remove_all(kiln::GetModelDirectory().path, ec);
  }
  return 0;
}
