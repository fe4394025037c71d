// OpenCL delegate benchmarks:
//   BM_DelegateInit/cold   create + partition + prepare of a conv stack in a
//                          fresh process with empty Kiln and PoCL caches;
//   BM_DelegateInit/warm   the same with both caches filled by an earlier
//                          process (target on PoCL: <= 10% of cold);
//   BM_ConvStackInvoke/opencl vs /cpu  one partition invoke of the conv stack
//                          vs the CPU plugin's kernels node by node.
// Init is measured in child processes (this binary run with
// --init-child=CACHE_DIR), because compilers cache per process.
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "delegate_harness.h"
#include "graph_builder.h"
#include "runtime/single_node_runner.h"

namespace kiln::opencl_test {
namespace {

std::string self_path;

int InitChild(const std::string& cache_dir) {
  int out = -1;
  Graph graph = ConvStack(&out, 32, 32);
  DelegateSettings settings;
  settings.mutable_opencl()->set_cache_dir(cache_dir);
  const auto start = std::chrono::steady_clock::now();
  DelegateHarness h;
  absl::Status s = h.Create(SerializeSettings(settings));
  if (s.ok()) s = h.Partition(graph).status();
  if (s.ok()) s = h.Prepare(graph);
  const auto end = std::chrono::steady_clock::now();
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("%.9f\n", std::chrono::duration<double>(end - start).count());
  return 0;
}

std::string MakeTempDir(const char* what) {
  std::string pattern =
      std::string("/tmp/kiln-opencl-bench-") + what + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  return mkdtemp(buf.data()) != nullptr ? buf.data() : "";
}

// Seconds the child spent in init, or < 0 on failure.
double RunChild(const std::string& cache_dir, const std::string& pocl_dir) {
  const std::string command = "POCL_CACHE_DIR='" + pocl_dir + "' '" +
                              self_path + "' --init-child='" + cache_dir + "'";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  double seconds = -1;
  if (std::fscanf(pipe, "%lf", &seconds) != 1) seconds = -1;
  if (pclose(pipe) != 0) return -1;
  return seconds;
}

void BM_DelegateInit(benchmark::State& state) {
  const bool warm = state.range(0) != 0;
  std::string cache = MakeTempDir("kiln"), pocl = MakeTempDir("pocl");
  if (warm && RunChild(cache, pocl) < 0) {
    state.SkipWithError("priming child failed");
    return;
  }
  for (auto _ : state) {
    if (!warm) {
      std::filesystem::remove_all(cache);
      std::filesystem::remove_all(pocl);
      cache = MakeTempDir("kiln");
      pocl = MakeTempDir("pocl");
    }
    const double seconds = RunChild(cache, pocl);
    if (seconds < 0) {
      state.SkipWithError("init child failed");
      break;
    }
    state.SetIterationTime(seconds);
  }
  std::filesystem::remove_all(cache);
  std::filesystem::remove_all(pocl);
}
BENCHMARK(BM_DelegateInit)
    ->ArgName("warm")
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

void BM_ConvStackInvokeOpenCl(benchmark::State& state) {
  int out = -1;
  Graph graph = ConvStack(&out, 32, 32);
  DelegateSettings settings;
  settings.mutable_opencl()->set_cache_dir("none");
  DelegateHarness h;
  absl::Status s = h.Create(SerializeSettings(settings));
  if (s.ok()) s = h.Partition(graph).status();
  if (s.ok()) s = h.Prepare(graph);
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  for (auto _ : state) {
    s = h.Invoke(graph);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
}
BENCHMARK(BM_ConvStackInvokeOpenCl)->Unit(benchmark::kMillisecond);

void BM_ConvStackInvokeCpu(benchmark::State& state) {
  auto cpu = LoadPluginForTest(CpuPluginPath());
  if (!cpu.ok()) {
    state.SkipWithError(cpu.status().ToString().c_str());
    return;
  }
  int out = -1;
  Graph graph = ConvStack(&out, 32, 32);
  // One runner per node, fed with the previous node's output shape/values.
  std::vector<std::unique_ptr<SingleNodeRunner>> runners;
  std::vector<const KilnKernel*> kernels;
  for (int32_t n : graph.execution_plan) {
    const Node& node = graph.nodes[static_cast<size_t>(n)];
    auto r = std::make_unique<SingleNodeRunner>();
    std::vector<int32_t> ins, outs;
    for (int32_t t : node.inputs) {
      if (t < 0) {
        ins.push_back(-1);
        continue;
      }
      const Tensor& src = graph.tensors[static_cast<size_t>(t)];
      std::vector<float> zeros(static_cast<size_t>(src.NumElements()), 0.5f);
      ins.push_back(
          src.is_constant()
              ? r->AddTensor(src.type, src.shape, src.data, src.bytes, true)
              : r->AddTensor<float>(src.type, src.shape, zeros));
    }
    outs.push_back(r->AddTensor(KILN_TYPE_FLOAT32, {}));
    r->SetOp(node.builtin_code, node.version, ins, outs);
    for (const auto& [key, value] : node.options)
      r->node().SetOption(key, value);
    kernels.push_back(FindKernel(**cpu, node.builtin_code, node.version));
    if (kernels.back() == nullptr) {
      state.SkipWithError(("no CPU kernel for " + node.OpName()).c_str());
      return;
    }
    runners.push_back(std::move(r));
  }
  for (auto _ : state) {
    for (size_t i = 0; i < runners.size(); ++i) {
      const absl::Status s = runners[i]->Run(*kernels[i]);
      if (!s.ok()) {
        state.SkipWithError(s.ToString().c_str());
        return;
      }
    }
  }
  state.SetLabel("includes each CPU kernel's prepare per run");
}
BENCHMARK(BM_ConvStackInvokeCpu)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kiln::opencl_test

int main(int argc, char** argv) {
  char resolved[4096];
  const ssize_t n = readlink("/proc/self/exe", resolved, sizeof(resolved) - 1);
  kiln::opencl_test::self_path =
      n > 0 ? std::string(resolved, static_cast<size_t>(n)) : argv[0];
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--init-child=", 13) == 0) {
      return kiln::opencl_test::InitChild(argv[i] + 13);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
