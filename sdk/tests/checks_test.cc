// kiln/sdk/checks.h: each check run inside a kernel on a node served by the
// host's real extension API (SingleNodeRunner), with the exact message and
// status a plugin author and a user see.
#include "kiln/sdk/checks.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/host_api.h"
#include "runtime/single_node_runner.h"
#include "test_instance.h"

namespace kiln {
namespace {

using sdk::Input;
using sdk::KernelContext;
using sdk::Output;
using sdk::TypeSet;

std::function<KilnStatus(KernelContext&)>& Body() {
  static std::function<KilnStatus(KernelContext&)> body;
  return body;
}
KilnStatus RunBody(KernelContext& k) { return Body()(k); }
KilnStatus NoInvoke(KernelContext&) { return KILN_STATUS_OK; }

class SdkChecksTest : public ::testing::Test {
 protected:
  // Runs `body` as the prepare of a kernel for the runner's node, in a load
  // instance on this host's newest table.
  // `abi_version` picks the host table the instance is served.
  static absl::Status Prepare(SingleNodeRunner& r,
                              std::function<KilnStatus(KernelContext&)> body,
                              uint32_t abi_version = KILN_EXT_API_VERSION) {
    Body() = std::move(body);
    sdk::PluginDefinition definition("checks_test", "1.0.0");
    definition.AddKernel(sdk::MakeKernel<RunBody, NoInvoke>(
        r.node().builtin_code, 1, 1, r.node().custom_name.c_str()));
    const sdk_test::TestInstance instance(HostApiForVersion(abi_version),
                                          definition.descriptor());
    return r.Run(instance.kernel(0));
  }
  static std::string Prefixed(const std::string& message) {
    return "prepare failed: " + message;
  }
};

// An ADD node over FLOAT32 t0 [2, 3], INT8 t1 [3] -> FLOAT32 t2.
void AddNode(SingleNodeRunner& r) {
  r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, {1, 2, 3, 4, 5, 6});
  r.AddTensor<int8_t>(KILN_TYPE_INT8, {3}, {1, 2, 3});
  r.AddTensor(KILN_TYPE_FLOAT32, {2, 3});
  r.SetOp(KILN_OP_ADD, 1, {0, 1}, {2});
}

// KernelContext::num_intermediates / intermediate (extension API 1.3): a
// 1.3 table serves the node's intermediates; on a 1.2 table the kernel sees
// none, never a null function.
TEST_F(SdkChecksTest, IntermediatesFromExtensionApi13On) {
  for (const uint32_t minor : {3u, 2u}) {
    SingleNodeRunner r;
    AddNode(r);
    r.node().intermediates = {r.AddTensor(KILN_TYPE_INT16, {})};
    int32_t count = -1;
    std::string name = "(absent)";
    const absl::Status s = Prepare(
        r,
        [&](KernelContext& k) {
          count = k.num_intermediates();
          if (k.intermediate(0).present()) name = k.intermediate(0).name();
          return KILN_STATUS_OK;
        },
        KILN_MAKE_VERSION(1, minor, 0));
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(count, minor == 3 ? 1 : 0) << "1." << minor;
    EXPECT_EQ(name, minor == 3 ? "t3" : "(absent)") << "1." << minor;
  }
}

TEST(SdkTypeSetTest, ContainsAndPrintsInTypeOrder) {
  constexpr TypeSet set{KILN_TYPE_INT64, KILN_TYPE_FLOAT32, KILN_TYPE_UINT8};
  static_assert(set.contains(KILN_TYPE_INT64));
  static_assert(!set.contains(KILN_TYPE_INT32));
  static_assert(!set.contains(-1) && !set.contains(64) && !set.contains(1000));
  static_assert((set | TypeSet{KILN_TYPE_INT32}).contains(KILN_TYPE_INT32));
  static_assert(TypeSet{}.empty());
  EXPECT_EQ(set.ToString(), "FLOAT32, UINT8, INT64");
  EXPECT_EQ(sdk::kQuantizedTypes.ToString(), "UINT8, INT16, INT8");
}

TEST(SdkMessageTest, ShapesAndOperands) {
  EXPECT_EQ(sdk::ShapeString(std::vector<int32_t>{2, 3}), "[2, 3]");
  EXPECT_EQ(sdk::ShapeString(std::vector<int64_t>{-1}), "[-1]");
  EXPECT_EQ(sdk::ShapeString(std::vector<int32_t>{}), "[]");
  EXPECT_EQ(sdk::ShapeString({4, 5, 6}), "[4, 5, 6]");
  EXPECT_EQ(sdk::DescribeOperand("ADD", Input(1), "b"),
            "ADD input 1 (tensor 'b')");
  EXPECT_EQ(sdk::DescribeOperand("CONV_2D", Input(1, "filter"), "w"),
            "CONV_2D input 1 (filter, tensor 'w')");
  EXPECT_EQ(sdk::DescribeOperand("MEAN", Input(1, "axis"), ""),
            "MEAN input 1 (axis)");
  EXPECT_EQ(sdk::DescribeOperand("ADD", Output(0), nullptr), "ADD output 0");
  EXPECT_EQ(
      sdk::UnsupportedTypeMessage("ADD input 1 (tensor 'b')", KILN_TYPE_INT8,
                                  {KILN_TYPE_FLOAT32, KILN_TYPE_INT32}),
      "ADD input 1 (tensor 'b') has type INT8; supports FLOAT32, INT32");
  EXPECT_EQ(
      sdk::CountMismatchMessage("CONCATENATION", 1, INT32_MAX, 0, "input"),
      "CONCATENATION expects at least 1 input, the node has 0");
  EXPECT_EQ(sdk::TypeByteSize(KILN_TYPE_FLOAT16), 2u);
  EXPECT_EQ(sdk::TypeByteSize(KILN_TYPE_COMPLEX128), 16u);
  EXPECT_EQ(sdk::TypeByteSize(KILN_TYPE_STRING), 0u);
}

TEST_F(SdkChecksTest, ArityNamesTheOpAndTheCounts) {
  SingleNodeRunner r;
  AddNode(r);
  EXPECT_TRUE(Prepare(r, [](KernelContext& k) {
                return sdk::ExpectArity(k, 2, 1);
              }).ok());
  absl::Status s =
      Prepare(r, [](KernelContext& k) { return sdk::ExpectArity(k, 3, 1); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), Prefixed("ADD expects 3 inputs, the node has 2"));
  s = Prepare(r, [](KernelContext& k) { return sdk::ExpectArity(k, 2, 2); });
  EXPECT_EQ(s.message(), Prefixed("ADD expects 2 outputs, the node has 1"));
  s = Prepare(r,
              [](KernelContext& k) { return sdk::ExpectInputCount(k, 3, 4); });
  EXPECT_EQ(s.message(), Prefixed("ADD expects 3 to 4 inputs, the node has 2"));
  s = Prepare(r, [](KernelContext& k) { return k.ExpectOutputs(1); });
  EXPECT_TRUE(s.ok()) << s;
  s = Prepare(r, [](KernelContext& k) { return k.ExpectInputs(1, 1); });
  EXPECT_EQ(s.message(), Prefixed("ADD expects 1 input, the node has 2"));

  r.SetOp(KILN_OP_ADD, 1, {0, -1}, {2});
  s = Prepare(r, [](KernelContext& k) { return sdk::ExpectArity(k, 2, 1); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), Prefixed("ADD input 1 is missing; ADD requires it"));
}

TEST_F(SdkChecksTest, TypeRefusalsUseOneTemplate) {
  SingleNodeRunner r;
  AddNode(r);
  constexpr TypeSet kFloatInt32{KILN_TYPE_FLOAT32, KILN_TYPE_INT32};
  EXPECT_TRUE(Prepare(r, [&](KernelContext& k) {
                return sdk::ExpectType(k, Input(0), kFloatInt32);
              }).ok());
  absl::Status s = Prepare(r, [&](KernelContext& k) {
    return sdk::ExpectType(k, Input(1), kFloatInt32);
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(),
            Prefixed("ADD input 1 (tensor 't1') has type INT8; supports "
                     "FLOAT32, INT32"));
  s = Prepare(r, [&](KernelContext& k) {
    return sdk::ExpectType(k, Input(1, "addend"), kFloatInt32,
                           "quantized ADD is not implemented");
  });
  EXPECT_EQ(s.message(),
            Prefixed("ADD input 1 (addend, tensor 't1') has type INT8; "
                     "supports FLOAT32, INT32 (quantized ADD is not "
                     "implemented)"));
  s = Prepare(r, [](KernelContext& k) {
    return sdk::ExpectSameType(k, Input(1), Input(0));
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            Prefixed("ADD input 1 (tensor 't1') has type INT8 but input 0 "
                     "(tensor 't0') has type FLOAT32; they must match"));
  // KernelContext::ExpectType (kept for existing plugins): same template.
  s = Prepare(r, [](KernelContext& k) {
    return k.ExpectType("input 1", k.input(1), KILN_TYPE_FLOAT32);
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(),
            Prefixed("ADD input 1 (tensor 't1') has type INT8; supports "
                     "FLOAT32"));
}

TEST_F(SdkChecksTest, CustomOpsAreNamedByTheirCustomName) {
  SingleNodeRunner r;
  r.AddTensor(KILN_TYPE_INT32, {2});
  r.AddTensor(KILN_TYPE_FLOAT32, {2});
  r.SetOp(KILN_OP_CUSTOM, 1, {0}, {1}, "acme.Op");
  const absl::Status s = Prepare(r, [](KernelContext& k) {
    return sdk::ExpectType(k, Input(0), {KILN_TYPE_FLOAT32});
  });
  EXPECT_EQ(s.message(),
            Prefixed("acme.Op input 0 (tensor 't0') has type INT32; supports "
                     "FLOAT32"));
}

TEST_F(SdkChecksTest, ShapeChecks) {
  SingleNodeRunner r;
  AddNode(r);
  std::vector<int32_t> shape;
  EXPECT_TRUE(Prepare(r, [&](KernelContext& k) {
                return sdk::ExpectKnownShape(k, Input(0), &shape);
              }).ok());
  EXPECT_EQ(shape, (std::vector<int32_t>{2, 3}));
  absl::Status s = Prepare(
      r, [](KernelContext& k) { return sdk::ExpectRank(k, Input(0), 4); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), Prefixed("ADD input 0 (tensor 't0') has shape "
                                  "[2, 3]; ADD needs rank 4"));
  s = Prepare(r, [](KernelContext& k) {
    return sdk::ExpectRankAtMost(k, Input(0), 1);
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(), Prefixed("ADD input 0 (tensor 't0') has rank 2; "
                                  "supports rank <= 1"));
  s = Prepare(r, [](KernelContext& k) {
    return sdk::ExpectOutputShape(k, Output(0), {3, 2});
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            Prefixed("ADD output 0 (tensor 't2') has shape [2, 3] but its "
                     "inputs give [3, 2]; the host must prepare the node "
                     "again once the inputs' values or shapes change"));

  r.tensor(0).shape = {2, -1};
  s = Prepare(
      r, [](KernelContext& k) { return sdk::ExpectKnownShape(k, Input(0)); });
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            Prefixed("ADD input 0 (tensor 't0') has unknown extent in "
                     "dimension 1 (shape [2, -1]) at prepare; resize the "
                     "model inputs to concrete shapes first"));
}

TEST_F(SdkChecksTest, BufferOfChecksSizeAtInvoke) {
  // Output 0 has no buffer before the runner allocates it (after the first
  // prepare), so the first run checks it.
  SingleNodeRunner r;
  AddNode(r);
  float* out = nullptr;
  absl::Status s = Prepare(
      r, [&](KernelContext& k) { return sdk::BufferOf(k, Output(0), &out); });
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            Prefixed("ADD output 0 (tensor 't2') has no buffer of 24 bytes at "
                     "invoke; the host must allocate it after prepare"));
  const float* data = nullptr;
  EXPECT_TRUE(Prepare(r, [&](KernelContext& k) {
                return sdk::BufferOf(k, Input(0), &data);
              }).ok());
  ASSERT_NE(data, nullptr);
  // Input 1 holds 3 bytes: too few for 3 int32 values, enough as void.
  const int32_t* wide = nullptr;
  s = Prepare(
      r, [&](KernelContext& k) { return sdk::BufferOf(k, Input(1), &wide); });
  EXPECT_THAT(std::string(s.message()),
              ::testing::HasSubstr("has no buffer of 12 bytes"));
  const void* raw = nullptr;
  EXPECT_TRUE(Prepare(r, [&](KernelContext& k) {
                return sdk::BufferOf(k, Input(1), &raw);
              }).ok());
}

TEST_F(SdkChecksTest, ReadIntegersAndNormalizeAxis) {
  SingleNodeRunner r;
  r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, {1, 2, 3, 4, 5, 6});
  r.AddTensor<int64_t>(KILN_TYPE_INT64, {2}, {-1, 0}, true);
  r.AddTensor(KILN_TYPE_INT32, {1});  // not computed yet
  r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_MEAN, 1, {0, 1, 2}, {3});
  std::vector<int64_t> values;
  bool ready = true;
  // Input 2 has no buffer until the runner allocates it after this prepare.
  EXPECT_TRUE(Prepare(r, [&](KernelContext& k) {
                return sdk::ReadIntegers(k, Input(2), &values, &ready);
              }).ok());
  EXPECT_FALSE(ready);
  EXPECT_TRUE(Prepare(r, [&](KernelContext& k) {
                return sdk::ReadIntegers(k, Input(1, "axis"), &values, &ready);
              }).ok());
  EXPECT_TRUE(ready);
  EXPECT_EQ(values, (std::vector<int64_t>{-1, 0}));
  absl::Status s = Prepare(r, [&](KernelContext& k) {
    return sdk::ReadIntegers(k, Input(0), &values, &ready);
  });
  EXPECT_EQ(s.message(), Prefixed("MEAN input 0 (tensor 't0') has type "
                                  "FLOAT32; supports INT32, INT64"));
  int32_t axis = 0;
  EXPECT_TRUE(Prepare(r, [&](KernelContext& k) {
                return sdk::NormalizeAxis(k, "axis", -1, 2, &axis);
              }).ok());
  EXPECT_EQ(axis, 1);
  s = Prepare(r, [&](KernelContext& k) {
    return sdk::NormalizeAxis(k, "axis", 2, 2, &axis);
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            Prefixed("MEAN axis 2 is out of range [-2, 2) for rank 2"));
}

TEST_F(SdkChecksTest, FusedActivation) {
  SingleNodeRunner r;
  AddNode(r);
  int64_t act = -1;
  EXPECT_TRUE(Prepare(r, [&](KernelContext& k) {
                return sdk::ReadFusedActivation(k, KILN_TYPE_INT32, &act);
              }).ok());
  EXPECT_EQ(act, KILN_ACTIVATION_NONE);
  r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_TANH);
  EXPECT_TRUE(Prepare(r, [&](KernelContext& k) {
                return sdk::ReadFusedActivation(k, KILN_TYPE_FLOAT32, &act);
              }).ok());
  EXPECT_EQ(act, KILN_ACTIVATION_TANH);
  absl::Status s = Prepare(r, [&](KernelContext& k) {
    return sdk::ReadFusedActivation(k, KILN_TYPE_INT8, &act);
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            Prefixed("ADD fused activation TANH is not defined for INT8 "
                     "outputs; integer and quantized outputs support NONE, "
                     "RELU, RELU_N1_TO_1 and RELU6"));
  r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, 42);
  s = Prepare(r, [&](KernelContext& k) {
    return sdk::ReadFusedActivation(k, KILN_TYPE_FLOAT32, &act);
  });
  EXPECT_EQ(s.message(),
            Prefixed("ADD has unknown fused activation 42; expected NONE, "
                     "RELU, RELU_N1_TO_1, RELU6, TANH or SIGN_BIT"));
}

// A CONV_2D-like node: int8 input t0 [1, 2], int8 filter t1 [3, 2].
class SdkQuantizationChecksTest : public SdkChecksTest {
 protected:
  void SetUp() override {
    r_.AddTensor<int8_t>(KILN_TYPE_INT8, {1, 2}, {1, 2});
    r_.AddTensor<int8_t>(KILN_TYPE_INT8, {3, 2}, {1, 2, 3, 4, 5, 6});
    r_.AddTensor(KILN_TYPE_INT8, {1, 3});
    r_.SetOp(KILN_OP_FULLY_CONNECTED, 1, {0, 1}, {2});
    Quantize(0, {0.5f}, {-3});
  }
  void Quantize(int index, std::vector<float> scales,
                std::vector<int64_t> zero_points, int32_t axis = 0) {
    r_.tensor(index).quantization.scales = std::move(scales);
    r_.tensor(index).quantization.zero_points = std::move(zero_points);
    r_.tensor(index).quantization.quantized_dimension = axis;
  }
  // Reads through a const view, as a delegate's Supports(const GraphNode&)
  // has it.
  absl::Status Read(sdk::Operand o, sdk::QuantizationRule rule) {
    return Prepare(r_, [&](KernelContext& k) {
      const KernelContext& view = k;
      return sdk::ReadQuantization(view, o, rule, &q_);
    });
  }
  SingleNodeRunner r_;
  sdk::TensorQuantization q_;
};

TEST_F(SdkQuantizationChecksTest, ReadsPerTensorAndPerChannel) {
  ASSERT_TRUE(Read(Input(0), sdk::kPerTensor).ok());
  EXPECT_TRUE(q_.per_tensor());
  EXPECT_EQ(q_.scales, std::vector<float>{0.5f});
  EXPECT_EQ(q_.zero_points, std::vector<int32_t>{-3});
  Quantize(1, {0.1f, 0.2f, 0.3f}, {0, 0, 0}, 0);
  ASSERT_TRUE(Read(Input(1), sdk::PerChannel(0, /*symmetric=*/true)).ok());
  EXPECT_EQ(q_.channels(), 3);
  EXPECT_EQ(q_.axis, 0);
  EXPECT_TRUE(
      Read(Input(1), sdk::PerChannel(sdk::QuantizationRule::kAnyChannelAxis))
          .ok());
}

TEST_F(SdkQuantizationChecksTest, RefusesWithTheReason) {
  absl::Status s = Read(Input(1, "weights"), sdk::kPerTensor);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            Prefixed("FULLY_CONNECTED input 1 (weights, tensor 't1') has "
                     "type INT8 but no quantization parameters; "
                     "FULLY_CONNECTED needs its scale and zero point "
                     "(re-export the model with quantization parameters)"));
  struct Case {
    std::vector<float> scales;
    std::vector<int64_t> zero_points;
    int32_t axis;
    sdk::QuantizationRule rule;
    absl::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{0.1f, 0.2f, 0.3f},
       {0, 0, 0},
       0,
       sdk::kPerTensor,
       absl::StatusCode::kUnimplemented,
       "has 3 quantization channels; supports per-tensor quantization only "
       "(one scale and zero point)"},
      {{0.1f, 0.2f, 0.3f},
       {0, 0, 0},
       0,
       sdk::PerChannel(1),
       absl::StatusCode::kUnimplemented,
       "has 3 quantization channels along dimension 0; supports 1 "
       "(per-tensor) or one per element of dimension 1 (per-channel)"},
      {{0.1f, 0.2f, 0.3f},
       {0, 0, 0},
       1,
       sdk::PerChannel(1),
       absl::StatusCode::kInvalidArgument,
       "has 3 quantization channels along dimension 1 but that dimension "
       "has extent 2"},
      {{0.1f, 0.2f, 0.3f},
       {0, 0, 0},
       5,
       sdk::PerChannel(0),
       absl::StatusCode::kInvalidArgument,
       "has quantized_dimension 5 outside its rank 2"},
      {{0.1f, -1.f, 0.3f},
       {0, 0, 0},
       0,
       sdk::PerChannel(0),
       absl::StatusCode::kInvalidArgument,
       "has scale -1 at channel 1; quantization scales must be finite and "
       "positive"},
      {{0.1f},
       {300},
       0,
       sdk::kPerTensor,
       absl::StatusCode::kInvalidArgument,
       "has zero point 300 at channel 0, outside the INT8 range [-128, 127]"},
      {{0.1f},
       {4},
       0,
       sdk::kPerTensorSymmetric,
       absl::StatusCode::kUnimplemented,
       "has zero point 4 at channel 0; it must be symmetric (zero point 0)"},
  };
  for (const Case& c : cases) {
    Quantize(1, c.scales, c.zero_points, c.axis);
    s = Read(Input(1), c.rule);
    EXPECT_EQ(s.code(), c.code) << c.message;
    EXPECT_EQ(s.message(),
              Prefixed("FULLY_CONNECTED input 1 (tensor 't1') " + c.message));
  }
}

TEST_F(SdkQuantizationChecksTest, SameQuantization) {
  Quantize(2, {0.5f}, {-3});
  EXPECT_TRUE(Prepare(r_, [](KernelContext& k) {
                return sdk::ExpectSameQuantization(k, Input(0), Output(0));
              }).ok());
  Quantize(2, {0.5f}, {-2});
  const absl::Status s = Prepare(r_, [](KernelContext& k) {
    return sdk::ExpectSameQuantization(k, Input(0), Output(0),
                                       "the kernel does not requantize");
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(),
            Prefixed("FULLY_CONNECTED input 0 (tensor 't0') and output 0 "
                     "(tensor 't2') have different quantization parameters "
                     "(the kernel does not requantize)"));
}

}  // namespace
}  // namespace kiln
