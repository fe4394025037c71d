// JSON, JUnit XML and HTML renderings of a conformance Report.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

}  // namespace

std::string ReportToJson(const Report& r) {
  nlohmann::ordered_json j;
  j["tool"] = "kiln conformance";
  j["kiln_runtime_version"] = KILN_RUNTIME_VERSION_STRING;
  j["host_extension_api_version"] = KILN_EXT_API_VERSION_STRING;
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
  j["plugin"] = plugin;
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
  for (const CheckResult& c : r.checks) {
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
    j["checks"].push_back(e);
  }
  return j.dump(2) + "\n";
}

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
  x << "  </testsuite>\n</testsuites>\n";
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

// The ABI-level matrix: rows are negotiation and kernel versions, columns
// the host levels.
// Older levels are today's host capped to that level (a simulation);
// conformance/releases runs real released hosts.
void WriteHtmlAbiMatrix(const Report& r, std::ostringstream& h) {
  h << "<h2>Extension API level matrix</h2>\n<p>Columns: the host levels. "
       "The newest is this host; older ones are this host capped to that "
       "level (same code, the older host table and negotiation), not a "
       "released host &mdash; real released hosts run in Kiln's CI "
       "(conformance/releases).</p>\n<table><tr><th>check</th>";
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
  std::map<std::string, std::map<uint32_t, const CheckResult*>> rows;
  std::vector<std::string> order;
  for (const CheckResult& c : r.checks) {
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
    for (uint32_t level : r.abi_levels) {
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
  h << "</table>\n";
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
