// `kiln run MODEL [--signature KEY] [--input NAME=FILE.npy | --input random]
//            [--seed N] [--output-dir DIR] [--json] [plugin and delegate
//            flags]`
// Runs a model once and writes every output as NAME.npy plus a manifest
// (outputs.json) into the output directory.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "cli_common.h"
#include "commands.h"
#include "interpreter/interpreter.h"
#include "kiln/sdk/shape_string.h"
#include "npy.h"

namespace kiln::cli {
namespace {

struct RunOptions {
  std::string model_path;
  std::string signature;  // "" = the primary subgraph
  std::vector<std::pair<std::string, std::string>> input_files;  // name, file
  bool random_inputs = false;
  uint32_t seed = 1;
  std::string output_dir = "kiln-out";
  bool json = false;
  InterpreterOptions interpreter;
};

// One output of the run, with the file it goes to.
struct RunOutput {
  int index = 0;
  std::string name;
  NpyArray array;    // type, shape and bytes of the tensor
  std::string file;  // "<name>.npy" inside the output directory
};

struct RunReport {
  std::string model_path;
  std::string signature;
  std::string output_dir;
  std::vector<RunOutput> outputs;
};

// ---- Parse ---------------------------------------------------------------

absl::Status AddInputFlag(absl::string_view value, RunOptions* o) {
  if (value == "random") {
    o->random_inputs = true;
    return absl::OkStatus();
  }
  const size_t eq = value.rfind('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return UsageError(absl::StrCat(
        "--input expects NAME=FILE.npy or 'random', got '", value, "'"));
  }
  o->input_files.emplace_back(value.substr(0, eq), value.substr(eq + 1));
  return absl::OkStatus();
}

FlagParser RunFlags(RunOptions& o) {
  FlagParser flags("kiln run",
                   "Runs MODEL once and writes every output as <name>.npy, "
                   "plus\noutputs.json listing them, into the output "
                   "directory.");
  flags.Positional("MODEL", &o.model_path, "the model file (.tflite)")
      .String("--signature", "KEY", &o.signature,
              "run this signature (inputs/outputs by name)")
      .Custom(
          "--input", "NAME=FILE.npy|random",
          [&o](absl::string_view v) { return AddInputFlag(v, &o); },
          "value of input NAME (tensor or signature name,\nor its index); "
          "'random': seeded random values\nfor every input not given",
          FlagParser::Repeat::kYes)
      .Int("--seed", "N", &o.seed, "seed for --input random (default 1)")
      .String("--output-dir", "DIR", &o.output_dir,
              "where outputs go (default ./kiln-out)")
      .Bool("--json", &o.json,
            "print outputs.json instead of one line per output");
  AddLimitFlags(flags, &o.interpreter);
  AddPluginFlags(flags, &o.interpreter.plugins);
  AddDelegateFlags(flags, &o.interpreter.delegates);
  AddThreadsFlag(flags, &o.interpreter.num_threads);
  return flags;
}

// ---- Collect -------------------------------------------------------------

// An input slot: a tensor with its user-facing name.
struct Slot {
  std::string name;
  TensorState* tensor;
};

// What `kiln run` runs: a signature (by its names) or the primary subgraph.
class RunTarget {
 public:
  RunTarget(Interpreter& interpreter, SignatureRunner* signature)
      : interpreter_(interpreter), signature_(signature) {}

  std::vector<Slot> Inputs() const {
    std::vector<Slot> slots;
    if (signature_ != nullptr) {
      for (int i = 0; i < signature_->num_inputs(); ++i) {
        const std::string& name = signature_->input_name(i);
        slots.push_back({name, signature_->input(name)});
      }
    } else {
      for (int i = 0; i < interpreter_.num_inputs(); ++i) {
        slots.push_back(
            {interpreter_.input(i)->desc->name, interpreter_.input(i)});
      }
    }
    return slots;
  }
  absl::Status Resize(int index, const std::string& name,
                      const std::vector<int32_t>& shape) {
    return signature_ != nullptr ? signature_->ResizeInput(name, shape)
                                 : interpreter_.ResizeInput(index, shape);
  }
  absl::Status Allocate() {
    return signature_ != nullptr ? signature_->AllocateTensors()
                                 : interpreter_.AllocateTensors();
  }
  absl::Status Invoke() {
    return signature_ != nullptr ? signature_->Invoke() : interpreter_.Invoke();
  }
  int num_outputs() const {
    return signature_ != nullptr ? signature_->num_outputs()
                                 : interpreter_.num_outputs();
  }
  std::string output_name(int i) const {
    return signature_ != nullptr ? signature_->output_name(i)
                                 : interpreter_.output(i)->desc->name;
  }
  const TensorState* output(int i) const {
    return signature_ != nullptr ? signature_->output(output_name(i))
                                 : interpreter_.output(i);
  }

 private:
  Interpreter& interpreter_;
  SignatureRunner* signature_;
};

void FillRandom(TensorState& t, std::mt19937& rng) {
  std::uniform_real_distribution<float> real(-1.f, 1.f);
  std::uniform_int_distribution<int> small(0, 2);
  const int64_t n = t.NumElements();
  for (int64_t i = 0; i < n; ++i) {
    switch (t.desc->type) {
      case KILN_TYPE_FLOAT32:
        static_cast<float*>(t.data)[i] = real(rng);
        break;
      case KILN_TYPE_INT32:
        static_cast<int32_t*>(t.data)[i] = small(rng);
        break;
      case KILN_TYPE_INT64:
        static_cast<int64_t*>(t.data)[i] = small(rng);
        break;
      case KILN_TYPE_BOOL:
        static_cast<bool*>(t.data)[i] = small(rng) == 1;
        break;
      case KILN_TYPE_INT8:
        static_cast<int8_t*>(t.data)[i] = static_cast<int8_t>(small(rng));
        break;
      case KILN_TYPE_UINT8:
        static_cast<uint8_t*>(t.data)[i] = static_cast<uint8_t>(small(rng));
        break;
      default:
        std::memset(t.data, 0, t.bytes);
        return;
    }
  }
}

// The slot `name` refers to (its name or its index; the last match wins).
absl::StatusOr<int> FindInput(const std::vector<Slot>& slots,
                              const std::string& name) {
  int index = -1;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].name == name || std::to_string(i) == name) {
      index = static_cast<int>(i);
    }
  }
  if (index >= 0) return index;
  std::string names;
  for (const Slot& s : slots) absl::StrAppend(&names, " '", s.name, "'");
  return absl::NotFoundError(absl::StrCat("the model has no input named '",
                                          name, "'; its inputs are:", names));
}

// OK when an array of `shape` may be given for `slot`: the dimensions the
// model fixes (its shape signature, else its declared shape) match, -1
// dimensions of the signature may be anything.
absl::Status CheckInputShape(const Slot& slot,
                             const std::vector<int32_t>& shape,
                             const std::string& file) {
  const TensorState& t = *slot.tensor;
  if (!t.has_rank) return absl::OkStatus();
  const std::vector<int32_t>& fixed =
      t.desc->shape_signature.empty() ? t.shape : t.desc->shape_signature;
  bool fits = fixed.size() == shape.size();
  for (size_t d = 0; fits && d < shape.size(); ++d) {
    fits = fixed[d] < 0 || fixed[d] == shape[d];
  }
  if (fits) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "input '", slot.name, "' has shape ", CompactList(fixed),
      " in the model but ", file, " holds an array of shape ",
      CompactList(shape),
      "; only dimensions marked -1 in the model's shape signature may "
      "differ. Pass an array of the input's shape"));
}

// Reads the --input files, resizing inputs whose shapes differ. Each file's
// header is checked against its input (type, shape, the size limit) before
// its data is read. Returns the arrays by input index.
absl::StatusOr<std::vector<std::pair<int, NpyArray>>> ReadInputs(
    const RunOptions& o, RunTarget& target) {
  std::vector<std::pair<int, NpyArray>> values;
  const std::vector<Slot> slots = target.Inputs();
  std::vector<std::string> given(slots.size());
  for (const auto& [name, file] : o.input_files) {
    KILN_ASSIGN_OR_RETURN(const int index, FindInput(slots, name));
    const Slot& slot = slots[static_cast<size_t>(index)];
    std::string& earlier = given[static_cast<size_t>(index)];
    if (!earlier.empty()) {
      return UsageError(absl::StrCat("input '", slot.name,
                                     "' is given twice (--input ", earlier,
                                     " and --input ", name, "=", file, ")"));
    }
    earlier = absl::StrCat(name, "=", file);
    KILN_ASSIGN_OR_RETURN(const NpyHeaderInfo header, ReadNpyHeader(file));
    if (header.type != slot.tensor->desc->type) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", name, "' is ", DtypeName(slot.tensor->desc->type), " but ",
          file, " holds ", DtypeName(header.type)));
    }
    KILN_RETURN_IF_ERROR(CheckInputShape(slot, header.shape, file));
    if (header.shape != slot.tensor->shape || !slot.tensor->has_rank) {
      // Refuses shapes over the interpreter's limits.
      KILN_RETURN_IF_ERROR(target.Resize(index, slot.name, header.shape));
    }
    KILN_ASSIGN_OR_RETURN(NpyArray array, ReadNpyData(header));
    values.emplace_back(index, std::move(array));
  }
  return values;
}

// Copies the given values into the allocated inputs and fills the rest with
// seeded random values (--input random) or fails naming the first missing.
absl::Status SetInputs(const RunOptions& o, RunTarget& target,
                       const std::vector<std::pair<int, NpyArray>>& values) {
  const std::vector<Slot> slots = target.Inputs();
  std::vector<bool> given(slots.size(), false);
  for (const auto& [index, array] : values) {
    const Slot& slot = slots[static_cast<size_t>(index)];
    if (slot.tensor->data == nullptr ||
        slot.tensor->bytes != array.data.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", slot.name, "' expects ", slot.tensor->bytes,
                       " bytes, the file holds ", array.data.size()));
    }
    std::memcpy(slot.tensor->data, array.data.data(), array.data.size());
    given[static_cast<size_t>(index)] = true;
  }
  std::mt19937 rng(o.seed);
  for (size_t i = 0; i < slots.size(); ++i) {
    if (given[i]) continue;
    if (!o.random_inputs) {
      return UsageError(absl::StrCat("no value for input '", slots[i].name,
                                     "'; pass --input ", slots[i].name,
                                     "=FILE.npy or --input random"));
    }
    if (slots[i].tensor->data != nullptr) FillRandom(*slots[i].tensor, rng);
  }
  return absl::OkStatus();
}

std::string SanitizeFileName(const std::string& name, int index) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    out += ok ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") {
    out = absl::StrCat("output_", index);
  }
  return out;
}

absl::StatusOr<std::vector<RunOutput>> CollectOutputs(const RunTarget& target) {
  std::vector<RunOutput> outputs;
  for (int i = 0; i < target.num_outputs(); ++i) {
    RunOutput out;
    out.index = i;
    out.name = target.output_name(i);
    const TensorState* t = target.output(i);
    if (t == nullptr || (t->data == nullptr && t->NumElements() > 0)) {
      return absl::InternalError(
          absl::StrCat("output '", out.name, "' has no data"));
    }
    // The type now: a kernel's prepare may have set it (tensor_set_type).
    out.array.type = t->ElementType();
    out.array.shape = t->shape;
    const auto* bytes = static_cast<const uint8_t*>(t->data);
    out.array.data.assign(bytes, bytes + (bytes == nullptr ? 0 : t->bytes));
    out.file = SanitizeFileName(out.name, i) + ".npy";
    for (const RunOutput& earlier : outputs) {
      if (earlier.file == out.file)
        out.file = absl::StrCat("output_", i, ".npy");
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

absl::StatusOr<RunReport> CollectRun(const RunOptions& o) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Interpreter> interpreter,
                        OpenInterpreter(o.model_path, o.interpreter));
  SignatureRunner* signature = nullptr;
  if (!o.signature.empty()) {
    KILN_ASSIGN_OR_RETURN(signature,
                          interpreter->GetSignatureRunner(o.signature));
  }
  RunTarget target(*interpreter, signature);
  KILN_ASSIGN_OR_RETURN(const auto values, ReadInputs(o, target));
  KILN_RETURN_IF_ERROR(target.Allocate());
  KILN_RETURN_IF_ERROR(SetInputs(o, target, values));
  KILN_RETURN_IF_ERROR(target.Invoke());
  RunReport report{o.model_path, o.signature, o.output_dir, {}};
  KILN_ASSIGN_OR_RETURN(report.outputs, CollectOutputs(target));
  return report;
}

// ---- Render --------------------------------------------------------------

std::string OutputPath(const RunReport& r, const RunOutput& out) {
  return (std::filesystem::path(r.output_dir) / out.file).string();
}

// The manifest: outputs.json, and the --json output.
Json RunToJson(const RunReport& r) {
  Json j;
  j["model"] = r.model_path;
  j["signature"] = r.signature;
  j["outputs"] = Json::array();
  for (const RunOutput& out : r.outputs) {
    j["outputs"].push_back({{"index", out.index},
                            {"name", out.name},
                            {"file", out.file},
                            {"dtype", DtypeName(out.array.type)},
                            {"shape", out.array.shape}});
  }
  return j;
}

std::string RunToText(const RunReport& r) {
  std::string s;
  for (const RunOutput& out : r.outputs) {
    absl::StrAppend(&s, "output ", out.index, " '", out.name, "' ",
                    DtypeName(out.array.type), " ",
                    sdk::ShapeString(out.array.shape), " -> ",
                    OutputPath(r, out), "\n");
  }
  return s;
}

// Writes every output as .npy and the manifest into the output directory.
absl::Status WriteOutputs(const RunReport& r) {
  std::error_code ec;
  std::filesystem::create_directories(r.output_dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot create output directory '", r.output_dir, "': ", ec.message()));
  }
  for (const RunOutput& out : r.outputs) {
    KILN_RETURN_IF_ERROR(WriteNpy(OutputPath(r, out), out.array));
  }
  const std::filesystem::path manifest =
      std::filesystem::path(r.output_dir) / "outputs.json";
  std::ofstream out(manifest);
  out << JsonText(RunToJson(r));
  if (!out) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write '", manifest.string(), "'"));
  }
  return absl::OkStatus();
}

}  // namespace

int RunCommand(std::vector<std::string> args) {
  RunOptions options;
  return CommandMain(RunFlags(options), args, [&]() -> absl::StatusOr<int> {
    KILN_ASSIGN_OR_RETURN(const RunReport report, CollectRun(options));
    KILN_RETURN_IF_ERROR(WriteOutputs(report));
    std::cout << (options.json ? JsonText(RunToJson(report))
                               : RunToText(report));
    return kExitSuccess;
  });
}

}  // namespace kiln::cli
