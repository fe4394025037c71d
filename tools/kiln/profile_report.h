// `kiln bench --profile`: the interpreter's profile events (runtime/
// profiler.h) summed into tables, and their text and JSON renderings.
#ifndef KILN_TOOLS_KILN_PROFILE_REPORT_H_
#define KILN_TOOLS_KILN_PROFILE_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cli_common.h"
#include "runtime/profiler.h"

namespace kiln::cli {

// One row: events with the same key summed.
struct ProfileRow {
  std::string key;  // op name, partition label, "name (category)"
  int64_t count = 0;
  double total_ms = 0;
  double mean_us = 0;
  // total_ms over the timed runs' total Invoke time (0 for setup rows).
  double share = 0;
};

struct ProfileReport {
  int32_t runs = 0;                       // timed runs summed
  double invoke_ms = 0;                   // their Invoke events, summed
  std::vector<ProfileRow> ops;            // node invokes by op (not partitions)
  std::vector<ProfileRow> partitions;     // one row per delegate partition
  std::vector<ProfileRow> plugin_events;  // events plugins added
  std::vector<ProfileRow> setup;          // outside Invoke, by category
};

// What a partition row is called: "opencl: subgraph 0 node 12 (5 nodes)".
struct PartitionLabel {
  int32_t subgraph = 0;
  int32_t node = -1;
  std::string label;
};

// Sums `events` of runs >= `first_run` (the timed ones) into rows, each
// table by total time, largest first. Node invokes are events of category
// "invoke" (by op) and "partition_invoke" (by partition, named from
// `partitions`, else "<delegate> node N"); plugin events by name and
// category; setup rows are the events outside Invoke by category.
ProfileReport SummarizeProfile(const std::vector<ProfileEvent>& events,
                               int32_t first_run,
                               const std::vector<PartitionLabel>& partitions);

std::string ProfileToText(const ProfileReport& report);
Json ProfileToJson(const ProfileReport& report);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_PROFILE_REPORT_H_
