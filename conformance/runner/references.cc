#include "references.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

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

absl::StatusOr<Reference> LoadReference(const std::string& dir,
                                        const std::string& key) {
  const std::string path = absl::StrCat(dir, "/", key, ".json");
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("no reference file ", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  const Json j = Json::parse(text.str(), nullptr, false);
  const auto malformed = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat(
        "malformed reference file ", path, ": ", what,
        "; regenerate it with conformance/references/generate_references.py"));
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
