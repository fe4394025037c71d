// libXNNPACK and libpthreadpool, loaded with dlopen when the first delegate
// is created (never at plugin load), so that the plugin links only the C/C++
// runtime (`kiln plugin validate`) and a machine without libXNNPACK gets a
// delegate that says UNAVAILABLE, why, and what to install, while the model
// runs on the kernel plugins.
//
// After LoadXnnApi() succeeded, the xnn_* and pthreadpool_* names used by
// the plugin call through the loaded table (macros below), so the code reads
// as plain libXNNPACK calls.
#ifndef KILN_PLUGINS_XNNPACK_SRC_XNN_API_H_
#define KILN_PLUGINS_XNNPACK_SRC_XNN_API_H_

#include <pthreadpool.h>
#include <xnnpack.h>

#include <string>

// Every function the plugin calls, as X(name).
#define KILN_XNN_FUNCTIONS(X)                      \
  X(xnn_initialize)                                \
  X(xnn_create_subgraph)                           \
  X(xnn_delete_subgraph)                           \
  X(xnn_define_tensor_value)                       \
  X(xnn_define_quantized_tensor_value)             \
  X(xnn_define_channelwise_quantized_tensor_value) \
  X(xnn_define_convolution_2d)                     \
  X(xnn_define_deconvolution_2d)                   \
  X(xnn_define_depthwise_convolution_2d)           \
  X(xnn_define_depth_to_space)                     \
  X(xnn_define_global_average_pooling_2d)          \
  X(xnn_define_average_pooling_2d)                 \
  X(xnn_define_fully_connected)                    \
  X(xnn_define_max_pooling_2d)                     \
  X(xnn_define_add2)                               \
  X(xnn_define_multiply2)                          \
  X(xnn_define_subtract)                           \
  X(xnn_define_divide)                             \
  X(xnn_define_maximum2)                           \
  X(xnn_define_minimum2)                           \
  X(xnn_define_squared_difference)                 \
  X(xnn_define_static_constant_pad)                \
  X(xnn_define_static_reshape)                     \
  X(xnn_define_static_resize_bilinear_2d)          \
  X(xnn_define_prelu)                              \
  X(xnn_define_abs)                                \
  X(xnn_define_bankers_rounding)                   \
  X(xnn_define_ceiling)                            \
  X(xnn_define_clamp)                              \
  X(xnn_define_elu)                                \
  X(xnn_define_floor)                              \
  X(xnn_define_hardswish)                          \
  X(xnn_define_leaky_relu)                         \
  X(xnn_define_negate)                             \
  X(xnn_define_sigmoid)                            \
  X(xnn_define_softmax)                            \
  X(xnn_define_square)                             \
  X(xnn_define_square_root)                        \
  X(xnn_create_runtime_v2)                         \
  X(xnn_setup_runtime)                             \
  X(xnn_invoke_runtime)                            \
  X(xnn_delete_runtime)

#define KILN_PTHREADPOOL_FUNCTIONS(X) \
  X(pthreadpool_create)               \
  X(pthreadpool_destroy)

namespace kiln::xnnpack {

struct XnnApi {
#define KILN_XNN_FIELD(name) decltype(&::name) name = nullptr;
  KILN_XNN_FUNCTIONS(KILN_XNN_FIELD)
  KILN_PTHREADPOOL_FUNCTIONS(KILN_XNN_FIELD)
#undef KILN_XNN_FIELD
};

// Loads the libraries once per process (thread-safe). On failure returns
// false with what failed and what to do in *error (every later call says
// the same).
bool LoadXnnApi(std::string* error);
// The loaded table; only after LoadXnnApi returned true.
const XnnApi& Xnn();

}  // namespace kiln::xnnpack

// Calls below this header go through the table (not in xnn_api.cc, which
// resolves the real names).
#ifndef KILN_XNN_NO_REDIRECT
#define KILN_XNN_REDIRECT(name) (::kiln::xnnpack::Xnn().name)
#define xnn_initialize KILN_XNN_REDIRECT(xnn_initialize)
#define xnn_create_subgraph KILN_XNN_REDIRECT(xnn_create_subgraph)
#define xnn_delete_subgraph KILN_XNN_REDIRECT(xnn_delete_subgraph)
#define xnn_define_tensor_value KILN_XNN_REDIRECT(xnn_define_tensor_value)
#define xnn_define_quantized_tensor_value \
  KILN_XNN_REDIRECT(xnn_define_quantized_tensor_value)
#define xnn_define_channelwise_quantized_tensor_value \
  KILN_XNN_REDIRECT(xnn_define_channelwise_quantized_tensor_value)
#define xnn_define_convolution_2d KILN_XNN_REDIRECT(xnn_define_convolution_2d)
#define xnn_define_deconvolution_2d \
  KILN_XNN_REDIRECT(xnn_define_deconvolution_2d)
#define xnn_define_depthwise_convolution_2d \
  KILN_XNN_REDIRECT(xnn_define_depthwise_convolution_2d)
#define xnn_define_depth_to_space KILN_XNN_REDIRECT(xnn_define_depth_to_space)
#define xnn_define_global_average_pooling_2d \
  KILN_XNN_REDIRECT(xnn_define_global_average_pooling_2d)
#define xnn_define_average_pooling_2d \
  KILN_XNN_REDIRECT(xnn_define_average_pooling_2d)
#define xnn_define_fully_connected KILN_XNN_REDIRECT(xnn_define_fully_connected)
#define xnn_define_max_pooling_2d KILN_XNN_REDIRECT(xnn_define_max_pooling_2d)
#define xnn_define_add2 KILN_XNN_REDIRECT(xnn_define_add2)
#define xnn_define_multiply2 KILN_XNN_REDIRECT(xnn_define_multiply2)
#define xnn_define_subtract KILN_XNN_REDIRECT(xnn_define_subtract)
#define xnn_define_divide KILN_XNN_REDIRECT(xnn_define_divide)
#define xnn_define_maximum2 KILN_XNN_REDIRECT(xnn_define_maximum2)
#define xnn_define_minimum2 KILN_XNN_REDIRECT(xnn_define_minimum2)
#define xnn_define_squared_difference \
  KILN_XNN_REDIRECT(xnn_define_squared_difference)
#define xnn_define_static_constant_pad \
  KILN_XNN_REDIRECT(xnn_define_static_constant_pad)
#define xnn_define_static_reshape KILN_XNN_REDIRECT(xnn_define_static_reshape)
#define xnn_define_static_resize_bilinear_2d \
  KILN_XNN_REDIRECT(xnn_define_static_resize_bilinear_2d)
#define xnn_define_prelu KILN_XNN_REDIRECT(xnn_define_prelu)
#define xnn_define_abs KILN_XNN_REDIRECT(xnn_define_abs)
#define xnn_define_bankers_rounding \
  KILN_XNN_REDIRECT(xnn_define_bankers_rounding)
#define xnn_define_ceiling KILN_XNN_REDIRECT(xnn_define_ceiling)
#define xnn_define_clamp KILN_XNN_REDIRECT(xnn_define_clamp)
#define xnn_define_elu KILN_XNN_REDIRECT(xnn_define_elu)
#define xnn_define_floor KILN_XNN_REDIRECT(xnn_define_floor)
#define xnn_define_hardswish KILN_XNN_REDIRECT(xnn_define_hardswish)
#define xnn_define_leaky_relu KILN_XNN_REDIRECT(xnn_define_leaky_relu)
#define xnn_define_negate KILN_XNN_REDIRECT(xnn_define_negate)
#define xnn_define_sigmoid KILN_XNN_REDIRECT(xnn_define_sigmoid)
#define xnn_define_softmax KILN_XNN_REDIRECT(xnn_define_softmax)
#define xnn_define_square KILN_XNN_REDIRECT(xnn_define_square)
#define xnn_define_square_root KILN_XNN_REDIRECT(xnn_define_square_root)
#define xnn_create_runtime_v2 KILN_XNN_REDIRECT(xnn_create_runtime_v2)
#define xnn_setup_runtime KILN_XNN_REDIRECT(xnn_setup_runtime)
#define xnn_invoke_runtime KILN_XNN_REDIRECT(xnn_invoke_runtime)
#define xnn_delete_runtime KILN_XNN_REDIRECT(xnn_delete_runtime)
#define pthreadpool_create KILN_XNN_REDIRECT(pthreadpool_create)
#define pthreadpool_destroy KILN_XNN_REDIRECT(pthreadpool_destroy)
#endif  // KILN_XNN_NO_REDIRECT

#endif  // KILN_PLUGINS_XNNPACK_SRC_XNN_API_H_
