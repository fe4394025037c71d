// `kiln build-example OUT.tflite [--large-weights-mb N [--external-data]]`:
// writes a model made by Kiln's model builder, so Kiln can be tried with no
// download. The default is a small CNN (see host/src/model/example_models.h).
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "kiln/kiln_builtin_ops.h"
#include "model/example_models.h"
#include "model/model_builder.h"
#include "runtime/graph.h"

namespace kiln::cli {
namespace {

// A model with one unary float32 op: "x" [1,8] -> OP -> "y" [1,8]. `spec` is
// NAME[:VERSION]; NAME is a builtin op name (e.g. RELU) or else a custom op
// name (e.g. acme.SoftSign).
absl::StatusOr<std::vector<uint8_t>> BuildSingleOpModel(
    const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  int32_t version = 1;
  if (colon != std::string::npos) {
    try {
      version = std::stoi(spec.substr(colon + 1));
    } catch (...) {
      version = 0;
    }
    if (version < 1) {
      return absl::InvalidArgumentError("--single-op " + spec +
                                        ": the version must be >= 1");
    }
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

}  // namespace

int BuildExampleCommand(std::vector<std::string> args) {
  std::string out;
  uint64_t large_mb = 0;
  std::string single_op;
  bool external = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout
          << "usage: kiln build-example OUT.tflite [--large-weights-mb N "
             "[--external-data]] [--single-op NAME[:VERSION]]\n"
             "Writes a small example CNN (input 'image' [1,16,16,3] float32,\n"
             "output 'probabilities' [1,10]), or with --large-weights-mb a\n"
             "chain of FULLY_CONNECTED layers holding at least N MiB of\n"
             "weights (--external-data stores them after the FlatBuffer), or\n"
             "with --single-op one unary float32 op 'x' [1,8] -> 'y' [1,8]\n"
             "(a builtin name such as RELU, or a custom op name).\n";
      return 0;
    } else if (a == "--large-weights-mb" && i + 1 < args.size()) {
      try {
        large_mb = std::stoull(args[++i]);
      } catch (...) {
        std::cerr << "kiln build-example: --large-weights-mb needs a number\n";
        return 2;
      }
    } else if (a == "--single-op" && i + 1 < args.size()) {
      single_op = args[++i];
    } else if (a == "--external-data") {
      external = true;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "kiln build-example: unknown option '" << a << "'\n";
      return 2;
    } else if (out.empty()) {
      out = a;
    } else {
      std::cerr << "kiln build-example: unexpected argument '" << a << "'\n";
      return 2;
    }
  }
  if (out.empty()) {
    std::cerr << "kiln build-example: missing OUT.tflite\n";
    return 2;
  }
  absl::StatusOr<std::vector<uint8_t>> bytes =
      !single_op.empty() ? BuildSingleOpModel(single_op)
      : large_mb > 0     ? BuildLargeWeightsModel(large_mb << 20, external)
                         : BuildExampleCnnModel();
  if (!bytes.ok()) {
    std::cerr << "kiln build-example: " << bytes.status().message() << "\n";
    return 1;
  }
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes->data()),
          static_cast<std::streamsize>(bytes->size()));
  if (!f) {
    std::cerr << "kiln build-example: cannot write '" << out << "'\n";
    return 1;
  }
  std::cout << "wrote " << out << " (" << bytes->size() << " bytes)\n";
  return 0;
}

}  // namespace kiln::cli
