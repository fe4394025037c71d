// Writes the models of the hardening tests (issue 10) into a directory:
//   while_flag.tflite      b (bool [1]) -> WHILE (b) {} -> b_out: loops
//                          forever when b is true (host-intrinsic only)
//   while_forever.tflite   the same with a cond that is always true
//   bad_utf8_name.tflite   x -> RELU -> y, the output's name "y\xff\xfe"
//                          (invalid UTF-8)
//   constant_input.tflite  a subgraph input that is a constant (refused)
//   big_input.tflite       x [256,1024] float32 (1 MiB) -> RELU -> y
//   overflow_shape.tflite  x [2^30,2^30,4] float32 (size wraps; refused)
//
//   hardening_models OUT_DIR
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kiln/kiln_builtin_ops.h"
#include "model/example_models.h"
#include "model/model_builder.h"

namespace kiln {
namespace {

absl::Status Write(const std::string& path,
                   const absl::StatusOr<std::vector<uint8_t>>& bytes) {
  if (!bytes.ok()) return bytes.status();
  return WriteModelFile(path, *bytes);
}

// x -> RELU -> y with the given names and shape; `checked`: refuse a model
// Kiln would refuse.
absl::Status Relu(const std::string& path, const std::string& x_name,
                  const std::string& y_name, std::vector<int32_t> shape,
                  bool checked = true) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor(x_name, shape));
  const int32_t y = g.AddTensor(FloatTensor(y_name, shape));
  g.AddOperator(KILN_OP_RELU, 1, {x}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  if (checked) return b.WriteToFile(path);
  absl::StatusOr<std::vector<uint8_t>> bytes = b.BuildUnchecked();
  if (!bytes.ok()) return bytes.status();
  return WriteModelFile(path, *bytes);
}

absl::Status ConstantInput(const std::string& path) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t c = g.AddConstantTensor(FloatTensor("c", {4}),
                                        std::vector<float>{1, 2, 3, 4});
  const int32_t y = g.AddTensor(FloatTensor("y", {4}));
  g.AddOperator(KILN_OP_RELU, 1, {c}, {y});
  g.SetInputs({c});
  g.SetOutputs({y});
  absl::StatusOr<std::vector<uint8_t>> bytes = b.BuildUnchecked();
  if (!bytes.ok()) return bytes.status();
  return WriteModelFile(path, *bytes);
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: hardening_models OUT_DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const auto at = [&](const char* name) { return (dir / name).string(); };
  for (const absl::Status& s :
       {kiln::Write(at("while_flag.tflite"),
                    kiln::BuildWhileLoopModel(/*forever=*/false)),
        kiln::Write(at("while_forever.tflite"),
                    kiln::BuildWhileLoopModel(/*forever=*/true)),
        kiln::Relu(at("bad_utf8_name.tflite"), "x", "y\xff\xfe", {4}),
        kiln::ConstantInput(at("constant_input.tflite")),
        kiln::Relu(at("big_input.tflite"), "x", "y", {256, 1024}),
        kiln::Relu(at("overflow_shape.tflite"), "x", "y", {1 << 30, 1 << 30, 4},
                   /*checked=*/false)}) {
    if (!s.ok()) {
      std::cerr << "hardening_models: " << s << "\n";
      return 1;
    }
  }
  return 0;
}
