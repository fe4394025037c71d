// Helper for opencl_disk_cache_test: prepares and runs a conv stack with the
// OpenCL delegate using the cache directory argv[1], then prints the
// delegate's program-cache counters as "key=value" lines.
#include <cstdio>

#include "delegate_harness.h"
#include "graph_builder.h"

int main(int argc, char** argv) {
  using namespace kiln::opencl_test;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CACHE_DIR\n", argv[0]);
    return 2;
  }
  int out = -1;
  kiln::Graph graph = ConvStack(&out);
  kiln::DelegateSettings settings;
  settings.mutable_opencl()->set_cache_dir(argv[1]);
  DelegateHarness h;
  absl::Status s = h.Create(SerializeSettings(settings));
  if (s.ok()) s = h.Partition(graph).status();
  if (s.ok()) s = h.Prepare(graph);
  if (s.ok()) s = h.Invoke(graph);
  if (!s.ok()) {
    std::fprintf(stderr, "opencl_cache_probe: %s\n", s.ToString().c_str());
    return 1;
  }
  const KilnOpenClStats stats = h.Stats();
  std::printf(
      "built_from_source=%llu\nloaded_from_disk_cache=%llu\n"
      "cache_files_rejected=%llu\ncache_files_written=%llu\n",
      static_cast<unsigned long long>(stats.programs_built_from_source),
      static_cast<unsigned long long>(stats.programs_loaded_from_disk_cache),
      static_cast<unsigned long long>(stats.cache_files_rejected),
      static_cast<unsigned long long>(stats.cache_files_written));
  return 0;
}
