// The host table as plugins see it: what each served version contains,
// tensor_set_type's rules, node intermediates, the placeholder buffer-handle
// functions, host extensions by id, and the plugin log sink.
#include "runtime/host_api.h"

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "runtime/host_extensions.h"
#include "runtime/host_log.h"
#include "runtime/single_node_runner.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const KilnHostApi& Api() { return *HostApiForVersion(KILN_EXT_API_VERSION); }

TEST(HostApiTablesTest, EachVersionHasExactlyItsFunctions) {
  const KilnHostApi* v10 = HostApiForVersion(KILN_MAKE_VERSION(1, 0, 0));
  const KilnHostApi* v11 = HostApiForVersion(KILN_MAKE_VERSION(1, 1, 0));
  const KilnHostApi* v12 = HostApiForVersion(KILN_MAKE_VERSION(1, 2, 0));
  ASSERT_TRUE(v10 != nullptr && v11 != nullptr && v12 != nullptr);
  EXPECT_EQ(v10->struct_size, KILN_HOST_API_STRUCT_SIZE_1_0);
  EXPECT_EQ(v11->struct_size, KILN_HOST_API_STRUCT_SIZE_1_1);
  EXPECT_EQ(v12->struct_size, KILN_HOST_API_STRUCT_SIZE_1_2);
  EXPECT_EQ(v12->abi_version, KILN_MAKE_VERSION(1, 2, 0));
  EXPECT_EQ(v10->tensor_quantization, nullptr);
  EXPECT_NE(v11->tensor_quantization, nullptr);
  EXPECT_EQ(v11->tensor_set_type, nullptr);
  EXPECT_EQ(v11->tensor_set_buffer_handle, nullptr);
  EXPECT_NE(v12->tensor_set_type, nullptr);
  EXPECT_NE(v12->tensor_set_buffer_handle, nullptr);
  EXPECT_NE(v12->tensor_buffer_handle, nullptr);
  const KilnHostApi* v13 = HostApiForVersion(KILN_MAKE_VERSION(1, 3, 0));
  ASSERT_NE(v13, nullptr);
  EXPECT_EQ(v13->struct_size, KILN_HOST_API_STRUCT_SIZE_1_3);
  EXPECT_EQ(v13->abi_version, KILN_MAKE_VERSION(1, 3, 0));
  // 1.3 appends the node intermediates; a table capped at 1.2 has neither.
  EXPECT_NE(v13->node_num_intermediates, nullptr);
  EXPECT_NE(v13->node_intermediate, nullptr);
  EXPECT_EQ(v12->node_num_intermediates, nullptr);
  EXPECT_EQ(v12->node_intermediate, nullptr);
  EXPECT_FALSE(KILN_STRUCT_HAS_FIELD(KilnHostApi, v12->struct_size,
                                     node_num_intermediates));
  EXPECT_TRUE(
      KILN_STRUCT_HAS_FIELD(KilnHostApi, v13->struct_size, node_intermediate));
  EXPECT_EQ(HostApiForVersion(KILN_MAKE_VERSION(1, 4, 0)), nullptr);
  EXPECT_EQ(HostApiSizeForVersion(KILN_MAKE_VERSION(2, 0, 0)), 0u);
}

TEST(HostExtensionsTest, ServedByIdFromTheirFirstVersionOn) {
  static const KilnExtensionBase kThing = {KILN_EXTENSION_BASE_STRUCT_SIZE,
                                           "kiln.test_thing/1", nullptr};
  const std::vector<HostExtensionEntry> entries = {
      {"kiln.test_thing/1", &kThing, KILN_MAKE_VERSION(1, 2, 0)}};
  EXPECT_EQ(FindHostExtension(entries, "kiln.test_thing/1",
                              KILN_MAKE_VERSION(1, 2, 0)),
            &kThing);
  EXPECT_EQ(FindHostExtension(entries, "kiln.test_thing/1",
                              KILN_MAKE_VERSION(1, 1, 0)),
            nullptr);
  EXPECT_EQ(FindHostExtension(entries, "kiln.test_thing/2",
                              KILN_MAKE_VERSION(1, 2, 0)),
            nullptr);
  EXPECT_EQ(FindHostExtension(entries, nullptr, KILN_MAKE_VERSION(1, 2, 0)),
            nullptr);
}

TEST(HostExtensionsTest, EveryTableAnswersUnknownIdsWithNull) {
  for (uint32_t minor = 0; minor <= KILN_EXT_API_VERSION_MINOR; ++minor) {
    const KilnHostApi* api = HostApiForVersion(KILN_MAKE_VERSION(1, minor, 0));
    ASSERT_NE(api, nullptr);
    EXPECT_EQ(api->get_host_extension("kiln.no_such_thing/1"), nullptr);
    EXPECT_EQ(api->get_host_extension(nullptr), nullptr);
  }
  // Every registered extension carries its own id and is served from its
  // version on, by that version's table only.
  for (const HostExtensionEntry& e : HostExtensions()) {
    EXPECT_STREQ(e.extension->id, e.id);
    EXPECT_EQ(HostApiForVersion(e.since_abi_version)->get_host_extension(e.id),
              e.extension);
  }
}

// A kernel whose prepare and invoke run the test's functions.
std::function<KilnStatus(KilnOpaqueContext*, KilnOpaqueNode*)>& PrepareBody() {
  static std::function<KilnStatus(KilnOpaqueContext*, KilnOpaqueNode*)> f;
  return f;
}
std::function<KilnStatus(KilnOpaqueContext*, KilnOpaqueNode*)>& InvokeBody() {
  static std::function<KilnStatus(KilnOpaqueContext*, KilnOpaqueNode*)> f;
  return f;
}
KilnKernel TestKernel() {
  KilnKernel k;
  std::memset(&k, 0, sizeof(k));
  k.struct_size = KILN_KERNEL_STRUCT_SIZE;
  k.builtin_code = KILN_OP_CUSTOM;
  k.custom_name = "Test";
  k.min_version = k.max_version = 1;
  k.prepare = [](void*, void*, KilnOpaqueContext* c, KilnOpaqueNode* n) {
    return PrepareBody() ? PrepareBody()(c, n) : KILN_STATUS_OK;
  };
  k.invoke = [](void*, void*, KilnOpaqueContext* c, KilnOpaqueNode* n) {
    return InvokeBody() ? InvokeBody()(c, n) : KILN_STATUS_OK;
  };
  return k;
}

class TensorSetTypeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PrepareBody() = nullptr;
    InvokeBody() = nullptr;
    in_ = r_.AddTensor<float>(KILN_TYPE_FLOAT32, {3}, {1, 2, 3});
    out_ = r_.AddTensor(KILN_TYPE_FLOAT16, {3});
    r_.SetOp(KILN_OP_CUSTOM, 1, {in_}, {out_}, "Test");
  }
  // Runs a kernel whose prepare gives the node's output 0 (its input 0 when
  // `of_input`) element type `type`, recording the type before and after.
  absl::Status SetTypeInPrepare(bool of_input, KilnTensorType type) {
    PrepareBody() = [=](KilnOpaqueContext* c, KilnOpaqueNode* n) {
      KilnOpaqueTensor* t =
          of_input ? Api().node_input(c, n, 0) : Api().node_output(c, n, 0);
      seen_before_ = Api().tensor_type(t);
      const KilnStatus s = Api().tensor_set_type(c, t, type);
      seen_after_ = Api().tensor_type(t);
      return s;
    };
    return r_.Run(TestKernel());
  }
  SingleNodeRunner r_;
  int in_ = -1, out_ = -1;
  KilnTensorType seen_before_ = -1, seen_after_ = -1;
};

TEST_F(TensorSetTypeTest, PrepareGivesAnOutputItsTypeAndSize) {
  const absl::Status s = SetTypeInPrepare(/*of_input=*/false, KILN_TYPE_INT32);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(seen_before_, KILN_TYPE_FLOAT16);
  EXPECT_EQ(seen_after_, KILN_TYPE_INT32);
  EXPECT_EQ(r_.tensor(out_).ElementType(), KILN_TYPE_INT32);
  // Allocated after prepare for the new type: 3 int32 values.
  EXPECT_EQ(r_.tensor(out_).bytes, 3 * sizeof(int32_t));
  EXPECT_EQ(r_.tensor(out_).type, KILN_TYPE_FLOAT16);  // the description
}

TEST_F(TensorSetTypeTest, OnlyTheNodesOwnOutputs) {
  const absl::Status s = SetTypeInPrepare(/*of_input=*/true, KILN_TYPE_INT32);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(),
              HasSubstr("tensor_set_type: tensor 't0' is not an output of the "
                        "node being prepared"));
  EXPECT_EQ(r_.tensor(in_).ElementType(), KILN_TYPE_FLOAT32);
}

TEST_F(TensorSetTypeTest, NeitherConstantVariableNorSubgraphInput) {
  r_.tensor(out_).storage = TensorStorage::kConstant;
  EXPECT_THAT(SetTypeInPrepare(false, KILN_TYPE_INT32).message(),
              HasSubstr("tensor 't1' is constant"));
  r_.tensor(out_).storage = TensorStorage::kNone;
  r_.tensor(out_).is_variable = true;
  EXPECT_THAT(SetTypeInPrepare(false, KILN_TYPE_INT32).message(),
              HasSubstr("tensor 't1' is a variable"));
  r_.tensor(out_).is_variable = false;
  r_.graph().inputs = {out_};
  EXPECT_THAT(SetTypeInPrepare(false, KILN_TYPE_INT32).message(),
              HasSubstr("tensor 't1' is an input of the subgraph"));
  EXPECT_EQ(r_.tensor(out_).ElementType(), KILN_TYPE_FLOAT16);
}

TEST_F(TensorSetTypeTest, OnlyFixedSizeTypes) {
  for (KilnTensorType bad : {KILN_TYPE_STRING, KILN_TYPE_RESOURCE, 99, -1}) {
    const absl::Status s = SetTypeInPrepare(false, bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(),
                HasSubstr("is not a fixed-size KILN_TYPE_* value"));
  }
}

TEST_F(TensorSetTypeTest, NotDuringInvoke) {
  InvokeBody() = [](KilnOpaqueContext* c, KilnOpaqueNode* n) {
    return Api().tensor_set_type(c, Api().node_output(c, n, 0),
                                 KILN_TYPE_INT32);
  };
  const absl::Status s = r_.Run(TestKernel());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("allowed only during KilnKernel.prepare"));
}

TEST_F(TensorSetTypeTest, TheDeclaredTypeAgainClearsTheOverride) {
  r_.tensor(out_).type_override = KILN_TYPE_INT8;
  ASSERT_TRUE(SetTypeInPrepare(false, KILN_TYPE_FLOAT16).ok());
  EXPECT_FALSE(r_.tensor(out_).type_override.has_value());
}

TEST(NodeIntermediatesTest, ByIndexWithOmittedAndOutOfRangeAsNull) {
  SingleNodeRunner r;
  const int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1}, {1});
  const int out = r.AddTensor(KILN_TYPE_FLOAT32, {1});
  const int scratch = r.AddTensor(KILN_TYPE_INT16, {});
  r.SetOp(KILN_OP_CUSTOM, 1, {in}, {out}, "Test");
  r.node().intermediates = {scratch, -1};
  int32_t count = -2;
  std::vector<const KilnOpaqueTensor*> seen;
  PrepareBody() = [&](KilnOpaqueContext* c, KilnOpaqueNode* n) {
    count = Api().node_num_intermediates(n);
    for (int32_t i : {0, 1, 2, -1}) {
      seen.push_back(Api().node_intermediate(c, n, i));
    }
    return KILN_STATUS_OK;
  };
  InvokeBody() = nullptr;
  ASSERT_TRUE(r.Run(TestKernel()).ok());
  EXPECT_EQ(count, 2);
  ASSERT_EQ(seen.size(), 4u);
  ASSERT_NE(seen[0], nullptr);
  EXPECT_STREQ(Api().tensor_name(seen[0]), "t2");
  EXPECT_EQ(Api().tensor_type(seen[0]), KILN_TYPE_INT16);
  EXPECT_EQ(seen[1], nullptr);  // omitted (-1)
  EXPECT_EQ(seen[2], nullptr);  // past the end
  EXPECT_EQ(seen[3], nullptr);  // negative
  EXPECT_EQ(Api().node_num_intermediates(nullptr), -1);
}

// tensor_quantization of a blockwise-quantized input (2 rows of 4 values in
// blocks of 2) and of a per-channel one, as a caller of `struct_size` sees
// them; fields the host does not fill keep their 0x5A filler.
struct SeenQuantization {
  KilnStatus status = KILN_STATUS_INTERNAL;
  KilnQuantizationParams params;
};
std::vector<SeenQuantization> QuantizationSeenBy(uint32_t struct_size) {
  SingleNodeRunner r;
  const int blockwise =
      r.AddTensor<int8_t>(KILN_TYPE_INT8, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const int channels = r.AddTensor<int8_t>(KILN_TYPE_INT8, {2}, {1, 2});
  const int out = r.AddTensor(KILN_TYPE_FLOAT32, {1});
  Quantization& b = r.tensor(blockwise).quantization;
  b.block_size = 2;
  b.block_scales = {0.5f, 0.25f, 2.f, 4.f};
  b.block_zero_points = {0, 0, 0, -1};
  Quantization& c = r.tensor(channels).quantization;
  c.scales = {0.5f, 0.25f};
  c.zero_points = {0, 0};
  r.SetOp(KILN_OP_CUSTOM, 1, {blockwise, channels}, {out}, "Test");
  std::vector<SeenQuantization> seen(2);
  PrepareBody() = [&](KilnOpaqueContext* ctx, KilnOpaqueNode* n) {
    for (int i = 0; i < 2; ++i) {
      KilnQuantizationParams& p = seen[static_cast<size_t>(i)].params;
      std::memset(&p, 0x5A, sizeof p);
      p.struct_size = struct_size;
      seen[static_cast<size_t>(i)].status =
          Api().tensor_quantization(Api().node_input(ctx, n, i), &p);
    }
    return KILN_STATUS_OK;
  };
  InvokeBody() = nullptr;
  const absl::Status s = r.Run(TestKernel());
  EXPECT_TRUE(s.ok()) << s;
  PrepareBody() = nullptr;
  return seen;
}

TEST(TensorQuantizationTest, A13CallerSeesOneScalePerBlock) {
  const std::vector<SeenQuantization> seen =
      QuantizationSeenBy(KILN_QUANTIZATION_PARAMS_STRUCT_SIZE);
  const KilnQuantizationParams& b = seen[0].params;
  ASSERT_EQ(seen[0].status, KILN_STATUS_OK);
  EXPECT_EQ(b.block_size, 2);
  EXPECT_EQ(b.block_dimension, 1);
  EXPECT_EQ(b.quantized_dimension, 0);
  ASSERT_EQ(b.num_channels, 4);
  EXPECT_EQ(b.scales[3], 4.f);
  EXPECT_EQ(b.zero_points[3], -1);
  const KilnQuantizationParams& c = seen[1].params;
  ASSERT_EQ(seen[1].status, KILN_STATUS_OK);
  EXPECT_EQ(c.num_channels, 2);
  EXPECT_EQ(c.block_size, 0);
  EXPECT_EQ(c.block_dimension, 0);
}

TEST(TensorQuantizationTest, An11CallerIsRefusedABlockwiseTensorUntouched) {
  const std::vector<SeenQuantization> seen =
      QuantizationSeenBy(KILN_QUANTIZATION_PARAMS_STRUCT_SIZE_1_1);
  EXPECT_EQ(seen[0].status, KILN_STATUS_UNIMPLEMENTED);
  KilnQuantizationParams untouched;
  std::memset(&untouched, 0x5A, sizeof untouched);
  untouched.struct_size = KILN_QUANTIZATION_PARAMS_STRUCT_SIZE_1_1;
  EXPECT_EQ(std::memcmp(&seen[0].params, &untouched, sizeof untouched), 0);
  // Per-channel tensors as before, and nothing written past its struct.
  ASSERT_EQ(seen[1].status, KILN_STATUS_OK);
  EXPECT_EQ(seen[1].params.num_channels, 2);
  EXPECT_EQ(seen[1].params.block_size, 0x5A5A5A5A);
  EXPECT_EQ(seen[1].params.block_dimension, 0x5A5A5A5A);
}

TEST(BufferHandleTest, KernelMayNotBindABufferHandle) {
  SingleNodeRunner r;
  const int t = r.AddTensor(KILN_TYPE_FLOAT32, {1});
  r.SetOp(KILN_OP_CUSTOM, 1, {}, {t}, "Test");
  KilnBufferHandle seen = 0;
  PrepareBody() = [&](KilnOpaqueContext* c, KilnOpaqueNode* n) {
    KilnOpaqueTensor* out = Api().node_output(c, n, 0);
    seen = Api().tensor_buffer_handle(c, out);
    return Api().tensor_set_buffer_handle(c, out, 7, 0);
  };
  InvokeBody() = nullptr;
  const absl::Status s = r.Run(TestKernel());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(),
              HasSubstr("tensor_set_buffer_handle may be called only from "
                        "partition_prepare or partition_invoke"));
  EXPECT_EQ(seen, KILN_INVALID_BUFFER_HANDLE);
}

TEST(HostLogTest, CapturesWhatIsLoggedOnThisThreadAtAnyLevel) {
  std::vector<std::string> outer, inner;
  {
    const PluginLogCapture a(&outer);
    Api().log(nullptr, KILN_LOG_INFO, "one");
    {
      const PluginLogCapture b(&inner);
      Api().log(nullptr, KILN_LOG_ERROR, "two");
    }
    Api().log(nullptr, KILN_LOG_WARNING, nullptr);
  }
  Api().log(nullptr, KILN_LOG_INFO, "not captured");
  EXPECT_THAT(outer, ElementsAre("info: one", "warning: "));
  EXPECT_THAT(inner, ElementsAre("error: two"));
}

TEST(HostLogTest, LevelsByName) {
  EXPECT_EQ(*ParseLogLevel("INFO"), KILN_LOG_INFO);
  EXPECT_EQ(*ParseLogLevel("warning"), KILN_LOG_WARNING);
  EXPECT_EQ(*ParseLogLevel("error"), KILN_LOG_ERROR);
  EXPECT_THAT(ParseLogLevel("loud").status().message(),
              HasSubstr("'loud' is not one of error, warning, info"));
  const int32_t before = LogLevel();
  SetLogLevel(KILN_LOG_ERROR);
  EXPECT_EQ(LogLevel(), KILN_LOG_ERROR);
  SetLogLevel(before);
}

}  // namespace
}  // namespace kiln
