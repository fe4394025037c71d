// Small helpers to hand-build kiln::Graph objects for delegate tests.
#ifndef KILN_PLUGINS_OPENCL_TESTS_GRAPH_BUILDER_H_
#define KILN_PLUGINS_OPENCL_TESTS_GRAPH_BUILDER_H_

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/graph.h"

namespace kiln::opencl_test {

class GraphBuilder {
 public:
  // A tensor; `values` empty = activation allocated later.
  int Tensor(KilnTensorType type, std::vector<int32_t> shape,
             const std::vector<float>& values = {}, bool constant = false) {
    kiln::Tensor t;
    t.name = "t" + std::to_string(graph_.tensors.size());
    t.type = type;
    t.shape = std::move(shape);
    if (!values.empty()) {
      t.AllocateOwned(values.size() * sizeof(float));
      std::memcpy(t.owned.data(), values.data(), t.owned.size());
      if (constant) t.storage = TensorStorage::kConstant;
    }
    graph_.tensors.push_back(std::move(t));
    return static_cast<int>(graph_.tensors.size() - 1);
  }
  int Random(std::vector<int32_t> shape, bool constant) {
    size_t n = 1;
    for (int32_t d : shape) n *= static_cast<size_t>(d);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng_);
    return Tensor(KILN_TYPE_FLOAT32, std::move(shape), v, constant);
  }
  Node& Op(int32_t code, int32_t version, std::vector<int32_t> inputs,
           std::vector<int32_t> outputs) {
    Node n;
    n.index = static_cast<int32_t>(graph_.nodes.size());
    n.builtin_code = code;
    n.version = version;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    graph_.execution_plan.push_back(n.index);
    graph_.nodes.push_back(std::move(n));
    return graph_.nodes.back();
  }
  Graph& graph() { return graph_; }

 private:
  Graph graph_;
  std::mt19937 rng_{42};
};

// A conv -> add -> relu -> softmax stack exercising all program groups;
// output tensor index in *output.
inline Graph ConvStack(int* output, int channels = 8, int size = 12) {
  GraphBuilder b;
  const int in = b.Random({1, size, size, 3}, false);
  const int f1 = b.Random({channels, 3, 3, 3}, true);
  const int b1 = b.Random({channels}, true);
  const int c1 = b.Tensor(KILN_TYPE_FLOAT32, {1, size, size, channels});
  Node& conv = b.Op(KILN_OP_CONV_2D, 1, {in, f1, b1}, {c1});
  conv.SetInt(KILN_OPTION_PADDING, KILN_PADDING_SAME);
  conv.SetInt(KILN_OPTION_STRIDE_W, 1);
  conv.SetInt(KILN_OPTION_STRIDE_H, 1);
  conv.SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU);
  const int f2 = b.Random({channels, 3, 3, channels}, true);
  const int c2 = b.Tensor(KILN_TYPE_FLOAT32, {1, size, size, channels});
  Node& conv2 = b.Op(KILN_OP_CONV_2D, 1, {c1, f2, -1}, {c2});
  conv2.SetInt(KILN_OPTION_PADDING, KILN_PADDING_SAME);
  conv2.SetInt(KILN_OPTION_STRIDE_W, 1);
  conv2.SetInt(KILN_OPTION_STRIDE_H, 1);
  const int sum = b.Tensor(KILN_TYPE_FLOAT32, {1, size, size, channels});
  b.Op(KILN_OP_ADD, 1, {c1, c2}, {sum})
      .SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU6);
  const int pooled =
      b.Tensor(KILN_TYPE_FLOAT32, {1, size / 2, size / 2, channels});
  Node& pool = b.Op(KILN_OP_MAX_POOL_2D, 1, {sum}, {pooled});
  pool.SetInt(KILN_OPTION_PADDING, KILN_PADDING_VALID);
  pool.SetInt(KILN_OPTION_FILTER_W, 2);
  pool.SetInt(KILN_OPTION_FILTER_H, 2);
  pool.SetInt(KILN_OPTION_STRIDE_W, 2);
  pool.SetInt(KILN_OPTION_STRIDE_H, 2);
  const int probs =
      b.Tensor(KILN_TYPE_FLOAT32, {1, size / 2, size / 2, channels});
  b.Op(KILN_OP_SOFTMAX, 1, {pooled}, {probs}).SetFloat(KILN_OPTION_BETA, 1.f);
  b.graph().inputs = {in};
  b.graph().outputs = {probs};
  *output = probs;
  // Copy, pointing owned tensor data at the copy's buffers.
  Graph copy = b.graph();
  for (kiln::Tensor& t : copy.tensors) {
    if (!t.owned.empty()) t.data = t.owned.data();
  }
  return copy;
}

}  // namespace kiln::opencl_test

#endif  // KILN_PLUGINS_OPENCL_TESTS_GRAPH_BUILDER_H_
