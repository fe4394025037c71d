// `kiln build-example OUT.tflite [--large-weights-mb N [--external-data]]`:
// writes a model made by Kiln's model builder, so Kiln can be tried with no
// download. The default is a small CNN (see host/src/model/example_models.h).
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "cli_common.h"
#include "commands.h"
#include "kiln/kiln_builtin_ops.h"
#include "model/example_models.h"
#include "model/model_builder.h"
#include "runtime/graph.h"

namespace kiln::cli {
namespace {

struct BuildExampleOptions {
  std::string out_path;
  uint64_t large_weights_mb = 0;
  bool external_data = false;
  std::string single_op;  // NAME[:VERSION]
};

FlagParser BuildExampleFlags(BuildExampleOptions& o) {
  FlagParser flags(
      "kiln build-example",
      "Writes a small example CNN (input 'image' [1,16,16,3] float32,\n"
      "output 'probabilities' [1,10]), or with --large-weights-mb a\n"
      "chain of FULLY_CONNECTED layers holding at least N MiB of\n"
      "weights (--external-data stores them after the FlatBuffer), or\n"
      "with --single-op one unary float32 op 'x' [1,8] -> 'y' [1,8]\n"
      "(a builtin name such as RELU, or a custom op name).");
  flags.Positional("OUT.tflite", &o.out_path, "where the model goes")
      .Int("--large-weights-mb", "N", &o.large_weights_mb,
           "a model with at least N MiB of weights")
      .Bool("--external-data", &o.external_data,
            "with --large-weights-mb: weights after the FlatBuffer")
      .String("--single-op", "NAME[:VERSION]", &o.single_op,
              "a model of one unary op");
  return flags;
}

// A model with one unary float32 op: "x" [1,8] -> OP -> "y" [1,8]. `spec` is
// NAME[:VERSION]; NAME is a builtin op name (e.g. RELU) or else a custom op
// name (e.g. acme.SoftSign).
absl::StatusOr<std::vector<uint8_t>> BuildSingleOpModel(
    const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  int32_t version = 1;
  if (colon != std::string::npos &&
      (!absl::SimpleAtoi(spec.substr(colon + 1), &version) || version < 1)) {
    return absl::InvalidArgumentError("--single-op " + spec +
                                      ": the version must be >= 1");
  }
  int32_t builtin = -1;
  for (int32_t code = 0; code <= 255; ++code) {
    if (code != KILN_OP_CUSTOM && name == BuiltinOpName(code)) builtin = code;
  }
  ModelBuilder b;
  b.SetDescription("Kiln single-op example: " + spec);
  SubgraphBuilder& g = b.AddSubgraph("main");
  TensorSpec io;
  io.shape = {1, 8};
  io.name = "x";
  const int32_t x = g.AddTensor(io);
  io.name = "y";
  const int32_t y = g.AddTensor(io);
  if (builtin >= 0) {
    g.AddOperator(builtin, version, {x}, {y});
  } else {
    g.AddCustomOperator(name, version, {x}, {y});
  }
  g.SetInputs({x});
  g.SetOutputs({y});
  return b.Build();
}

absl::StatusOr<std::vector<uint8_t>> BuildModel(const BuildExampleOptions& o) {
  if (!o.single_op.empty()) return BuildSingleOpModel(o.single_op);
  if (o.large_weights_mb > 0) {
    return BuildLargeWeightsModel(o.large_weights_mb << 20, o.external_data);
  }
  return BuildExampleCnnModel();
}

absl::Status WriteModel(const std::string& path,
                        const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()),
          static_cast<std::streamsize>(bytes.size()));
  if (!f) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

int BuildExampleCommand(std::vector<std::string> args) {
  BuildExampleOptions options;
  return CommandMain(
      BuildExampleFlags(options), args, [&]() -> absl::StatusOr<int> {
        KILN_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes,
                              BuildModel(options));
        KILN_RETURN_IF_ERROR(WriteModel(options.out_path, bytes));
        std::cout << "wrote " << options.out_path << " (" << bytes.size()
                  << " bytes)\n";
        return kExitSuccess;
      });
}

}  // namespace kiln::cli
