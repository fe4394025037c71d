#include "profile_report.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kiln::cli {
namespace {

struct Sum {
  int64_t count = 0;
  int64_t ns = 0;
};
using Table = std::map<std::string, Sum>;

void Add(Table& table, const std::string& key, const ProfileEvent& e) {
  Sum& sum = table[key];
  ++sum.count;
  sum.ns += std::max<int64_t>(e.end_ns - e.begin_ns, 0);
}

// Rows of `table`, largest total first; share against `invoke_ms` (none
// when 0).
std::vector<ProfileRow> Rows(const Table& table, double invoke_ms) {
  std::vector<ProfileRow> rows;
  for (const auto& [key, sum] : table) {
    ProfileRow row;
    row.key = key;
    row.count = sum.count;
    row.total_ms = static_cast<double>(sum.ns) / 1e6;
    row.mean_us = static_cast<double>(sum.ns) / 1e3 /
                  static_cast<double>(std::max<int64_t>(sum.count, 1));
    row.share = invoke_ms > 0 ? row.total_ms / invoke_ms : 0;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ProfileRow& a, const ProfileRow& b) {
                     return a.total_ms > b.total_ms;
                   });
  return rows;
}

std::string PartitionKey(const ProfileEvent& e,
                         const std::vector<PartitionLabel>& partitions) {
  for (const PartitionLabel& p : partitions) {
    if (p.subgraph == e.subgraph && p.node == e.node) return p.label;
  }
  return absl::StrCat(e.delegate, ": subgraph ", e.subgraph, " node ", e.node);
}

std::string TableText(const std::string& title, const std::string& column,
                      const std::vector<ProfileRow>& rows, bool with_share) {
  if (rows.empty()) return "";
  size_t width = column.size();
  for (const ProfileRow& r : rows) width = std::max(width, r.key.size());
  const int w = static_cast<int>(width);
  std::string text =
      absl::StrFormat("%s\n  %-*s %8s %11s %11s%s\n", title, w, column, "count",
                      "total ms", "mean us", with_share ? "   share" : "");
  for (const ProfileRow& r : rows) {
    absl::StrAppendFormat(&text, "  %-*s %8d %11.3f %11.2f", w, r.key, r.count,
                          r.total_ms, r.mean_us);
    if (with_share) absl::StrAppendFormat(&text, " %6.1f%%", 100 * r.share);
    text += "\n";
  }
  return text;
}

Json RowsToJson(const std::vector<ProfileRow>& rows, const char* key_name) {
  Json out = Json::array();
  for (const ProfileRow& r : rows) {
    out.push_back({{key_name, r.key},
                   {"count", r.count},
                   {"total_ms", r.total_ms},
                   {"mean_us", r.mean_us},
                   {"share", r.share}});
  }
  return out;
}

}  // namespace

ProfileReport SummarizeProfile(const std::vector<ProfileEvent>& events,
                               int32_t first_run,
                               const std::vector<PartitionLabel>& partitions) {
  Table ops, parts, plugin, setup;
  std::set<int32_t> runs;
  int64_t invoke_ns = 0;
  for (const ProfileEvent& e : events) {
    if (e.run < 0) {
      if (!e.from_plugin) Add(setup, e.category, e);
      continue;
    }
    if (e.run < first_run) continue;
    if (e.from_plugin) {
      Add(plugin, absl::StrCat(e.name, " (", e.category, ")"), e);
    } else if (e.category == "run" && e.depth == 0) {
      invoke_ns += std::max<int64_t>(e.end_ns - e.begin_ns, 0);
      runs.insert(e.run);
    } else if (e.category == "invoke") {
      Add(ops, e.name, e);
    } else if (e.category == "partition_invoke") {
      Add(parts, PartitionKey(e, partitions), e);
    }
  }
  ProfileReport report;
  report.runs = static_cast<int32_t>(runs.size());
  report.invoke_ms = static_cast<double>(invoke_ns) / 1e6;
  report.ops = Rows(ops, report.invoke_ms);
  report.partitions = Rows(parts, report.invoke_ms);
  report.plugin_events = Rows(plugin, report.invoke_ms);
  report.setup = Rows(setup, 0);
  return report;
}

std::string ProfileToText(const ProfileReport& r) {
  std::string text = absl::StrFormat(
      "profile of %d timed runs (%.3f ms of Invoke; shares are of that)\n",
      r.runs, r.invoke_ms);
  text += TableText("nodes by op", "op", r.ops, true);
  text += TableText("delegate partitions", "partition", r.partitions, true);
  text += TableText("events plugins added", "event (category)", r.plugin_events,
                    true);
  text += TableText("setup (creation and AllocateTensors) by callback",
                    "callback", r.setup, false);
  return text;
}

Json ProfileToJson(const ProfileReport& r) {
  return {{"runs", r.runs},
          {"invoke_ms", r.invoke_ms},
          {"ops", RowsToJson(r.ops, "op")},
          {"partitions", RowsToJson(r.partitions, "partition")},
          {"plugin_events", RowsToJson(r.plugin_events, "event")},
          {"setup", RowsToJson(r.setup, "callback")}};
}

}  // namespace kiln::cli
