#include "references.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "op_generators.h"

namespace kiln::conformance {
namespace {

using Json = nlohmann::json;

absl::StatusOr<KilnTensorType> TypeFromName(const std::string& name) {
  for (int32_t t = 0; t <= KILN_TYPE_BFLOAT16; ++t) {
    if (name == TypeName(static_cast<KilnTensorType>(t))) {
      return static_cast<KilnTensorType>(t);
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown type '", name, "'"));
}

template <typename T>
std::vector<double> AsDoubles(const void* data, size_t bytes) {
  std::vector<double> out(bytes / sizeof(T));
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
  }
  return out;
}

// The elements as doubles; false for a type references do not cover.
bool Values(KilnTensorType type, const void* data, size_t bytes,
            std::vector<double>* out) {
  switch (type) {
    case KILN_TYPE_FLOAT32:
      *out = AsDoubles<float>(data, bytes);
      return true;
    case KILN_TYPE_INT32:
      *out = AsDoubles<int32_t>(data, bytes);
      return true;
    case KILN_TYPE_INT64:
      *out = AsDoubles<int64_t>(data, bytes);
      return true;
    case KILN_TYPE_INT16:
      *out = AsDoubles<int16_t>(data, bytes);
      return true;
    case KILN_TYPE_INT8:
      *out = AsDoubles<int8_t>(data, bytes);
      return true;
    case KILN_TYPE_UINT8:
    case KILN_TYPE_BOOL:
      *out = AsDoubles<uint8_t>(data, bytes);
      return true;
    case KILN_TYPE_UINT16:  // CAST v4 outputs
      *out = AsDoubles<uint16_t>(data, bytes);
      return true;
    case KILN_TYPE_UINT32:  // CAST v2 outputs
      *out = AsDoubles<uint32_t>(data, bytes);
      return true;
    case KILN_TYPE_FLOAT64:  // CAST v5 outputs
      *out = AsDoubles<double>(data, bytes);
      return true;
    default:
      return false;
  }
}

std::string Shape(const std::vector<int32_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

}  // namespace

std::string DefaultReferenceDirectory() {
  std::error_code ec;
  for (const char* dir : {KILN_CONFORMANCE_REFERENCE_DIR,
                          KILN_CONFORMANCE_INSTALLED_REFERENCE_DIR}) {
    if (std::filesystem::is_directory(dir, ec)) return dir;
  }
  return KILN_CONFORMANCE_INSTALLED_REFERENCE_DIR;
}

namespace {

// The reference in `j` (the object of a reference file, or of one case of a
// custom-case file) read from `path`; `fix` says what to do about a
// malformed one.
absl::StatusOr<Reference> ParseReference(const Json& j, const std::string& path,
                                         const std::string& fix) {
  const auto malformed = [&](const std::string& what) {
    return absl::DataLossError(
        absl::StrCat("malformed reference file ", path, ": ", what, "; ", fix));
  };
  if (!j.is_object() || !j.contains("outputs") || !j["outputs"].is_array()) {
    return malformed("not an object with an \"outputs\" array");
  }
  Reference r;
  r.path = path;
  r.key = j.value("key", "");
  r.model_hash = j.value("model_hash", "");
  r.source = j.value("source", "");
  if (j.contains("tolerance") && j["tolerance"].is_object()) {
    r.abs_tolerance = j["tolerance"].value("abs", r.abs_tolerance);
    r.rel_tolerance = j["tolerance"].value("rel", r.rel_tolerance);
  }
  for (const Json& o : j["outputs"]) {
    if (!o.is_object() || !o.contains("values") || !o["values"].is_array()) {
      return malformed("an output without \"values\"");
    }
    ReferenceOutput out;
    absl::StatusOr<KilnTensorType> type = TypeFromName(o.value("type", ""));
    if (!type.ok()) return malformed(std::string(type.status().message()));
    out.type = *type;
    out.shape = o.value("shape", std::vector<int32_t>{});
    out.quantized = o.contains("quantized");
    for (const Json& v : o["values"]) {
      out.values.push_back(v.is_number() ? v.get<double>() : std::nan(""));
    }
    r.outputs.push_back(std::move(out));
  }
  return r;
}

absl::StatusOr<Json> ReadJson(const std::string& path,
                              const std::string& missing) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(missing, path));
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str(), nullptr, false);
}

template <typename T>
void Append(double v, std::vector<uint8_t>* bytes) {
  const T x = static_cast<T>(v);
  const auto* p = reinterpret_cast<const uint8_t*>(&x);
  bytes->insert(bytes->end(), p, p + sizeof(T));
}

// A custom case's input: {"type", "shape", "values"[, "quantization":
// {"scale", "zero_point"}]}.
absl::StatusOr<GeneratedTensor> ParseInput(const Json& j) {
  if (!j.is_object() || !j.contains("values") || !j["values"].is_array()) {
    return absl::InvalidArgumentError("an input without \"values\"");
  }
  absl::StatusOr<KilnTensorType> type = TypeFromName(j.value("type", ""));
  if (!type.ok()) return type.status();
  GeneratedTensor t;
  t.type = *type;
  t.shape = j.value("shape", std::vector<int32_t>{});
  for (const Json& v : j["values"]) {
    const double x = v.is_number() ? v.get<double>() : 0;
    switch (t.type) {
      case KILN_TYPE_FLOAT32:
        Append<float>(x, &t.bytes);
        break;
      case KILN_TYPE_INT32:
        Append<int32_t>(x, &t.bytes);
        break;
      case KILN_TYPE_INT64:
        Append<int64_t>(x, &t.bytes);
        break;
      case KILN_TYPE_INT16:
        Append<int16_t>(x, &t.bytes);
        break;
      case KILN_TYPE_INT8:
        Append<int8_t>(x, &t.bytes);
        break;
      case KILN_TYPE_UINT8:
      case KILN_TYPE_BOOL:
        Append<uint8_t>(x, &t.bytes);
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("inputs of type ", TypeName(t.type),
                         " are not supported in custom cases"));
    }
  }
  if (j.contains("quantization") && j["quantization"].is_object()) {
    t.quantization.scales = {j["quantization"].value("scale", 1.f)};
    t.quantization.zero_points = {
        j["quantization"].value("zero_point", int64_t{0})};
  }
  return t;
}

}  // namespace

absl::StatusOr<Reference> LoadReference(const std::string& dir,
                                        const std::string& key) {
  const std::string path = absl::StrCat(dir, "/", key, ".json");
  absl::StatusOr<Json> j = ReadJson(path, "no reference file ");
  if (!j.ok()) return j.status();
  return ParseReference(
      *j, path,
      "regenerate it with conformance/references/generate_references.py");
}

absl::StatusOr<CustomCase> LoadCustomCase(const std::string& path,
                                          const std::string& custom_name,
                                          int32_t version) {
  absl::StatusOr<Json> j = ReadJson(path, "cannot read the custom-case file ");
  if (!j.ok()) return j.status();
  const std::string fix =
      "see \"Custom ops\" in conformance/README.md for the format";
  if (!j->is_object() || !j->contains("cases") || !(*j)["cases"].is_array()) {
    return absl::DataLossError(
        absl::StrCat("malformed custom-case file ", path,
                     ": not an object with a \"cases\" array; ", fix));
  }
  const Json* best = nullptr;
  for (const Json& c : (*j)["cases"]) {
    if (!c.is_object() || c.value("custom_name", "") != custom_name) continue;
    const int32_t v = c.value("version", 1);
    if (v <= version && (best == nullptr || v > best->value("version", 1))) {
      best = &c;
    }
  }
  if (best == nullptr) {
    return absl::NotFoundError(absl::StrCat("no case for CUSTOM '", custom_name,
                                            "' v", version, " in ", path));
  }
  absl::StatusOr<Reference> reference = ParseReference(*best, path, fix);
  if (!reference.ok()) return reference.status();
  CustomCase out;
  out.reference = *std::move(reference);
  out.reference.key =
      absl::StrCat(custom_name, ".v", best->value("version", 1));
  if (out.reference.source.empty()) {
    out.reference.source = "the expected outputs in the custom-case file";
  }
  GeneratedCase& c = out.c;
  c.family = absl::StrCat("custom case from ", path);
  c.exercises_version = best->value("version", 1);
  if (!best->contains("inputs") || !(*best)["inputs"].is_array()) {
    return absl::DataLossError(absl::StrCat("malformed custom-case file ", path,
                                            ": a case without \"inputs\"; ",
                                            fix));
  }
  for (const Json& input : (*best)["inputs"]) {
    absl::StatusOr<GeneratedTensor> t = ParseInput(input);
    if (!t.ok()) {
      return absl::DataLossError(absl::StrCat("malformed custom-case file ",
                                              path, ": ", t.status().message(),
                                              "; ", fix));
    }
    c.inputs.push_back(static_cast<int32_t>(c.tensors.size()));
    c.tensors.push_back(*std::move(t));
  }
  for (const ReferenceOutput& o : out.reference.outputs) {
    GeneratedTensor t;
    t.type = o.type;
    c.outputs.push_back(static_cast<int32_t>(c.tensors.size()));
    c.tensors.push_back(std::move(t));
  }
  for (const Json& b : best->value("custom_options", Json::array())) {
    c.custom_options.push_back(static_cast<uint8_t>(b.get<int>()));
  }
  return out;
}

std::string CompareWithReference(KilnTensorType type,
                                 const std::vector<int32_t>& shape,
                                 const void* data, size_t bytes,
                                 const ReferenceOutput& want, double abs,
                                 double rel) {
  if (type != want.type) {
    return absl::StrCat("output type ", TypeName(type), ", reference ",
                        TypeName(want.type));
  }
  if (shape != want.shape) {
    return absl::StrCat("output shape ", Shape(shape), ", reference ",
                        Shape(want.shape));
  }
  std::vector<double> got;
  if (!Values(type, data, bytes, &got)) {
    return absl::StrCat("outputs of type ", TypeName(type),
                        " are not compared by the runner");
  }
  if (got.size() != want.values.size()) {
    return absl::StrCat("output holds ", got.size(), " elements, reference ",
                        want.values.size());
  }
  const bool exact = type != KILN_TYPE_FLOAT32 && !want.quantized;
  if (want.quantized) {
    abs = 1;  // one quantization step
    rel = 0;
  }
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = got[i], b = want.values[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    const double diff = std::fabs(a - b);
    const bool ok = exact ? a == b : diff <= abs + rel * std::fabs(b);
    if (!ok) {
      if (bad++ == 0) first = i;
      if (!(diff <= worst)) worst = diff;
    }
  }
  if (bad == 0) return "";
  return absl::StrCat(
      bad, " of ", got.size(), " elements differ",
      exact ? " (exact match required for "
            : " beyond the tolerance (|got-ref| <= ",
      exact ? TypeName(type) : absl::StrCat(abs, " + ", rel, "*|ref|"),
      "); first at flat index ", first, ": got ", got[first], ", reference ",
      want.values[first], "; max abs diff ", worst);
}

}  // namespace kiln::conformance
