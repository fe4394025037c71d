// One source for the bad-plugin corpus of `kiln conformance`: each build
// defines exactly one KILN_BAD_PLUGIN_<VARIANT> and misbehaves in one way
// that the runner must report (not die of). Deliberately written against the
// raw C API without the SDK's exception Guard.
//
// Every variant declares ADD on FLOAT32 with NumPy broadcasting (rank <= 4)
// and fused activation, correct except where the variant says otherwise:
//   CRASH_IN_PREPARE  prepare writes through a null pointer (SIGSEGV)
//   HANG_IN_INVOKE    invoke never returns
//   THROWS            invoke throws a C++ exception across the C boundary
//   WRONG_OUTPUTS     invoke adds 0.5 to every result
//   LYING_RANGES      declares ADD v1..9; computes a - b for v2 and fails v3+
//   LEAKS             invoke leaks 256 KiB per call
//   FLOAT_ONLY_ABS    also declares ABS v1..5 (v2..5 added int8, int16 and
//                     int32 inputs in TFLite) but implements only float
//   FLOAT_ONLY_ADD    declares ADD v1..4 (v2 int8, v3 int16, v4 int64 in
//                     TFLite) with the float-only code above
//   CUSTOM_ALWAYS_FAILS  also declares CUSTOM "KilnAlwaysFails" v1, whose
//                     invoke always fails
//   STRIDED_SLICE_OLD_PATH  also declares STRIDED_SLICE v1..8 but implements
//                     only the v1..v3 path: any element type of rank <= 4
//                     with positive strides; it refuses rank 5 (v4) and
//                     ignores ellipsis_mask / new_axis_mask (v6) and offset
//                     (v8)
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "kiln/kiln_plugin.h"

namespace {

const KilnHostApi* g_api = nullptr;
int* volatile g_null_pointer =
    nullptr;  // volatile: the crash is not optimised away

KilnStatus Fail(KilnOpaqueContext* context, KilnStatus code,
                const char* message) {
  g_api->report_error(context, code, message);
  return code;
}

int Rank(const KilnOpaqueTensor* t) { return g_api->tensor_rank(t); }

KilnStatus Prepare(void*, void*, KilnOpaqueContext* context,
                   KilnOpaqueNode* node) {
#if defined(KILN_BAD_PLUGIN_CRASH_IN_PREPARE)
  *g_null_pointer = 1;
#endif
  if (g_api->node_num_inputs(node) != 2 || g_api->node_num_outputs(node) != 1) {
    return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                "ADD takes 2 inputs and 1 output");
  }
  const KilnOpaqueTensor* a = g_api->node_input(context, node, 0);
  const KilnOpaqueTensor* b = g_api->node_input(context, node, 1);
  KilnOpaqueTensor* out = g_api->node_output(context, node, 0);
  if (g_api->tensor_type(a) != KILN_TYPE_FLOAT32 ||
      g_api->tensor_type(b) != KILN_TYPE_FLOAT32) {
    return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                "ADD supports FLOAT32 inputs only");
  }
  const int rank = Rank(a) > Rank(b) ? Rank(a) : Rank(b);
  if (rank > 4) {
    return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                "ADD supports rank <= 4");
  }
  int32_t dims[4];
  for (int i = 0; i < rank; ++i) {
    const int ia = i - (rank - Rank(a)), ib = i - (rank - Rank(b));
    const int32_t da = ia >= 0 ? g_api->tensor_dim(a, ia) : 1;
    const int32_t db = ib >= 0 ? g_api->tensor_dim(b, ib) : 1;
    if (da != db && da != 1 && db != 1) {
      return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                  "ADD input shapes do not broadcast");
    }
    dims[i] = da == 1 ? db : da;
  }
  return g_api->tensor_resize(context, out, rank, dims);
}

float Activate(int64_t activation, float x) {
  switch (activation) {
    case KILN_ACTIVATION_RELU:
      return x < 0 ? 0 : x;
    case KILN_ACTIVATION_RELU6:
      return x < 0 ? 0 : (x > 6 ? 6 : x);
    case KILN_ACTIVATION_RELU_N1_TO_1:
      return x < -1 ? -1 : (x > 1 ? 1 : x);
    default:
      return x;
  }
}

KilnStatus Invoke(void*, void*, KilnOpaqueContext* context,
                  KilnOpaqueNode* node) {
#if defined(KILN_BAD_PLUGIN_HANG_IN_INVOKE)
  volatile bool forever = true;
  while (forever) std::this_thread::sleep_for(std::chrono::milliseconds(50));
#elif defined(KILN_BAD_PLUGIN_THROWS)
  throw std::runtime_error("bad_plugin_throws: invoke threw on purpose");
#elif defined(KILN_BAD_PLUGIN_LEAKS)
  void* leaked = std::malloc(256 << 10);
  std::memset(leaked, 1, 256 << 10);  // touched, so it counts as resident
#endif
  const int32_t version = g_api->node_op_version(node);
  (void)version;
#if defined(KILN_BAD_PLUGIN_LYING_RANGES)
  if (version >= 3) {
    return Fail(context, KILN_STATUS_UNIMPLEMENTED,
                "bad_plugin_lying_ranges: ADD v3+ is not really implemented");
  }
#endif
  const KilnOpaqueTensor* a = g_api->node_input(context, node, 0);
  const KilnOpaqueTensor* b = g_api->node_input(context, node, 1);
  const KilnOpaqueTensor* out = g_api->node_output(context, node, 0);
  const float* pa = static_cast<const float*>(g_api->tensor_data(a));
  const float* pb = static_cast<const float*>(g_api->tensor_data(b));
  float* po = static_cast<float*>(g_api->tensor_data(out));
  int64_t activation = KILN_ACTIVATION_NONE;
  g_api->node_option_int(node, KILN_OPTION_FUSED_ACTIVATION, &activation);
  const int rank = Rank(out);
  int32_t od[4] = {1, 1, 1, 1}, ad[4] = {1, 1, 1, 1}, bd[4] = {1, 1, 1, 1};
  for (int i = 0; i < rank; ++i) od[4 - rank + i] = g_api->tensor_dim(out, i);
  for (int i = 0; i < Rank(a); ++i)
    ad[4 - Rank(a) + i] = g_api->tensor_dim(a, i);
  for (int i = 0; i < Rank(b); ++i)
    bd[4 - Rank(b) + i] = g_api->tensor_dim(b, i);
  int64_t o = 0;
  for (int32_t i0 = 0; i0 < od[0]; ++i0)
    for (int32_t i1 = 0; i1 < od[1]; ++i1)
      for (int32_t i2 = 0; i2 < od[2]; ++i2)
        for (int32_t i3 = 0; i3 < od[3]; ++i3, ++o) {
          const int32_t idx[4] = {i0, i1, i2, i3};
          int64_t ia = 0, ib = 0;
          for (int d = 0; d < 4; ++d) {
            ia = ia * ad[d] + (ad[d] == 1 ? 0 : idx[d]);
            ib = ib * bd[d] + (bd[d] == 1 ? 0 : idx[d]);
          }
          float sum = pa[ia] + pb[ib];
#if defined(KILN_BAD_PLUGIN_WRONG_OUTPUTS)
          sum += 0.5f;
#elif defined(KILN_BAD_PLUGIN_LYING_RANGES)
          if (version == 2) sum = pa[ia] - pb[ib];
#endif
          po[o] = Activate(activation, sum);
        }
  return KILN_STATUS_OK;
}

#if defined(KILN_BAD_PLUGIN_LYING_RANGES)
constexpr int32_t kMaxVersion = 9;
#elif defined(KILN_BAD_PLUGIN_FLOAT_ONLY_ADD)
constexpr int32_t kMaxVersion = 4;
#else
constexpr int32_t kMaxVersion = 1;
#endif

const KilnKernel kAdd = {KILN_KERNEL_STRUCT_SIZE,
                         KILN_OP_ADD,
                         nullptr,
                         1,
                         kMaxVersion,
                         nullptr,
                         nullptr,
                         nullptr,
                         Prepare,
                         Invoke,
                         0};
#if defined(KILN_BAD_PLUGIN_FLOAT_ONLY_ABS) || \
    defined(KILN_BAD_PLUGIN_CUSTOM_ALWAYS_FAILS)
// Output 0 takes the shape of input 0.
KilnStatus SameShapePrepare(void*, void*, KilnOpaqueContext* context,
                            KilnOpaqueNode* node) {
  const KilnOpaqueTensor* in = g_api->node_input(context, node, 0);
  KilnOpaqueTensor* out = g_api->node_output(context, node, 0);
  int32_t dims[8];
  const int rank = Rank(in) < 8 ? Rank(in) : 8;
  for (int i = 0; i < rank; ++i) dims[i] = g_api->tensor_dim(in, i);
  return g_api->tensor_resize(context, out, rank, dims);
}
#endif
#if defined(KILN_BAD_PLUGIN_FLOAT_ONLY_ABS)

// The float path only, whatever the tensors' types (the defect).
KilnStatus AbsInvoke(void*, void*, KilnOpaqueContext* context,
                     KilnOpaqueNode* node) {
  const KilnOpaqueTensor* in = g_api->node_input(context, node, 0);
  const KilnOpaqueTensor* out = g_api->node_output(context, node, 0);
  const uint64_t n = g_api->tensor_byte_size(out) / sizeof(float);
  const float* x = static_cast<const float*>(g_api->tensor_data(in));
  float* y = static_cast<float*>(g_api->tensor_data(out));
  for (uint64_t i = 0; i < n; ++i) y[i] = x[i] < 0 ? -x[i] : x[i];
  return KILN_STATUS_OK;
}

const KilnKernel kAbs = {KILN_KERNEL_STRUCT_SIZE,
                         KILN_OP_ABS,
                         nullptr,
                         1,
                         5,
                         nullptr,
                         nullptr,
                         nullptr,
                         SameShapePrepare,
                         AbsInvoke,
                         0};
const KilnKernel* const kKernels[] = {&kAdd, &kAbs};
#elif defined(KILN_BAD_PLUGIN_CUSTOM_ALWAYS_FAILS)
// Whatever the input: the defect.
KilnStatus AlwaysFailsInvoke(void*, void*, KilnOpaqueContext* context,
                             KilnOpaqueNode*) {
  return Fail(context, KILN_STATUS_INTERNAL,
              "bad_plugin_custom_always_fails: KilnAlwaysFails always fails");
}

const KilnKernel kAlwaysFails = {KILN_KERNEL_STRUCT_SIZE,
                                 KILN_OP_CUSTOM,
                                 "KilnAlwaysFails",
                                 1,
                                 1,
                                 nullptr,
                                 nullptr,
                                 nullptr,
                                 SameShapePrepare,
                                 AlwaysFailsInvoke,
                                 0};
const KilnKernel* const kKernels[] = {&kAdd, &kAlwaysFails};
#elif defined(KILN_BAD_PLUGIN_STRIDED_SLICE_OLD_PATH)

// The slice of every axis of input 0 (rank <= 4) from begin / end / strides
// (inputs 1..3, int32): first index, step and count. The defect: the spec
// is read one entry per input axis, as before v6 (no ellipsis, no new axis)
// and v8 (end is absolute, no offset).
KilnStatus SliceAxes(KilnOpaqueContext* context, KilnOpaqueNode* node,
                     int32_t first[4], int32_t step[4], int32_t count[4]) {
  const KilnOpaqueTensor* x = g_api->node_input(context, node, 0);
  const int rank = Rank(x);
  if (rank > 4) {
    return Fail(context, KILN_STATUS_UNIMPLEMENTED,
                "bad_plugin_strided_slice_old_path: STRIDED_SLICE supports "
                "rank <= 4");
  }
  const int32_t* spec[3];
  for (int i = 0; i < 3; ++i) {
    spec[i] = static_cast<const int32_t*>(
        g_api->tensor_data(g_api->node_input(context, node, i + 1)));
    if (spec[i] == nullptr) {
      return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                  "STRIDED_SLICE needs constant begin, end and strides");
    }
  }
  for (int d = 0; d < 4; ++d) {
    first[d] = 0;
    step[d] = 1;
    count[d] = 1;
  }
  for (int i = 0; i < rank; ++i) {
    const int d = 4 - rank + i;
    const int32_t size = g_api->tensor_dim(x, i);
    int32_t b = spec[0][i] < 0 ? spec[0][i] + size : spec[0][i];
    int32_t e = spec[1][i] < 0 ? spec[1][i] + size : spec[1][i];
    b = b < 0 ? 0 : (b > size ? size : b);
    e = e < 0 ? 0 : (e > size ? size : e);
    const int32_t s = spec[2][i] > 0 ? spec[2][i] : 1;
    first[d] = b;
    step[d] = s;
    count[d] = e > b ? (e - b + s - 1) / s : 0;
  }
  return KILN_STATUS_OK;
}

KilnStatus StridedSlicePrepare(void*, void*, KilnOpaqueContext* context,
                               KilnOpaqueNode* node) {
  int32_t first[4], step[4], count[4];
  if (KilnStatus s = SliceAxes(context, node, first, step, count);
      s != KILN_STATUS_OK) {
    return s;
  }
  const int rank = Rank(g_api->node_input(context, node, 0));
  return g_api->tensor_resize(context, g_api->node_output(context, node, 0),
                              rank, count + 4 - rank);
}

// Copies elements of any size (float, int8, bool: the v1..v3 types).
KilnStatus StridedSliceInvoke(void*, void*, KilnOpaqueContext* context,
                              KilnOpaqueNode* node) {
  int32_t first[4], step[4], count[4];
  if (KilnStatus s = SliceAxes(context, node, first, step, count);
      s != KILN_STATUS_OK) {
    return s;
  }
  const KilnOpaqueTensor* x = g_api->node_input(context, node, 0);
  int32_t dims[4] = {1, 1, 1, 1};
  int64_t n = 1;
  for (int i = 0; i < Rank(x); ++i) {
    dims[4 - Rank(x) + i] = g_api->tensor_dim(x, i);
    n *= g_api->tensor_dim(x, i);
  }
  if (n == 0) return KILN_STATUS_OK;
  const uint64_t element =
      g_api->tensor_byte_size(x) / static_cast<uint64_t>(n);
  const auto* in = static_cast<const char*>(g_api->tensor_data(x));
  auto* out = static_cast<char*>(
      g_api->tensor_data(g_api->node_output(context, node, 0)));
  for (int32_t i0 = 0; i0 < count[0]; ++i0)
    for (int32_t i1 = 0; i1 < count[1]; ++i1)
      for (int32_t i2 = 0; i2 < count[2]; ++i2)
        for (int32_t i3 = 0; i3 < count[3]; ++i3) {
          const int32_t idx[4] = {i0, i1, i2, i3};
          int64_t from = 0;
          for (int d = 0; d < 4; ++d) {
            from = from * dims[d] + first[d] + idx[d] * step[d];
          }
          std::memcpy(out, in + from * static_cast<int64_t>(element), element);
          out += element;
        }
  return KILN_STATUS_OK;
}

const KilnKernel kStridedSlice = {KILN_KERNEL_STRUCT_SIZE,
                                  KILN_OP_STRIDED_SLICE,
                                  nullptr,
                                  1,
                                  8,
                                  nullptr,
                                  nullptr,
                                  nullptr,
                                  StridedSlicePrepare,
                                  StridedSliceInvoke,
                                  0};
const KilnKernel* const kKernels[] = {&kAdd, &kStridedSlice};
#else
const KilnKernel* const kKernels[] = {&kAdd};
#endif
KilnPluginDescriptor g_descriptor;

}  // namespace

extern "C" __attribute__((visibility("default"))) const KilnPluginDescriptor*
KilnPluginEntry(const KilnHostInfo* host) {
  if (host == nullptr || host->api == nullptr) return nullptr;
  g_api = host->api;
  std::memset(&g_descriptor, 0, sizeof(g_descriptor));
  g_descriptor.struct_size = KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE;
  g_descriptor.abi_version = KILN_EXT_API_VERSION;
  g_descriptor.min_host_abi_version = KILN_MAKE_VERSION(1, 0, 0);
  g_descriptor.name = KILN_BAD_PLUGIN_NAME;
  g_descriptor.version = "0.0.1";
  g_descriptor.kernels = kKernels;
  g_descriptor.num_kernels = sizeof(kKernels) / sizeof(kKernels[0]);
  return &g_descriptor;
}
