// JSON, JUnit XML and HTML renderings of a conformance Report.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "conformance_runner.h"
#include "kiln/kiln_version.h"
#include "nlohmann/json.hpp"
#include "plugin/negotiation.h"

namespace kiln::conformance {
namespace {

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out += ' ';
        } else {
          out += c;
        }
    }
  }
  return out;
}

const char* Colour(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "#c8ecc8";
    case Verdict::kFail:
      return "#f5b7b1";
    case Verdict::kSkip:
      return "#e5e5e5";
    case Verdict::kNoReference:
      return "#fdebd0";
  }
  return "#ffffff";
}

// The "plugin" object: the plugin's identity, kernels and delegate.
nlohmann::ordered_json PluginToJson(const Report& r) {
  nlohmann::ordered_json plugin;
  plugin["path"] = r.plugin_path;
  plugin["name"] = r.plugin_name;
  plugin["version"] = r.plugin_version;
  plugin["abi_version"] =
      r.plugin_abi_version ? VersionString(r.plugin_abi_version) : "";
  plugin["min_host_abi_version"] =
      r.plugin_min_host_abi_version
          ? VersionString(r.plugin_min_host_abi_version)
          : "";
  plugin["kernels"] = nlohmann::ordered_json::array();
  for (const KernelInfo& k : r.kernels) {
    plugin["kernels"].push_back({{"builtin_code", k.builtin_code},
                                 {"custom_name", k.custom_name},
                                 {"min_version", k.min_version},
                                 {"max_version", k.max_version}});
  }
  if (!r.delegate.name.empty()) {
    nlohmann::ordered_json d;
    d["name"] = r.delegate.name;
    d["ops_declared"] = r.delegate.ops_declared;
    d["ops"] = nlohmann::ordered_json::array();
    for (const KernelInfo& k : r.delegate.ops) {
      d["ops"].push_back({{"builtin_code", k.builtin_code},
                          {"custom_name", k.custom_name},
                          {"min_version", k.min_version},
                          {"max_version", k.max_version},
                          {"types", k.types}});
    }
    plugin["delegate"] = d;
  }
  return plugin;
}

// One entry of "checks".
nlohmann::ordered_json CheckToJson(const CheckResult& c) {
  nlohmann::ordered_json e;
  e["name"] = c.name;
  e["category"] = c.category;
  e["verdict"] = VerdictName(c.verdict);
  e["message"] = c.message;
  e["seconds"] = c.seconds;
  if (!c.op.empty()) {
    e["op"] = c.op;
    e["op_version"] = c.op_version;
  }
  if (c.abi_level != 0) e["abi_level"] = AbiLevelName(c.abi_level);
  return e;
}

}  // namespace

std::string ReportToJson(const Report& r) {
  nlohmann::ordered_json j;
  j["tool"] = "kiln conformance";
  j["kiln_runtime_version"] = KILN_RUNTIME_VERSION_STRING;
  j["host_extension_api_version"] = KILN_EXT_API_VERSION_STRING;
  j["plugin"] = PluginToJson(r);
  j["reference"] = r.reference_path;
  j["reference_outputs"] = r.reference_dir;
  j["abi_levels_tested"] = nlohmann::ordered_json::array();
  for (uint32_t level : r.abi_levels) {
    j["abi_levels_tested"].push_back(AbiLevelName(level));
  }
  // Which columns ran on a real host: the newest is this host; the older
  // ones are this host capped (conformance/releases runs released hosts).
  j["host_levels"] = nlohmann::ordered_json::array();
  for (uint32_t level : r.abi_levels) {
    j["host_levels"].push_back(
        {{"level", AbiLevelName(level)},
         {"host",
          level == r.abi_levels.back() ? "this host" : "this host, capped"}});
  }
  j["summary"] = {{"total", r.checks.size()},
                  {"pass", r.Count(Verdict::kPass)},
                  {"fail", r.Count(Verdict::kFail)},
                  {"skip", r.Count(Verdict::kSkip)},
                  {"no_reference", r.Count(Verdict::kNoReference)},
                  {"passed", r.Passed()}};
  j["checks"] = nlohmann::ordered_json::array();
  for (const CheckResult& c : r.checks) j["checks"].push_back(CheckToJson(c));
  if (!r.real_hosts.empty()) {
    j["real_hosts"] = nlohmann::ordered_json::array();
    for (const RealHostCell& c : r.real_hosts) {
      j["real_hosts"].push_back({{"source", c.source},
                                 {"release", c.release},
                                 {"host", c.HostLabel()},
                                 {"plugin", c.plugin},
                                 {"runner", c.runner},
                                 {"required", c.required},
                                 {"exit", c.exit_code},
                                 {"summary", c.summary}});
    }
  }
  return j.dump(2) + "\n";
}

namespace {

// One testcase per real-host cell (--release-matrix); a failed cell is a
// failure, with its summary and listed failures.
void WriteRealHostJUnit(const Report& r, std::ostringstream& x) {
  if (r.real_hosts.empty()) return;
  int failed = 0;
  for (const RealHostCell& c : r.real_hosts) failed += c.Passed() ? 0 : 1;
  x << absl::StrFormat(
      "  <testsuite name=\"kiln conformance: real released hosts\" "
      "tests=\"%d\" failures=\"%d\" skipped=\"0\" errors=\"0\">\n",
      r.real_hosts.size(), failed);
  for (const RealHostCell& c : r.real_hosts) {
    x << "    <testcase classname=\"conformance.real_host." << Escape(c.release)
      << "\" name=\""
      << Escape(c.plugin_row + " on " + c.HostLabel() + " [" + c.runner + "]")
      << "\"";
    if (c.Passed()) {
      x << "/>\n";
      continue;
    }
    std::string body = c.summary;
    for (const auto& [name, list] : c.lists) {
      if (name != "failures") continue;
      for (const std::string& f : list) body += "\n" + f;
    }
    const std::string message =
        (c.required ? ""
                    : "reported, not required by the release-host test "
                      "(a defect of the released plugin): ") +
        c.summary + " (" + c.source + ")";
    x << ">\n      <failure message=\"" << Escape(message) << "\">"
      << Escape(body) << "</failure>\n    </testcase>\n";
  }
  x << "  </testsuite>\n";
}

}  // namespace

std::string ReportToJUnit(const Report& r) {
  double total = 0;
  for (const CheckResult& c : r.checks) total += c.seconds;
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x << "<testsuites>\n";
  x << absl::StrFormat(
      "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" skipped=\"%d\" "
      "errors=\"0\" time=\"%.3f\">\n",
      Escape("kiln conformance: " + r.plugin_path), r.checks.size(),
      r.Count(Verdict::kFail) + r.Count(Verdict::kNoReference),
      r.Count(Verdict::kSkip), total);
  for (const CheckResult& c : r.checks) {
    x << absl::StrFormat(
        "    <testcase classname=\"conformance.%s\" "
        "name=\"%s\" time=\"%.3f\"",
        Escape(c.category), Escape(c.name), c.seconds);
    switch (c.verdict) {
      case Verdict::kPass:
        x << "/>\n";
        break;
      case Verdict::kFail:
        x << ">\n      <failure message=\"" << Escape(c.message) << "\">"
          << Escape(c.message) << "</failure>\n    </testcase>\n";
        break;
      case Verdict::kNoReference:
        // Not verified, so not a pass: a failure of its own type.
        x << ">\n      <failure type=\"no-reference\" message=\""
          << Escape("no reference: " + c.message) << "\">" << Escape(c.message)
          << "</failure>\n    </testcase>\n";
        break;
      case Verdict::kSkip:
        x << ">\n      <skipped message=\""
          << Escape(std::string(VerdictName(c.verdict)) + ": " + c.message)
          << "\"/>\n    </testcase>\n";
        break;
    }
  }
  x << "  </testsuite>\n";
  WriteRealHostJUnit(r, x);
  x << "</testsuites>\n";
  return x.str();
}

namespace {

// The page head, the summary and the plugin table.
void WriteHtmlHeader(const Report& r, std::ostringstream& h) {
  h << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
    << "<title>kiln conformance: " << Escape(r.plugin_name) << "</title>"
    << "<style>body{font-family:sans-serif;margin:2em}"
       "table{border-collapse:collapse;margin-bottom:2em}"
       "td,th{border:1px solid #999;padding:3px 8px;font-size:90%;"
       "vertical-align:top}th{background:#ddd}"
       ".pass{background:#c8ecc8}.fail{background:#f5b7b1}"
       ".skip{background:#e5e5e5}.noref{background:#fdebd0}</style>"
    << "</head><body>\n";
  h << "<h1>kiln conformance</h1>\n<p><b>"
    << (r.Passed()                     ? "PASSED"
        : r.Count(Verdict::kFail) == 0 ? "NOT VERIFIED (a check without a "
                                         "reference is not a pass)"
                                       : "FAILED")
    << "</b> &mdash; " << r.Count(Verdict::kPass) << " pass, "
    << r.Count(Verdict::kFail) << " fail, " << r.Count(Verdict::kSkip)
    << " skip, " << r.Count(Verdict::kNoReference) << " no reference</p>\n";
  h << "<table><tr><th>plugin</th><td>" << Escape(r.plugin_path)
    << "</td></tr><tr><th>name / version</th><td>" << Escape(r.plugin_name)
    << " " << Escape(r.plugin_version)
    << "</td></tr><tr><th>built for extension API</th><td>"
    << (r.plugin_abi_version ? VersionString(r.plugin_abi_version) : "?")
    << " (min host "
    << (r.plugin_min_host_abi_version
            ? VersionString(r.plugin_min_host_abi_version)
            : "?")
    << ")</td></tr><tr><th>reference outputs</th><td>"
    << Escape(r.reference_dir)
    << " (LiteRT reference kernels)</td></tr><tr><th>kernels for nodes a "
       "delegate leaves</th><td>"
    << Escape(r.reference_path) << "</td></tr><tr><th>Kiln</th><td>runtime "
    << KILN_RUNTIME_VERSION_STRING << ", extension API "
    << KILN_EXT_API_VERSION_STRING << "</td></tr></table>\n";
}

// Rows of an ABI-level matrix: negotiation and every kernel version of
// `checks`, one cell per level (the check's verdict, why in its title).
void WriteCheckRows(const std::vector<CheckResult>& checks,
                    const std::vector<uint32_t>& levels,
                    std::ostringstream& h) {
  std::map<std::string, std::map<uint32_t, const CheckResult*>> rows;
  std::vector<std::string> order;
  for (const CheckResult& c : checks) {
    std::string row;
    if (c.category == "negotiation") row = "negotiation";
    if (c.category == "execute" && !c.op.empty()) {
      row = absl::StrCat(c.op, " v", c.op_version);
    }
    if (row.empty()) continue;
    if (!rows.count(row)) order.push_back(row);
    rows[row][c.abi_level] = &c;
  }
  for (const std::string& row : order) {
    h << "<tr><th>" << Escape(row) << "</th>";
    for (uint32_t level : levels) {
      auto it = rows[row].find(level);
      if (it == rows[row].end()) {
        h << "<td class=\"skip\">not run (refused at this level)</td>";
        continue;
      }
      const CheckResult& c = *it->second;
      h << "<td style=\"background:" << Colour(c.verdict) << "\" title=\""
        << Escape(c.message) << "\">" << VerdictName(c.verdict) << "</td>";
    }
    h << "</tr>\n";
  }
}

// The ABI-level matrix: rows are negotiation and kernel versions, columns
// the host levels.
// Older levels are today's host capped to that level (a simulation);
// conformance/releases runs real released hosts.
void WriteHtmlAbiMatrix(const Report& r, std::ostringstream& h) {
  h << "<h2>Extension API level matrix</h2>\n<p>Columns: the host levels. "
       "The newest is this host; older ones are this host capped to that "
       "level (same code, the older host table and negotiation), not a "
       "released host &mdash; real released hosts run in Kiln's CI "
       "(conformance/releases; `kiln conformance --release-matrix` adds "
       "them below).</p>\n<table><tr><th>check</th>";
  for (uint32_t level : r.abi_levels) {
    h << "<th>host " << AbiLevelName(level) << "</th>";
  }
  h << "</tr>\n<tr><th>host kind</th>";
  for (uint32_t level : r.abi_levels) {
    h << "<td>"
      << (level == r.abi_levels.back() ? "this host (real)"
                                       : "this host, capped (simulated)")
      << "</td>";
  }
  h << "</tr>\n";
  WriteCheckRows(r.checks, r.abi_levels, h);
  h << "</table>\n";
}

// --release-matrix: the plugins x hosts matrix. Columns: each real
// released host (built from history) and today's host at each level (the
// older ones a capped simulation); rows: the plugins, with the extension
// API they were built for. Then every real-host cell in detail.
struct HostColumn {
  std::string label;
  bool real_old = false;  // a released host built from history
  std::string api;        // real_old: the release's level (sort key)
  uint32_t level = 0;     // today's host: the level (0: levels unknown)
};

std::string TodayLevelLabel(uint32_t level, uint32_t newest) {
  if (level == 0) return "today's host (every level; no per-level verdicts)";
  return level == newest
             ? absl::StrCat("today's host ", AbiLevelName(level),
                            " (this build)")
             : absl::StrCat("today's host capped to ", AbiLevelName(level),
                            ": capped simulation of today's host");
}

// Verdict counts of `checks` at `level`, as "N pass, M fail, ...".
std::string LevelCounts(const std::vector<const CheckResult*>& checks,
                        bool* failed) {
  std::map<Verdict, int> n;
  for (const CheckResult* c : checks) ++n[c->verdict];
  *failed = n[Verdict::kFail] + n[Verdict::kNoReference] > 0;
  return absl::StrCat(n[Verdict::kPass], " pass, ", n[Verdict::kFail],
                      " fail, ", n[Verdict::kSkip], " skip, ",
                      n[Verdict::kNoReference], " no reference");
}

std::string Canonical(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

void WriteRealHostDetails(const Report& r, std::ostringstream& h);

// The row of this run's plugin: the row of a cell that ran the same file,
// else the file name marked "(this run)".
std::string ThisRunRow(const Report& r) {
  std::string this_row;
  const std::string this_path =
      r.plugin_path.empty() ? "" : Canonical(r.plugin_path);
  for (const RealHostCell& c : r.real_hosts) {
    if (!c.plugin_path.empty() && Canonical(c.plugin_path) == this_path) {
      this_row = c.plugin_row;
    }
  }
  if (this_row.empty()) {
    this_row = std::filesystem::path(r.plugin_path).filename().string() +
               " (this run)";
  }
  return this_row;
}

// The rows (plugins, with the extension API each was built for) and the
// columns (real released hosts, then today's host at each level).
struct RealHostGrid {
  std::string this_row;
  std::vector<std::string> rows;
  std::map<std::string, std::string> row_api;
  std::vector<HostColumn> columns;
};

// Adds the levels `c` (a cell of today's host) has verdicts at; 0 if none.
void AddTodayLevels(const RealHostCell& c, std::set<uint32_t>* levels) {
  bool any_level = false;
  for (const CheckResult& k : c.checks) {
    if (k.abi_level) levels->insert(k.abi_level);
    any_level = any_level || k.abi_level != 0;
  }
  if (!any_level) levels->insert(0);
}

RealHostGrid BuildRealHostGrid(const Report& r) {
  RealHostGrid g;
  g.this_row = ThisRunRow(r);
  g.rows = {g.this_row};
  g.row_api[g.this_row] =
      r.plugin_abi_version ? VersionString(r.plugin_abi_version) : "";
  std::set<std::string> real_seen;
  std::set<uint32_t> today_levels(r.abi_levels.begin(), r.abi_levels.end());
  for (const RealHostCell& c : r.real_hosts) {
    if (std::find(g.rows.begin(), g.rows.end(), c.plugin_row) == g.rows.end()) {
      g.rows.push_back(c.plugin_row);
    }
    if (!c.plugin_extension_api.empty()) {
      g.row_api[c.plugin_row] = c.plugin_extension_api;
    }
    if (!c.built_from_history) {
      AddTodayLevels(c, &today_levels);
    } else if (real_seen.insert(c.HostLabel()).second) {
      g.columns.push_back({c.HostLabel(), true, c.release_extension_api, 0});
    }
  }
  std::stable_sort(
      g.columns.begin(), g.columns.end(),
      [](const HostColumn& a, const HostColumn& b) { return a.api < b.api; });
  const uint32_t newest = ServedAbiLevels().back();
  for (uint32_t level : today_levels) {
    g.columns.push_back({TodayLevelLabel(level, newest), false, "", level});
  }
  return g;
}

void WriteRealHostHeader(const std::vector<HostColumn>& columns,
                         std::ostringstream& h) {
  h << "<h2>Plugins on real released hosts and on today's host</h2>\n<p>"
       "Rows: plugins (the extension API each was built for); columns: real "
       "released hosts, built from git history by Kiln's release-host tests "
       "(conformance/releases; the matrix files are listed below each "
       "cell), and today's host at each level, the older levels being a "
       "capped simulation of today's host. Cells of a real host link to "
       "their details.</p>\n<table><tr><th>plugin \\ host</th>";
  for (const HostColumn& col : columns) {
    h << "<th>" << Escape(col.label) << "</th>";
  }
  h << "</tr>\n";
}

// One cell of the grid: its HTML, whether anything failed, whether any
// result landed in it.
struct GridCell {
  std::string text;
  bool failed = false;
  bool any = false;
};

// A released host's cell: every matching real-host cell, linked.
GridCell RealOldCell(const Report& r, const std::string& row,
                     const HostColumn& col) {
  GridCell cell;
  for (size_t i = 0; i < r.real_hosts.size(); ++i) {
    const RealHostCell& c = r.real_hosts[i];
    if (c.plugin_row != row || !c.built_from_history ||
        c.HostLabel() != col.label) {
      continue;
    }
    cell.any = true;
    cell.failed = cell.failed || !c.Passed();
    absl::StrAppend(&cell.text, "<a href=\"#real-host-", i, "\">",
                    c.Passed() ? "PASSED" : "FAILED",
                    "</a>: ", Escape(c.summary), "<br><small>",
                    Escape(c.runner), "</small><br>");
  }
  return cell;
}

// Today's host at `col.level`: the verdicts at that level from this run
// (its own row only) and from today's-host matrices, counted, with their
// sources; a matrix without per-level verdicts fills the level-0 column.
GridCell TodayCell(const Report& r, const std::string& row,
                   const std::string& this_row, const HostColumn& col) {
  GridCell cell;
  std::vector<const CheckResult*> at_level;
  std::vector<std::string> sources;
  if (row == this_row) {
    for (const CheckResult& k : r.checks) {
      if (k.abi_level == col.level && k.abi_level != 0) at_level.push_back(&k);
    }
    if (!at_level.empty()) sources.push_back("this run");
  }
  for (size_t i = 0; i < r.real_hosts.size(); ++i) {
    const RealHostCell& c = r.real_hosts[i];
    if (c.plugin_row != row || c.built_from_history) continue;
    const size_t before = at_level.size();
    for (const CheckResult& k : c.checks) {
      if (k.abi_level == col.level) at_level.push_back(&k);
    }
    if (col.level == 0 && c.checks.empty()) {
      cell.any = true;
      cell.failed = cell.failed || !c.Passed();
      absl::StrAppend(&cell.text, "<a href=\"#real-host-", i, "\">",
                      c.Passed() ? "PASSED" : "FAILED",
                      "</a>: ", Escape(c.summary), "<br>");
    } else if (at_level.size() > before) {
      sources.push_back(absl::StrCat("<a href=\"#real-host-", i, "\">",
                                     Escape(c.release), " matrix</a>"));
    }
  }
  if (!at_level.empty()) {
    cell.any = true;
    bool level_failed = false;
    absl::StrAppend(&cell.text, LevelCounts(at_level, &level_failed),
                    "<br><small>", absl::StrJoin(sources, ", "), "</small>");
    cell.failed = cell.failed || level_failed;
  }
  return cell;
}

void WriteHtmlRealHosts(const Report& r, std::ostringstream& h) {
  if (r.real_hosts.empty()) return;
  RealHostGrid g = BuildRealHostGrid(r);
  WriteRealHostHeader(g.columns, h);
  for (const std::string& row : g.rows) {
    h << "<tr><th>" << Escape(row) << "<br>built for extension API "
      << Escape(g.row_api[row].empty() ? "?" : g.row_api[row]) << "</th>";
    for (const HostColumn& col : g.columns) {
      const GridCell cell = col.real_old ? RealOldCell(r, row, col)
                                         : TodayCell(r, row, g.this_row, col);
      if (!cell.any) {
        h << "<td>&mdash;</td>";
        continue;
      }
      h << "<td class=\"" << (cell.failed ? "fail" : "pass") << "\">"
        << cell.text << "</td>";
    }
    h << "</tr>\n";
  }
  h << "</table>\n";
  WriteRealHostDetails(r, h);
}

// Every real-host cell: what ran, its verdicts per op version and level
// where the matrix file has them, and why.
void WriteRealHostDetails(const Report& r, std::ostringstream& h) {
  const uint32_t newest = ServedAbiLevels().back();
  for (size_t i = 0; i < r.real_hosts.size(); ++i) {
    const RealHostCell& c = r.real_hosts[i];
    h << "<h3 id=\"real-host-" << i << "\">" << Escape(c.plugin_row) << " on "
      << Escape(c.HostLabel()) << "</h3>\n<table><tr><th>host</th><td>"
      << Escape(c.host)
      << (c.built_from_history
              ? " &mdash; real host, built from history"
              : " &mdash; today's host (older levels: capped simulation)")
      << "</td></tr><tr><th>plugin</th><td>" << Escape(c.plugin)
      << "</td></tr><tr><th>runner</th><td>" << Escape(c.runner)
      << "</td></tr><tr><th>result</th><td class=\""
      << (c.Passed() ? "pass" : "fail") << "\">" << Escape(c.summary)
      << (c.required ? "" : " (reported, not required)")
      << "</td></tr><tr><th>matrix file</th><td>" << Escape(c.source)
      << "</td></tr></table>\n";
    for (const auto& [name, list] : c.lists) {
      if (list.empty()) continue;
      h << "<details><summary>" << Escape(name) << " (" << list.size()
        << ")</summary><ul>";
      for (const std::string& item : list)
        h << "<li>" << Escape(item) << "</li>";
      h << "</ul></details>\n";
    }
    if (c.checks.empty()) continue;
    std::set<uint32_t> level_set;
    for (const CheckResult& k : c.checks) {
      if (k.abi_level) level_set.insert(k.abi_level);
    }
    const std::vector<uint32_t> levels(level_set.begin(), level_set.end());
    h << "<table><tr><th>check</th>";
    for (uint32_t level : levels) {
      std::string label;
      if (!c.built_from_history) {
        label = TodayLevelLabel(level, newest);
      } else if (AbiLevelName(level) == c.release_extension_api) {
        label =
            absl::StrCat("real host ", c.release, " at ", AbiLevelName(level));
      } else {
        label = absl::StrCat("real host ", c.release, " capped to ",
                             AbiLevelName(level));
      }
      h << "<th>" << Escape(label) << "</th>";
    }
    h << "</tr>\n";
    WriteCheckRows(c.checks, levels, h);
    h << "</table>\n";
    bool header = false;
    for (const CheckResult& k : c.checks) {
      if (k.verdict != Verdict::kFail && k.verdict != Verdict::kNoReference &&
          k.category != "delegate") {
        continue;
      }
      if (!header) {
        h << "<table><tr><th>check</th><th>verdict</th><th>why</th></tr>\n";
        header = true;
      }
      h << "<tr><td>" << Escape(k.name)
        << "</td><td style=\"background:" << Colour(k.verdict) << "\">"
        << VerdictName(k.verdict) << "</td><td>" << Escape(k.message)
        << "</td></tr>\n";
    }
    if (header) h << "</table>\n";
  }
}

// The delegate: one row per declared op version and graph, with why.
void WriteHtmlDelegate(const Report& r, std::ostringstream& h) {
  if (!r.delegate.name.empty()) {
    h << "<h2>Delegate '" << Escape(r.delegate.name)
      << "': declared ops and graphs</h2>\n<table><tr><th>check</th>"
         "<th>verdict</th><th>why</th></tr>\n";
    for (const CheckResult& c : r.checks) {
      if (c.category != "delegate") continue;
      h << "<tr><th>" << Escape(c.name)
        << "</th><td style=\"background:" << Colour(c.verdict) << "\">"
        << VerdictName(c.verdict) << "</td><td>" << Escape(c.message)
        << "</td></tr>\n";
    }
    h << "</table>\n";
  }
}

// Every check, then the page foot.
void WriteHtmlAllChecks(const Report& r, std::ostringstream& h) {
  h << "<h2>All checks</h2>\n<table><tr><th>#</th><th>check</th>"
       "<th>verdict</th><th>time</th><th>message</th></tr>\n";
  int i = 0;
  for (const CheckResult& c : r.checks) {
    h << "<tr><td>" << ++i << "</td><td>" << Escape(c.name)
      << "</td><td style=\"background:" << Colour(c.verdict) << "\">"
      << VerdictName(c.verdict) << "</td><td>"
      << absl::StrFormat("%.0f ms", c.seconds * 1000) << "</td><td>"
      << Escape(c.message) << "</td></tr>\n";
  }
  h << "</table>\n<p>Verdicts and tolerances: conformance/README.md in the "
       "Kiln sources.</p>\n</body></html>\n";
}

}  // namespace

std::string ReportToHtml(const Report& r) {
  std::ostringstream h;
  WriteHtmlHeader(r, h);
  WriteHtmlAbiMatrix(r, h);
  WriteHtmlRealHosts(r, h);
  WriteHtmlDelegate(r, h);
  WriteHtmlAllChecks(r, h);
  return h.str();
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write '", path, "': ", std::strerror(errno),
                     "; check the directory exists and is writable"));
  }
  return absl::OkStatus();
}

}  // namespace kiln::conformance
