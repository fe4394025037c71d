// Reading the real released hosts' matrices (build/releases/matrix_*.json,
// written by conformance/releases/release_host_test.py) for
// `kiln conformance --release-matrix`. The file is user input: every field
// used is checked, and an error names the file and the field.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "conformance_runner.h"
#include "kiln/kiln_version.h"
#include "nlohmann/json.hpp"

namespace kiln::conformance {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Reads the fields of one JSON object, remembering the first error, which
// names the file and the field path ("cells[2].exit").
class FieldReader {
 public:
  FieldReader(const std::string& file, absl::Status* error)
      : file_(file), error_(error) {}

  bool Fail(const std::string& field, const std::string& what) {
    if (error_->ok()) {
      *error_ = absl::InvalidArgumentError(absl::StrCat(
          "release matrix '", file_, "': field '", field, "': ", what,
          "; the file is written by conformance/releases/"
          "release_host_test.py (CTest conformance.release_host.<release>): "
          "regenerate it, or pass the right file to --release-matrix"));
    }
    return false;
  }

  // `required`: a missing field is an error; otherwise `out` keeps its
  // value.
  bool String(const Json& o, const std::string& path, const char* key,
              std::string* out, bool required) {
    const auto it = o.find(key);
    if (it == o.end()) {
      return required ? Fail(Join(path, key), "missing (a string)") : true;
    }
    if (!it->is_string()) {
      return Fail(Join(path, key),
                  absl::StrCat("expected a string, got ", it->type_name()));
    }
    *out = it->get<std::string>();
    return true;
  }

  bool Bool(const Json& o, const std::string& path, const char* key,
            bool* out) {
    const auto it = o.find(key);
    if (it == o.end()) return true;
    if (!it->is_boolean()) {
      return Fail(Join(path, key), absl::StrCat("expected true or false, got ",
                                                it->type_name()));
    }
    *out = it->get<bool>();
    return true;
  }

  bool Int(const Json& o, const std::string& path, const char* key, int* out,
           bool required) {
    const auto it = o.find(key);
    if (it == o.end()) {
      return required ? Fail(Join(path, key), "missing (an integer)") : true;
    }
    if (!it->is_number_integer() || it->get<int64_t>() < -1000000 ||
        it->get<int64_t>() > 1000000) {
      return Fail(Join(path, key),
                  absl::StrCat("expected a small integer, got ", it->dump()));
    }
    *out = static_cast<int>(it->get<int64_t>());
    return true;
  }

  bool Strings(const Json& o, const std::string& path, const char* key,
               std::vector<std::string>* out) {
    const auto it = o.find(key);
    if (it == o.end()) return true;
    if (!it->is_array()) {
      return Fail(Join(path, key), absl::StrCat("expected a list of strings, "
                                                "got ",
                                                it->type_name()));
    }
    for (size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) {
        return Fail(
            absl::StrCat(Join(path, key), "[", i, "]"),
            absl::StrCat("expected a string, got ", (*it)[i].type_name()));
      }
      out->push_back((*it)[i].get<std::string>());
    }
    return true;
  }

  // "1.2" (or "1.2.0") -> KILN_MAKE_VERSION(1, 2, 0).
  bool Level(const std::string& field, const std::string& text, uint32_t* out) {
    const std::vector<std::string> parts = absl::StrSplit(text, '.');
    uint32_t major = 0, minor = 0, patch = 0;
    if (parts.size() < 2 || parts.size() > 3 ||
        !absl::SimpleAtoi(parts[0], &major) ||
        !absl::SimpleAtoi(parts[1], &minor) || major > 255 || minor > 255 ||
        (parts.size() == 3 && !absl::SimpleAtoi(parts[2], &patch))) {
      return Fail(field,
                  absl::StrCat("expected an extension API level like \"1.2\", "
                               "got \"",
                               text, "\""));
    }
    *out = KILN_MAKE_VERSION(major, minor, 0);
    return true;
  }

  static std::string Join(const std::string& path, const char* key) {
    return path.empty() ? key : absl::StrCat(path, ".", key);
  }

 private:
  std::string file_;
  absl::Status* error_;
};

bool ReadCheck(FieldReader& f, const Json& j, const std::string& path,
               CheckResult* c) {
  if (!j.is_object()) return f.Fail(path, "expected an object");
  std::string verdict, level;
  if (!f.String(j, path, "name", &c->name, true) ||
      !f.String(j, path, "verdict", &verdict, true) ||
      !f.String(j, path, "category", &c->category, false) ||
      !f.String(j, path, "message", &c->message, false) ||
      !f.String(j, path, "op", &c->op, false) ||
      !f.Int(j, path, "op_version", &c->op_version, false) ||
      !f.String(j, path, "abi_level", &level, false)) {
    return false;
  }
  bool known = false;
  for (Verdict v : {Verdict::kPass, Verdict::kFail, Verdict::kSkip,
                    Verdict::kNoReference}) {
    if (verdict == VerdictName(v)) {
      c->verdict = v;
      known = true;
    }
  }
  if (!known) {
    return f.Fail(path + ".verdict",
                  absl::StrCat("expected pass, fail, skip or no-reference, "
                               "got \"",
                               verdict, "\""));
  }
  return level.empty() || f.Level(path + ".abi_level", level, &c->abi_level);
}

bool ReadCell(FieldReader& f, const Json& j, const std::string& path,
              RealHostCell* cell) {
  if (!j.is_object()) return f.Fail(path, "expected an object");
  if (!f.String(j, path, "host", &cell->host, true) ||
      !f.String(j, path, "plugin", &cell->plugin, true) ||
      !f.String(j, path, "summary", &cell->summary, true) ||
      !f.Int(j, path, "exit", &cell->exit_code, true) ||
      !f.String(j, path, "runner", &cell->runner, false) ||
      !f.Bool(j, path, "host_is_real", &cell->host_is_real) ||
      !f.Bool(j, path, "built_from_history", &cell->built_from_history) ||
      !f.String(j, path, "plugin_path", &cell->plugin_path, false) ||
      !f.String(j, path, "plugin_extension_api", &cell->plugin_extension_api,
                false) ||
      !f.Strings(j, path, "levels", &cell->levels)) {
    return false;
  }
  // Files before "plugin_row": the plugin as named, less a "(/path)".
  cell->plugin_row = cell->plugin;
  const size_t paren = cell->plugin_row.rfind(" (");
  if (paren != std::string::npos &&
      cell->plugin_row.find('/', paren) != std::string::npos &&
      absl::EndsWith(cell->plugin_row, ")")) {
    cell->plugin_row.resize(paren);
  }
  cell->required = cell->built_from_history;  // files before "required"
  if (!f.String(j, path, "plugin_row", &cell->plugin_row, false) ||
      !f.Bool(j, path, "required", &cell->required)) {
    return false;
  }
  uint32_t unused = 0;
  for (size_t i = 0; i < cell->levels.size(); ++i) {
    if (!f.Level(absl::StrCat(path, ".levels[", i, "]"), cell->levels[i],
                 &unused)) {
      return false;
    }
  }
  if (!cell->plugin_extension_api.empty() &&
      !f.Level(path + ".plugin_extension_api", cell->plugin_extension_api,
               &unused)) {
    return false;
  }
  for (const char* key : {"failures", "delegate_checks", "refused_needs_1.1"}) {
    std::vector<std::string> list;
    if (!f.Strings(j, path, key, &list)) return false;
    if (j.contains(key)) cell->lists.emplace_back(key, std::move(list));
  }
  const auto checks = j.find("checks");
  if (checks == j.end()) return true;
  if (!checks->is_array()) {
    return f.Fail(path + ".checks", "expected a list of check objects");
  }
  for (size_t i = 0; i < checks->size(); ++i) {
    CheckResult c;
    if (!ReadCheck(f, (*checks)[i], absl::StrCat(path, ".checks[", i, "]"),
                   &c)) {
      return false;
    }
    cell->checks.push_back(std::move(c));
  }
  return true;
}

absl::Status LoadMatrixFile(const std::string& file,
                            std::vector<RealHostCell>* out) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "cannot read release matrix '", file,
        "': no such file or not readable; it is written by the CTest tests "
        "conformance.release_host.<release> (ctest -L release_hosts) into "
        "build/releases"));
  }
  std::stringstream text;
  text << in.rdbuf();
  const Json j = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "release matrix '", file,
        "' is not valid JSON; pass a build/releases/matrix_<release>.json "
        "written by conformance/releases/release_host_test.py"));
  }
  absl::Status error;
  FieldReader f(file, &error);
  if (!j.is_object()) {
    f.Fail("(top level)",
           "expected an object with release, commit, "
           "extension_api and cells");
    return error;
  }
  RealHostCell base;
  base.source = file;
  uint32_t unused = 0;
  if (!f.String(j, "", "release", &base.release, true) ||
      !f.String(j, "", "commit", &base.commit, true) ||
      !f.String(j, "", "extension_api", &base.release_extension_api, true) ||
      !f.Level("extension_api", base.release_extension_api, &unused)) {
    return error;
  }
  const auto cells = j.find("cells");
  if (cells == j.end() || !cells->is_array()) {
    f.Fail("cells", "missing or not a list of cell objects");
    return error;
  }
  for (size_t i = 0; i < cells->size(); ++i) {
    RealHostCell cell = base;
    if (!ReadCell(f, (*cells)[i], absl::StrCat("cells[", i, "]"), &cell)) {
      return error;
    }
    out->push_back(std::move(cell));
  }
  return absl::OkStatus();
}

}  // namespace

std::string RealHostCell::HostLabel() const {
  if (!built_from_history) return "today's host";
  return absl::StrCat("real host ", release, " (", commit.substr(0, 12),
                      ", extension API ", release_extension_api,
                      "), built from history");
}

absl::StatusOr<std::vector<RealHostCell>> LoadReleaseMatrices(
    const std::vector<std::string>& paths) {
  std::vector<RealHostCell> cells;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      absl::Status s = LoadMatrixFile(path, &cells);
      if (!s.ok()) return s;
      continue;
    }
    std::vector<std::string> files;
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
      const std::string name = e.path().filename().string();
      if (absl::StartsWith(name, "matrix_") && absl::EndsWith(name, ".json")) {
        files.push_back(e.path().string());
      }
    }
    if (ec || files.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "--release-matrix '", path,
          "': no matrix_<release>.json in this directory",
          ec ? absl::StrCat(" (", ec.message(), ")") : "",
          "; run the release-host tests first (ctest -L release_hosts), "
          "which write them into build/releases"));
    }
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) {
      absl::Status s = LoadMatrixFile(file, &cells);
      if (!s.ok()) return s;
    }
  }
  return cells;
}

}  // namespace kiln::conformance
