// Helpers for the elementwise kernel tests: run one node of the built CPU
// plugin through the real extension API and collect its output.
#ifndef KILN_PLUGINS_CPU_TESTS_ELEMENTWISE_TEST_UTIL_H_
#define KILN_PLUGINS_CPU_TESTS_ELEMENTWISE_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "runtime/single_node_runner.h"
#include "tests/cpu_kernel_test_util.h"

namespace kiln {

// One input of a test node: type, shape and raw values.
struct TestTensor {
  KilnTensorType type;
  std::vector<int32_t> shape;
  std::vector<uint8_t> bytes;
  Quantization quantization;

  template <typename T>
  static TestTensor Of(KilnTensorType type, std::vector<int32_t> shape,
                       const std::vector<T>& values) {
    TestTensor t{type, std::move(shape), {}, {}};
    t.bytes.resize(values.size() * sizeof(T));
    if (!values.empty())
      std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
  }
  TestTensor&& Quantized(std::vector<float> scales,
                         std::vector<int64_t> zero_points,
                         int32_t axis = 0) && {
    quantization.scales = std::move(scales);
    quantization.zero_points = std::move(zero_points);
    quantization.quantized_dimension = axis;
    return std::move(*this);
  }
};

inline TestTensor F32(std::vector<int32_t> shape, std::vector<float> v) {
  return TestTensor::Of(KILN_TYPE_FLOAT32, std::move(shape), v);
}
inline TestTensor I32(std::vector<int32_t> shape, std::vector<int32_t> v) {
  return TestTensor::Of(KILN_TYPE_INT32, std::move(shape), v);
}
inline TestTensor I64(std::vector<int32_t> shape, std::vector<int64_t> v) {
  return TestTensor::Of(KILN_TYPE_INT64, std::move(shape), v);
}
inline TestTensor Bool(std::vector<int32_t> shape, std::vector<uint8_t> v) {
  return TestTensor::Of(KILN_TYPE_BOOL, std::move(shape), v);
}

// The outcome of running one node.
template <typename T>
struct NodeResult {
  absl::Status status;
  std::vector<int32_t> shape;
  std::vector<T> values;
};

// Output specification: type and (optionally) quantization.
struct OutputSpec {
  KilnTensorType type;
  Quantization quantization;
};

class ElementwiseTest : public CpuKernelTest {
 protected:
  // Runs (code, version) on `inputs`; `options` may set node options.
  template <typename T>
  NodeResult<T> RunOn(const KilnKernel& kernel, int32_t code, int32_t version,
                      const std::vector<TestTensor>& inputs, OutputSpec output,
                      const std::function<void(Node&)>& options = {}) {
    SingleNodeRunner r;
    std::vector<int32_t> input_indices;
    for (const TestTensor& t : inputs) {
      const int index = r.AddTensor(t.type, t.shape,
                                    t.bytes.empty() ? nullptr : t.bytes.data(),
                                    t.bytes.size());
      r.tensor(index).quantization = t.quantization;
      input_indices.push_back(index);
    }
    const int out = r.AddTensor(output.type, {});
    r.tensor(out).quantization = output.quantization;
    r.SetOp(code, version, input_indices, {out});
    if (options) options(r.node());
    NodeResult<T> result;
    result.status = r.Run(kernel);
    if (result.status.ok()) {
      result.shape = r.tensor(out).shape;
      result.values = r.Values<T>(out);
    }
    return result;
  }

  template <typename T>
  NodeResult<T> Run(int32_t code, const std::vector<TestTensor>& inputs,
                    KilnTensorType out_type,
                    const std::function<void(Node&)>& options = {},
                    int32_t version = 1) {
    return RunOn<T>(Kernel(code, version), code, version, inputs,
                    OutputSpec{out_type, {}}, options);
  }

  // Float op with output FLOAT32.
  NodeResult<float> RunF(int32_t code, const std::vector<TestTensor>& inputs,
                         const std::function<void(Node&)>& options = {}) {
    return Run<float>(code, inputs, KILN_TYPE_FLOAT32, options);
  }

  // The message of a failed run ("" when it succeeded).
  template <typename T>
  static std::string Message(const NodeResult<T>& r) {
    return std::string(r.status.message());
  }
};

// Sets the fused activation of a node.
inline std::function<void(Node&)> Activation(int64_t activation) {
  return [activation](Node& n) {
    n.SetInt(KILN_OPTION_FUSED_ACTIVATION, activation);
  };
}

}  // namespace kiln

#endif  // KILN_PLUGINS_CPU_TESTS_ELEMENTWISE_TEST_UTIL_H_
