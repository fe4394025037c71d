// `kiln run MODEL [--signature KEY] [--input NAME=FILE.npy | --input random]
//            [--seed N] [--output-dir DIR] [plugin and delegate flags]`
// Runs a model once and writes every output as NAME.npy plus a manifest
// (outputs.json) into the output directory.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli_common.h"
#include "commands.h"
#include "interpreter/interpreter.h"
#include "nlohmann/json.hpp"
#include "npy.h"

namespace kiln::cli {
namespace {

constexpr const char* kRunHelp =
    "usage: kiln run MODEL [options]\n"
    "Runs MODEL once and writes every output as <name>.npy, plus\n"
    "outputs.json listing them, into the output directory.\n"
    "\n"
    "  --signature KEY        run this signature (inputs/outputs by name)\n"
    "  --input NAME=FILE.npy  value of input NAME (tensor or signature name,\n"
    "                         or its index); repeatable\n"
    "  --input random         seeded random values for every input not given\n"
    "  --seed N               seed for --input random (default 1)\n"
    "  --output-dir DIR       where outputs go (default ./kiln-out)\n";

// An input slot: a tensor with its user-facing name.
struct Slot {
  std::string name;
  TensorState* tensor;
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

}  // namespace

int RunCommand(std::vector<std::string> args) {
  InterpreterOptions options;
  std::string error;
  if (!ParsePluginFlags(args, &options.plugins, &error) ||
      !ParseDelegateFlags(args, &options.delegates, &error)) {
    std::cerr << "kiln run: " << error << "\n";
    return 2;
  }
  std::string model_path, signature, output_dir = "kiln-out";
  std::vector<std::pair<std::string, std::string>> input_files;
  bool random_inputs = false;
  uint32_t seed = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto next = [&](std::string* out) {
      if (i + 1 >= args.size()) {
        error = a + " needs a value";
        return false;
      }
      *out = args[++i];
      return true;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      std::cout << kRunHelp << kPluginFlagsHelp << kDelegateFlagsHelp;
      return 0;
    } else if (a == "--signature") {
      if (!next(&signature)) break;
    } else if (a == "--output-dir") {
      if (!next(&output_dir)) break;
    } else if (a == "--seed") {
      if (!next(&v)) break;
      seed = static_cast<uint32_t>(std::stoul(v));
    } else if (a == "--input") {
      if (!next(&v)) break;
      if (v == "random") {
        random_inputs = true;
        continue;
      }
      const size_t eq = v.rfind('=');
      if (eq == std::string::npos || eq == 0) {
        error = "--input expects NAME=FILE.npy or 'random', got '" + v + "'";
        break;
      }
      input_files.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (!a.empty() && a[0] == '-') {
      error = "unknown option '" + a + "'; see kiln run --help";
      break;
    } else if (model_path.empty()) {
      model_path = a;
    } else {
      error = "unexpected argument '" + a + "'";
      break;
    }
  }
  if (error.empty() && model_path.empty()) error = "missing MODEL";
  if (!error.empty()) {
    std::cerr << "kiln run: " << error << "\n";
    return 2;
  }

  absl::StatusOr<std::unique_ptr<Interpreter>> created =
      OpenInterpreter(model_path, options);
  if (!created.ok()) {
    std::cerr << "kiln run: " << created.status().message() << "\n";
    return 1;
  }
  Interpreter& interp = **created;
  SignatureRunner* runner = nullptr;
  if (!signature.empty()) {
    absl::StatusOr<SignatureRunner*> r = interp.GetSignatureRunner(signature);
    if (!r.ok()) {
      std::cerr << "kiln run: " << r.status().message() << "\n";
      return 1;
    }
    runner = *r;
  }
  auto input_slots = [&]() {
    std::vector<Slot> slots;
    if (runner != nullptr) {
      for (int i = 0; i < runner->num_inputs(); ++i) {
        slots.push_back(
            {runner->input_name(i), runner->input(runner->input_name(i))});
      }
    } else {
      for (int i = 0; i < interp.num_inputs(); ++i) {
        slots.push_back({interp.input(i)->desc->name, interp.input(i)});
      }
    }
    return slots;
  };
  auto fail = [&](const absl::Status& s) {
    std::cerr << "kiln run: " << s.message() << "\n";
    return 1;
  };

  // Read the given inputs and resize where their shapes differ.
  std::vector<std::pair<int, NpyArray>> values;
  std::vector<Slot> slots = input_slots();
  for (const auto& [name, file] : input_files) {
    int index = -1;
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].name == name || std::to_string(i) == name) {
        index = static_cast<int>(i);
      }
    }
    if (index < 0) {
      std::string names;
      for (const Slot& s : slots) absl::StrAppend(&names, " '", s.name, "'");
      std::cerr << "kiln run: the model has no input named '" << name
                << "'; its inputs are:" << names << "\n";
      return 1;
    }
    absl::StatusOr<NpyArray> array = ReadNpy(file);
    if (!array.ok()) return fail(array.status());
    TensorState* t = slots[static_cast<size_t>(index)].tensor;
    if (array->type != t->desc->type) {
      std::cerr << "kiln run: input '" << name << "' is " << DtypeName(t->desc->type)
                << " but " << file << " holds " << DtypeName(array->type)
                << "\n";
      return 1;
    }
    if (array->shape != t->shape || !t->has_rank) {
      absl::Status s =
          runner != nullptr
              ? runner->ResizeInput(
                    name == slots[index].name ? name : slots[index].name,
                    array->shape)
              : interp.ResizeInput(index, array->shape);
      if (!s.ok()) return fail(s);
    }
    values.emplace_back(index, *std::move(array));
  }
  if (absl::Status s = runner != nullptr ? runner->AllocateTensors()
                                         : interp.AllocateTensors();
      !s.ok()) {
    return fail(s);
  }
  slots = input_slots();
  std::vector<bool> given(slots.size(), false);
  for (auto& [index, array] : values) {
    TensorState* t = slots[static_cast<size_t>(index)].tensor;
    if (t->data == nullptr || t->bytes != array.data.size()) {
      std::cerr << "kiln run: input '" << slots[index].name << "' expects "
                << t->bytes << " bytes, the file holds " << array.data.size()
                << "\n";
      return 1;
    }
    std::memcpy(t->data, array.data.data(), array.data.size());
    given[static_cast<size_t>(index)] = true;
  }
  std::mt19937 rng(seed);
  for (size_t i = 0; i < slots.size(); ++i) {
    if (given[i]) continue;
    if (!random_inputs) {
      std::cerr << "kiln run: no value for input '" << slots[i].name
                << "'; pass --input " << slots[i].name
                << "=FILE.npy or --input random\n";
      return 2;
    }
    if (slots[i].tensor->data != nullptr) FillRandom(*slots[i].tensor, rng);
  }
  if (absl::Status s = runner != nullptr ? runner->Invoke() : interp.Invoke();
      !s.ok()) {
    return fail(s);
  }

  std::error_code ec;
  std::filesystem::create_directories(output_dir, ec);
  if (ec) {
    std::cerr << "kiln run: cannot create output directory '" << output_dir
              << "': " << ec.message() << "\n";
    return 1;
  }
  nlohmann::ordered_json manifest;
  manifest["model"] = model_path;
  manifest["signature"] = signature;
  manifest["outputs"] = nlohmann::ordered_json::array();
  const int num_outputs =
      runner != nullptr ? runner->num_outputs() : interp.num_outputs();
  for (int i = 0; i < num_outputs; ++i) {
    const std::string name =
        runner != nullptr ? runner->output_name(i) : interp.output(i)->desc->name;
    const TensorState* t =
        runner != nullptr ? runner->output(name) : interp.output(i);
    if (t == nullptr || (t->data == nullptr && t->NumElements() > 0)) {
      std::cerr << "kiln run: output '" << name << "' has no data\n";
      return 1;
    }
    NpyArray array;
    array.type = t->desc->type;
    array.shape = t->shape;
    const auto* bytes = static_cast<const uint8_t*>(t->data);
    array.data.assign(bytes, bytes + (bytes == nullptr ? 0 : t->bytes));
    std::string file = SanitizeFileName(name, i) + ".npy";
    for (const auto& o : manifest["outputs"]) {
      if (o["file"] == file) file = absl::StrCat("output_", i, ".npy");
    }
    if (absl::Status s = WriteNpy(
            (std::filesystem::path(output_dir) / file).string(), array);
        !s.ok()) {
      return fail(s);
    }
    manifest["outputs"].push_back({{"index", i},
                                   {"name", name},
                                   {"file", file},
                                   {"dtype", DtypeName(t->desc->type)},
                                   {"shape", t->shape}});
    std::cout << "output " << i << " '" << name << "' " << DtypeName(t->desc->type)
              << " " << ShapeString(t->shape) << " -> "
              << (std::filesystem::path(output_dir) / file).string() << "\n";
  }
  std::ofstream(std::filesystem::path(output_dir) / "outputs.json")
      << manifest.dump(2) << "\n";
  return 0;
}

}  // namespace kiln::cli
