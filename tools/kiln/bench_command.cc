// `kiln bench MODEL [--iterations N] [--warmup N] [--json] [options]`:
// model open+verify, interpreter creation (plugins, delegates, compilation),
// allocation, and invoke latency over N runs on seeded random inputs.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "interpreter/interpreter.h"
#include "model/model.h"
#include "nlohmann/json.hpp"

namespace kiln::cli {
namespace {

constexpr const char* kBenchHelp =
    "usage: kiln bench MODEL [options]\n"
    "Times model open+verify, interpreter creation, allocation and invoke\n"
    "(seeded random inputs).\n"
    "  --iterations N   timed invocations (default 50)\n"
    "  --warmup N       untimed invocations first (default 5)\n"
    "  --json           machine-readable output\n";

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

void FillInputs(Interpreter& interp) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> real(-1.f, 1.f);
  for (int i = 0; i < interp.num_inputs(); ++i) {
    TensorState* t = interp.input(i);
    if (t->data == nullptr) continue;
    if (t->desc->type == KILN_TYPE_FLOAT32) {
      float* p = static_cast<float*>(t->data);
      for (int64_t k = 0; k < t->NumElements(); ++k) p[k] = real(rng);
    } else {
      std::memset(t->data, 0, t->bytes);
    }
  }
}

}  // namespace

int BenchCommand(std::vector<std::string> args) {
  InterpreterOptions options;
  std::string error;
  if (!ParsePluginFlags(args, &options.plugins, &error) ||
      !ParseDelegateFlags(args, &options.delegates, &error)) {
    std::cerr << "kiln bench: " << error << "\n";
    return 2;
  }
  std::string model_path;
  int iterations = 50, warmup = 5;
  bool json = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout << kBenchHelp << kPluginFlagsHelp << kDelegateFlagsHelp;
      return 0;
    } else if ((a == "--iterations" || a == "--warmup") &&
               i + 1 < args.size()) {
      int v = 0;
      try {
        v = std::stoi(args[++i]);
      } catch (...) {
        v = -1;
      }
      if (v < (a == "--iterations" ? 1 : 0)) {
        std::cerr << "kiln bench: " << a << " needs a non-negative integer\n";
        return 2;
      }
      (a == "--iterations" ? iterations : warmup) = v;
    } else if (a == "--json") {
      json = true;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "kiln bench: unknown or incomplete option '" << a
                << "'; see kiln bench --help\n";
      return 2;
    } else if (model_path.empty()) {
      model_path = a;
    } else {
      std::cerr << "kiln bench: unexpected argument '" << a << "'\n";
      return 2;
    }
  }
  if (model_path.empty()) {
    std::cerr << "kiln bench: missing MODEL\n";
    return 2;
  }
  const Clock::time_point t0 = Clock::now();
  absl::StatusOr<std::shared_ptr<const Model>> model =
      Model::FromFile(model_path);
  if (!model.ok()) {
    std::cerr << "kiln bench: " << model.status().message() << "\n";
    return 1;
  }
  const Clock::time_point t1 = Clock::now();
  absl::StatusOr<std::unique_ptr<Interpreter>> created =
      Interpreter::Create(*model, options);
  if (!created.ok()) {
    std::cerr << "kiln bench: " << created.status().message() << "\n";
    return 1;
  }
  Interpreter& interp = **created;
  const Clock::time_point t2 = Clock::now();
  if (absl::Status s = interp.AllocateTensors(); !s.ok()) {
    std::cerr << "kiln bench: " << s.message() << "\n";
    return 1;
  }
  const Clock::time_point t3 = Clock::now();
  FillInputs(interp);
  Clock::duration first{};
  std::vector<double> times;
  for (int i = 0; i < warmup + iterations; ++i) {
    const Clock::time_point a = Clock::now();
    if (absl::Status s = interp.Invoke(); !s.ok()) {
      std::cerr << "kiln bench: " << s.message() << "\n";
      return 1;
    }
    const Clock::duration d = Clock::now() - a;
    if (i == 0) first = d;
    if (i >= warmup) times.push_back(Ms(d));
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const double mean =
      std::accumulate(times.begin(), times.end(), 0.0) / times.size();
  auto pct = [&](double p) {
    return sorted[std::min(sorted.size() - 1,
                           static_cast<size_t>(p * (sorted.size() - 1) + 0.5))];
  };
  nlohmann::ordered_json j;
  j["model"] = model_path;
  j["delegates"] = nlohmann::ordered_json::array();
  for (const auto& d : options.delegates) j["delegates"].push_back(d.name);
  j["open_verify_ms"] = Ms(t1 - t0);
  j["create_ms"] = Ms(t2 - t1);
  j["allocate_ms"] = Ms(t3 - t2);
  j["init_ms"] = Ms(t3 - t0);
  j["first_invoke_ms"] = Ms(first);
  j["iterations"] = iterations;
  j["invoke_ms"] = {{"mean", mean},
                    {"median", pct(0.5)},
                    {"p90", pct(0.9)},
                    {"min", sorted.front()},
                    {"max", sorted.back()}};
  j["arena_bytes"] = interp.arena_bytes();
  j["warnings"] = interp.warnings();
  if (json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("model            %s\n", model_path.c_str());
  std::printf("open + verify    %.3f ms\n", Ms(t1 - t0));
  std::printf("create           %.3f ms (plugins, resolution, delegates)\n",
              Ms(t2 - t1));
  std::printf("allocate         %.3f ms\n", Ms(t3 - t2));
  std::printf("init total       %.3f ms\n", Ms(t3 - t0));
  std::printf("first invoke     %.3f ms\n", Ms(first));
  std::printf(
      "invoke (%d runs) mean %.3f ms, median %.3f, p90 %.3f, min "
      "%.3f, max %.3f\n",
      iterations, mean, pct(0.5), pct(0.9), sorted.front(), sorted.back());
  std::printf("arena            %llu bytes\n",
              static_cast<unsigned long long>(interp.arena_bytes()));
  return 0;
}

}  // namespace kiln::cli
