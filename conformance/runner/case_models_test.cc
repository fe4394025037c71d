// Version-true inputs, the graphs delegates are given, content hashes and
// the comparison with references; values checked by hand.
#include "case_models.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugin/plugin_loader.h"
#include "references.h"
#include "runtime/single_node_runner.h"
#include "version_inputs.h"

namespace kiln::conformance {
namespace {

using ::testing::HasSubstr;

const GeneratedTensor& Input(const GeneratedCase& c, size_t i) {
  return c.tensors[static_cast<size_t>(c.inputs[i])];
}

TEST(VersionTrueInputsTest, AbsVersionsGetTheTypesTheyIntroduced) {
  // TFLite: ABS v2 int8, v3 quantized int16, v4 int16, v5 int32.
  const struct {
    int32_t version;
    KilnTensorType type;
    bool quantized;
  } expected[] = {{1, KILN_TYPE_FLOAT32, false},
                  {2, KILN_TYPE_INT8, true},
                  {3, KILN_TYPE_INT16, true},
                  {4, KILN_TYPE_INT16, false},
                  {5, KILN_TYPE_INT32, false}};
  for (const auto& e : expected) {
    SCOPED_TRACE(e.version);
    absl::StatusOr<GeneratedCase> c = GenerateCase(KILN_OP_ABS, 1, e.version);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->exercises_version, e.version);
    EXPECT_EQ(Input(*c, 0).type, e.type);
    EXPECT_EQ(Input(*c, 0).quantization.quantized(), e.quantized);
    const GeneratedTensor& out = c->tensors[static_cast<size_t>(c->outputs[0])];
    EXPECT_EQ(out.type, e.type);
    EXPECT_EQ(out.quantization.quantized(), e.quantized);
  }
  EXPECT_EQ(InputVersion(KILN_OP_ABS, 9), 5);
  EXPECT_EQ(InputVersion(KILN_OP_ADD, 3), 3);
  EXPECT_EQ(InputVersion(KILN_OP_RESHAPE, 1), 1);  // no version changes it
  EXPECT_EQ(InputVersions(KILN_OP_ABS), (std::vector<int32_t>{1, 2, 3, 4, 5}));
}

TEST(VersionTrueInputsTest, ConvolutionsGetHybridAndIntegerInputs) {
  // CONV_2D v2 hybrid (float input, int8 weights), v3 int8 with per-channel
  // weights and an int32 bias of scale input_scale * weight_scale[c], v4
  // int16 activations with an int64 bias (TFLite's op versioning).
  absl::StatusOr<GeneratedCase> hybrid = GenerateCase(KILN_OP_CONV_2D, 1, 2);
  ASSERT_TRUE(hybrid.ok());
  EXPECT_EQ(Input(*hybrid, 0).type, KILN_TYPE_FLOAT32);
  EXPECT_EQ(Input(*hybrid, 1).type, KILN_TYPE_INT8);
  EXPECT_EQ(Input(*hybrid, 1).quantization.scales.size(), 1u);
  EXPECT_EQ(Input(*hybrid, 2).type, KILN_TYPE_FLOAT32);
  absl::StatusOr<GeneratedCase> int8 = GenerateCase(KILN_OP_CONV_2D, 1, 3);
  ASSERT_TRUE(int8.ok());
  const GeneratedTensor& w = Input(*int8, 1);
  const GeneratedTensor& bias = Input(*int8, 2);
  EXPECT_EQ(Input(*int8, 0).type, KILN_TYPE_INT8);
  EXPECT_EQ(w.quantization.scales.size(), 4u);  // output channels
  EXPECT_EQ(w.quantization.quantized_dimension, 0);
  EXPECT_EQ(bias.type, KILN_TYPE_INT32);
  ASSERT_EQ(bias.quantization.scales.size(), 4u);
  for (size_t c = 0; c < 4; ++c) {
    EXPECT_FLOAT_EQ(
        bias.quantization.scales[c],
        Input(*int8, 0).quantization.scales[0] * w.quantization.scales[c]);
  }
  absl::StatusOr<GeneratedCase> int16 = GenerateCase(KILN_OP_CONV_2D, 1, 4);
  ASSERT_TRUE(int16.ok());
  EXPECT_EQ(Input(*int16, 0).type, KILN_TYPE_INT16);
  EXPECT_EQ(Input(*int16, 2).type, KILN_TYPE_INT64);
  // DEPTHWISE_CONV_2D: per channel along the last weight axis.
  absl::StatusOr<GeneratedCase> dw =
      GenerateCase(KILN_OP_DEPTHWISE_CONV_2D, 1, 3);
  ASSERT_TRUE(dw.ok());
  EXPECT_EQ(Input(*dw, 1).quantization.quantized_dimension, 3);
}

TEST(VersionTrueInputsTest, ShapesAndOptionsOfNewerVersions) {
  absl::StatusOr<GeneratedCase> sub = GenerateCase(KILN_OP_SUB, 1, 3);
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(Input(*sub, 0).shape.size(), 5u);  // broadcast of rank 5
  EXPECT_EQ(sub->exercises_version, 3);
  absl::StatusOr<GeneratedCase> pad = GenerateCase(KILN_OP_PAD, 1, 4);
  ASSERT_TRUE(pad.ok());
  EXPECT_EQ(Input(*pad, 0).shape.size(), 5u);
  EXPECT_EQ(Input(*pad, 1).shape, (std::vector<int32_t>{5, 2}));
  absl::StatusOr<GeneratedCase> fc =
      GenerateCase(KILN_OP_FULLY_CONNECTED, 1, 6);
  ASSERT_TRUE(fc.ok());
  EXPECT_EQ(fc->inputs.size(), 2u);  // no bias
  absl::StatusOr<GeneratedCase> softmax = GenerateCase(KILN_OP_SOFTMAX, 1, 2);
  ASSERT_TRUE(softmax.ok());
  const GeneratedTensor& out =
      softmax->tensors[static_cast<size_t>(softmax->outputs[0])];
  EXPECT_FLOAT_EQ(out.quantization.scales[0], 1.f / 256);  // TFLite's rule
  EXPECT_EQ(out.quantization.zero_points[0], -128);
  absl::StatusOr<GeneratedCase> dq = GenerateCase(KILN_OP_DEQUANTIZE, 1, 1);
  ASSERT_TRUE(dq.ok());
  EXPECT_EQ(Input(*dq, 0).type, KILN_TYPE_UINT8);
  EXPECT_EQ(Input(*dq, 0).quantization.zero_points[0], 128);
}

TEST(VersionTrueInputsTest, QuantizedValuesRoundTrip) {
  absl::StatusOr<GeneratedCase> f = GenerateCase(KILN_OP_ABS, 1, 1);
  absl::StatusOr<GeneratedCase> q = GenerateCase(KILN_OP_ABS, 1, 2);
  ASSERT_TRUE(f.ok() && q.ok());
  const GeneratedTensor& x = Input(*f, 0);
  const GeneratedTensor& xq = Input(*q, 0);
  ASSERT_EQ(xq.bytes.size() * sizeof(float), x.bytes.size());
  const float scale = xq.quantization.scales[0];
  EXPECT_EQ(xq.quantization.zero_points[0], 0);
  for (size_t i = 0; i < xq.bytes.size(); ++i) {
    float v;
    std::memcpy(&v, x.bytes.data() + i * sizeof(float), sizeof(float));
    const auto code = static_cast<int8_t>(xq.bytes[i]);
    EXPECT_NEAR(code * scale, v, scale / 2 + 1e-6) << i;
  }
}

TEST(CaseModelsTest, GraphsForDelegates) {
  absl::StatusOr<GeneratedGraph> chain =
      MakeGraph(kGraphChain, KILN_OP_ADD, 1, 1);
  ASSERT_TRUE(chain.ok()) << chain.status();
  EXPECT_EQ(chain->key, "ADD.v1.chain.s1");
  ASSERT_EQ(chain->nodes.size(), 3u);
  EXPECT_EQ(chain->nodes[1].inputs[0], chain->nodes[0].outputs[0]);
  // Every intermediate has the static shape of x, so a delegate sees it.
  const std::vector<int32_t> x_shape =
      chain->tensors[static_cast<size_t>(chain->inputs[0])].shape;
  EXPECT_EQ(
      chain->tensors[static_cast<size_t>(chain->nodes[0].outputs[0])].shape,
      x_shape);
  absl::StatusOr<GeneratedGraph> cut =
      MakeGraph(kGraphInterrupted, KILN_OP_ADD, 1, 1, KILN_OP_FLOOR);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->key, "ADD.v1.interrupted.FLOOR.s1");
  EXPECT_EQ(cut->nodes[1].builtin_code, KILN_OP_FLOOR);
  absl::StatusOr<GeneratedGraph> same =
      MakeGraph(kGraphSingle, KILN_OP_MUL, 1, 1, 0, /*same_shape=*/true);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->tensors[static_cast<size_t>(same->inputs[1])].shape,
            same->tensors[static_cast<size_t>(same->inputs[0])].shape);
  EXPECT_FALSE(MakeGraph(kGraphChain, KILN_OP_CONV_2D, 1, 1).ok());
  EXPECT_TRUE(BuildGraphModel(*cut).ok());
}

TEST(CaseModelsTest, ContentHashFollowsTheContent) {
  absl::StatusOr<GeneratedGraph> a = MakeGraph(kGraphSingle, KILN_OP_ADD, 1, 1);
  absl::StatusOr<GeneratedGraph> b = MakeGraph(kGraphSingle, KILN_OP_ADD, 1, 1);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(GraphHash(*a), GraphHash(*b));
  b->tensors[static_cast<size_t>(b->inputs[0])].bytes[0] ^= 1;
  EXPECT_NE(GraphHash(*a), GraphHash(*b));
  absl::StatusOr<GeneratedGraph> v2 =
      MakeGraph(kGraphSingle, KILN_OP_ADD, 2, 1);
  ASSERT_TRUE(v2.ok());
  EXPECT_NE(GraphHash(*a), GraphHash(*v2));  // the node's version
}

TEST(ReferencesTest, StaleReferenceIsNotUsed) {
  absl::StatusOr<GeneratedGraph> g = MakeGraph(kGraphSingle, KILN_OP_ADD, 1, 1);
  ASSERT_TRUE(g.ok());
  const std::string dir =
      (std::filesystem::temp_directory_path() /
       ("kiln_references_test_" + std::to_string(::getpid())))
          .string();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/" + g->key + ".json")
      << R"({"key":")" << g->key
      << R"(","model_hash":"0000000000000000","outputs":[)"
      << R"({"type":"FLOAT32","shape":[1],"values":[1.0]}]})";
  absl::StatusOr<Reference> r = FindGraphReference(dir, *g);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("stale"));
  EXPECT_EQ(FindGraphReference(dir + "/none", *g).status().code(),
            absl::StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

TEST(ReferencesTest, ComparisonRules) {
  ReferenceOutput want;
  want.type = KILN_TYPE_INT8;
  want.shape = {3};
  want.values = {1, -5, 100};
  const int8_t off_by_one[3] = {2, -5, 99}, off_by_two[3] = {1, -3, 100};
  EXPECT_THAT(CompareWithReference(KILN_TYPE_INT8, {3}, off_by_one, 3, want,
                                   1e-5, 1e-4),
              HasSubstr("exact match required"));
  want.quantized = true;  // one quantization step allowed
  EXPECT_EQ(CompareWithReference(KILN_TYPE_INT8, {3}, off_by_one, 3, want, 1e-5,
                                 1e-4),
            "");
  EXPECT_THAT(CompareWithReference(KILN_TYPE_INT8, {3}, off_by_two, 3, want,
                                   1e-5, 1e-4),
              HasSubstr("1 of 3 elements differ"));
  ReferenceOutput f;
  f.type = KILN_TYPE_FLOAT32;
  f.shape = {2};
  f.values = {1.0, 100.0};
  const float close[2] = {1.000005f, 100.005f}, far[2] = {1.f, 100.1f};
  EXPECT_EQ(
      CompareWithReference(KILN_TYPE_FLOAT32, {2}, close, 8, f, 1e-5, 1e-4),
      "");
  EXPECT_THAT(
      CompareWithReference(KILN_TYPE_FLOAT32, {2}, far, 8, f, 1e-5, 1e-4),
      HasSubstr("first at flat index 1"));
  EXPECT_THAT(
      CompareWithReference(KILN_TYPE_FLOAT32, {1, 2}, far, 8, f, 1e-5, 1e-4),
      HasSubstr("output shape [1,2], reference [2]"));
}

// Every (op, version) the in-tree CPU plugin declares has inputs of its own
// (what TFLite's op versioning says that version introduced), or is a
// listed gap with its reason (kVersionGaps): a version added to the plugin
// without a version-true case fails here instead of silently running an
// older version's inputs.
TEST(VersionTrueInputsTest, EveryVersionTheCpuPluginDeclaresHasItsOwnInputs) {
  const std::string path = DefaultPluginDirectory() + "/libkiln_cpu.so";
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin =
      LoadPluginForTest(path);
  ASSERT_TRUE(plugin.ok()) << path << ": " << plugin.status();
  std::vector<std::string> missing, gaps;
  int covered = 0;
  for (const KilnKernel* k : (*plugin)->kernels()) {
    if (k->builtin_code == KILN_OP_CUSTOM) continue;
    for (int32_t v = k->min_version; v <= k->max_version; ++v) {
      const std::string name =
          absl::StrCat(BuiltinOpName(k->builtin_code), " v", v);
      if (const char* why = VersionInputsGap(k->builtin_code, v)) {
        gaps.push_back(absl::StrCat(name, ": ", why));
        continue;
      }
      const bool has = v == 1 ? GenerateCase(k->builtin_code, 1).ok()
                              : HasVersionInputs(k->builtin_code, v);
      if (has) {
        ++covered;
      } else {
        missing.push_back(name);
      }
    }
  }
  for (const std::string& g : gaps) std::printf("listed gap: %s\n", g.c_str());
  std::printf("%d declared op versions with version-true inputs, %zu gaps\n",
              covered, gaps.size());
  EXPECT_THAT(missing, ::testing::IsEmpty())
      << "declared by " << path
      << " without version-true inputs: add them to kVersionInputs "
         "(conformance/runner/version_inputs.cc, from TFLite's "
         "tools/versioning/op_version.cc) and regenerate the references, or "
         "list the version in kVersionGaps with the reason";
}

// A listed gap is one the generators really lack: no listed version inputs
// for it.
TEST(VersionTrueInputsTest, ListedGapsHaveNoInputs) {
  for (int32_t op = 0; op <= KILN_OP_STABLEHLO_CASE; ++op) {
    for (int32_t v = 2; v <= 16; ++v) {
      if (VersionInputsGap(op, v) != nullptr) {
        EXPECT_FALSE(HasVersionInputs(op, v)) << BuiltinOpName(op) << " v" << v;
      }
    }
  }
}

}  // namespace
}  // namespace kiln::conformance
