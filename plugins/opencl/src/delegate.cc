#include "delegate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>
#include <utility>

namespace kiln::opencl {
namespace {

std::string PlatformString(const ClApi* cl, cl_platform_id p,
                           cl_platform_info what) {
  size_t size = 0;
  if (cl->clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0) {
    return "";
  }
  std::string s(size, '\0');
  cl->clGetPlatformInfo(p, what, size, s.data(), nullptr);
  s.resize(std::strlen(s.c_str()));
  return s;
}

std::string DeviceString(const ClApi* cl, cl_device_id d, cl_device_info what) {
  size_t size = 0;
  if (cl->clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0) {
    return "";
  }
  std::string s(size, '\0');
  cl->clGetDeviceInfo(d, what, size, s.data(), nullptr);
  s.resize(std::strlen(s.c_str()));
  return s;
}

struct Candidate {
  cl_platform_id platform;
  cl_device_id device;
  cl_device_type type;
  std::string platform_name, device_name;
};

const char* DeviceTypeText(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

// Picks the device; on failure returns false with a message listing what
// was found.
bool SelectDevice(const ClApi* cl, const DelegateOptions& options,
                  Candidate* chosen, std::string* error) {
  cl_uint num_platforms = 0;
  cl_int err = cl->clGetPlatformIDs(0, nullptr, &num_platforms);
  if (err != CL_SUCCESS || num_platforms == 0) {
    *error = "no OpenCL platform is installed (clGetPlatformIDs returned " +
             ClErrorName(err) + " with " + std::to_string(num_platforms) +
             " platforms); install an OpenCL driver (ICD) such as "
             "pocl-opencl-icd or your GPU vendor's, or run without the "
             "opencl delegate";
    return false;
  }
  std::vector<cl_platform_id> platforms(num_platforms);
  cl->clGetPlatformIDs(num_platforms, platforms.data(), nullptr);
  std::vector<Candidate> found;
  std::string seen;
  for (cl_platform_id p : platforms) {
    const std::string platform_name = PlatformString(cl, p, CL_PLATFORM_NAME);
    cl_uint n = 0;
    if (cl->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) !=
            CL_SUCCESS ||
        n == 0) {
      continue;
    }
    std::vector<cl_device_id> devices(n);
    cl->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr);
    for (cl_device_id d : devices) {
      Candidate c{p, d, 0, platform_name, DeviceString(cl, d, CL_DEVICE_NAME)};
      cl->clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(c.type), &c.type, nullptr);
      cl_bool available = CL_FALSE;
      cl->clGetDeviceInfo(d, CL_DEVICE_AVAILABLE, sizeof(available), &available,
                          nullptr);
      seen += (seen.empty() ? "" : "; ") + c.device_name + " (" +
              DeviceTypeText(c.type) + ", platform '" + platform_name + "')";
      if (!available) continue;
      if (platform_name.find(options.platform_filter) == std::string::npos ||
          c.device_name.find(options.device_name_filter) == std::string::npos) {
        continue;
      }
      if (options.device == DeviceKind::kGpu &&
          !(c.type & CL_DEVICE_TYPE_GPU)) {
        continue;
      }
      if (options.device == DeviceKind::kCpu &&
          !(c.type & CL_DEVICE_TYPE_CPU)) {
        continue;
      }
      found.push_back(c);
    }
  }
  if (found.empty()) {
    *error = std::string("no available OpenCL device matches device=") +
             DeviceKindName(options.device) + " platform='" +
             options.platform_filter + "' device_name='" +
             options.device_name_filter +
             "'; devices present: " + (seen.empty() ? "none" : seen) +
             "; change the delegate options (e.g. device=any)";
    return false;
  }
  // With device=any prefer a GPU; otherwise keep enumeration order.
  auto gpu = std::find_if(found.begin(), found.end(), [](const Candidate& c) {
    return (c.type & CL_DEVICE_TYPE_GPU) != 0;
  });
  *chosen = gpu != found.end() ? *gpu : found.front();
  return true;
}

}  // namespace

uint16_t FloatToHalf(float value) {
  uint32_t f;
  std::memcpy(&f, &value, sizeof(f));
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u |
                                 (abs > 0x7f800000u ? 0x200u : 0));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) {  // subnormal or zero in half
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);
    const uint32_t half = mantissa >> (shift + 1);
    const uint32_t rest = mantissa & ((1u << (shift + 1)) - 1);
    const uint32_t mid = 1u << shift;
    const uint32_t rounded =
        half + ((rest > mid || (rest == mid && (half & 1u))) ? 1u : 0u);
    return static_cast<uint16_t>(sign | rounded);
  }
  const uint32_t biased = abs - 0x38000000u;  // rebias exponent 127 -> 15
  uint32_t half = biased >> 13;
  const uint32_t rest = biased & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float HalfToFloat(uint16_t value) {
  const uint32_t sign = static_cast<uint32_t>(value & 0x8000u) << 16;
  const uint32_t exponent = (value >> 10) & 0x1fu;
  const uint32_t mantissa = value & 0x3ffu;
  float result;
  if (exponent == 0) {
    result = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    result = mantissa ? std::nanf("") : INFINITY;
  } else {
    result = std::ldexp(static_cast<float>(mantissa | 0x400u),
                        static_cast<int>(exponent) - 25);
  }
  return sign ? -result : result;
}

KilnStatus Delegate::Create(const KilnHostApi& api, KilnOpaqueContext* context,
                            const uint8_t* settings, uint64_t settings_size,
                            std::unique_ptr<Delegate>* out) {
  DelegateOptions options;
  std::string error;
  if (!ParseDelegateSettings(settings, static_cast<size_t>(settings_size),
                             &options, &error)) {
    api.report_error(context, KILN_STATUS_INVALID_ARGUMENT,
                     ("OpenCL delegate settings: " + error).c_str());
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  std::unique_ptr<Delegate> d(new Delegate(api, std::move(options)));
  d->cl_ = LoadClApi(&error);
  if (d->cl_ == nullptr) {
    api.report_error(context, KILN_STATUS_UNAVAILABLE,
                     ("the OpenCL delegate cannot run here: " + error).c_str());
    return KILN_STATUS_UNAVAILABLE;
  }
  Candidate chosen;
  if (!SelectDevice(d->cl_, d->options_, &chosen, &error)) {
    api.report_error(context, KILN_STATUS_UNAVAILABLE,
                     ("the OpenCL delegate cannot run here: " + error).c_str());
    return KILN_STATUS_UNAVAILABLE;
  }
  const ClApi* cl = d->cl_;
  d->device_ = chosen.device;
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {
      CL_CONTEXT_PLATFORM,
      reinterpret_cast<cl_context_properties>(chosen.platform), 0};
  d->context_ =
      cl->clCreateContext(props, 1, &d->device_, nullptr, nullptr, &err);
  if (d->context_ == nullptr || err != CL_SUCCESS) {
    api.report_error(context, KILN_STATUS_UNAVAILABLE,
                     ("clCreateContext failed for OpenCL device '" +
                      chosen.device_name + "': " + ClErrorName(err))
                         .c_str());
    return KILN_STATUS_UNAVAILABLE;
  }
  d->queue_ = cl->clCreateCommandQueue(d->context_, d->device_, 0, &err);
  if (d->queue_ == nullptr || err != CL_SUCCESS) {
    api.report_error(context, KILN_STATUS_UNAVAILABLE,
                     ("clCreateCommandQueue failed for OpenCL device '" +
                      chosen.device_name + "': " + ClErrorName(err))
                         .c_str());
    return KILN_STATUS_UNAVAILABLE;
  }
  const std::string extensions =
      DeviceString(cl, d->device_, CL_DEVICE_EXTENSIONS);
  const bool device_has_fp16 =
      extensions.find("cl_khr_fp16") != std::string::npos;
  d->fp16_storage_ = d->options_.allow_fp16_storage && device_has_fp16;
  if (d->options_.allow_fp16_storage && !device_has_fp16) {
    d->Log(KILN_LOG_INFO, "fp16 storage was allowed but OpenCL device '" +
                              chosen.device_name +
                              "' has no cl_khr_fp16; using fp32");
  }
  d->build_options_ = "-cl-std=CL1.2";
  if (d->fp16_storage_) d->build_options_ += " -DKILN_FP16_STORAGE=1";
  DeviceIdentity identity;
  identity.device_name = chosen.device_name;
  identity.driver_version = DeviceString(cl, d->device_, CL_DRIVER_VERSION);
  identity.platform_version =
      PlatformString(cl, chosen.platform, CL_PLATFORM_VERSION);
  d->description_ = chosen.device_name + " (" + chosen.platform_name + ", " +
                    identity.driver_version + ")";
  Delegate* self = d.get();
  d->programs_ = std::make_unique<ProgramCache>(
      cl, d->context_, d->device_, identity,
      ResolveCacheDir(d->options_.cache_dir),
      [self](int32_t severity, const std::string& message) {
        self->Log(severity, message);
      });
  d->Log(KILN_LOG_INFO,
         "OpenCL delegate uses " + d->description_ +
             (d->fp16_storage_ ? " with fp16 storage" : " with fp32 storage"));
  *out = std::move(d);
  return KILN_STATUS_OK;
}

Delegate::~Delegate() {
  programs_.reset();
  if (queue_ != nullptr) cl_->clReleaseCommandQueue(queue_);
  if (context_ != nullptr) cl_->clReleaseContext(context_);
}

void Delegate::Log(int32_t severity, const std::string& message) const {
  if (api_.log != nullptr) api_.log(nullptr, severity, message.c_str());
}

KilnStatus Delegate::ClaimNodes(KilnOpaqueContext* context) {
  decline_reasons_.clear();
  const int32_t* plan = nullptr;
  int32_t count = 0;
  KilnStatus s = api_.context_execution_plan(context, &plan, &count);
  if (s != KILN_STATUS_OK) return s;
  const ShapeLookup model_shape = [&](int32_t index,
                                      std::vector<int32_t>* shape) {
    KilnOpaqueTensor* t = api_.context_tensor(context, index);
    const int32_t rank = t == nullptr ? -1 : api_.tensor_rank(t);
    if (rank < 0) return false;
    shape->clear();
    for (int32_t i = 0; i < rank; ++i) {
      const int32_t d = api_.tensor_dim(t, i);
      if (d < 0) return false;
      shape->push_back(d);
    }
    return true;
  };
  std::vector<int32_t> supported;
  for (int32_t i = 0; i < count; ++i) {
    const int32_t index = plan[i];
    const KilnOpaqueNode* node = api_.context_node(context, index);
    if (node == nullptr) continue;
    NodePlan node_plan;
    const std::string why =
        PlanNode(api_, context, node, model_shape, &node_plan);
    if (why.empty()) {
      supported.push_back(index);
    } else {
      decline_reasons_[index] = why;
    }
  }
  // Group supported nodes connected by tensors; drop groups smaller than
  // min_partition_size.
  std::map<int32_t, int32_t> parent;
  for (int32_t n : supported) parent[n] = n;
  auto find = [&](int32_t n) {
    while (parent[n] != n) n = parent[n] = parent[parent[n]];
    return n;
  };
  std::map<int32_t, int32_t> producer;  // tensor -> supported node
  for (int32_t n : supported) {
    const KilnOpaqueNode* node = api_.context_node(context, n);
    for (int32_t o = 0; o < api_.node_num_outputs(node); ++o) {
      producer[api_.node_output_index(node, o)] = n;
    }
  }
  for (int32_t n : supported) {
    const KilnOpaqueNode* node = api_.context_node(context, n);
    for (int32_t k = 0; k < api_.node_num_inputs(node); ++k) {
      auto p = producer.find(api_.node_input_index(node, k));
      if (p != producer.end()) parent[find(n)] = find(p->second);
    }
  }
  std::map<int32_t, int32_t> group_size;
  for (int32_t n : supported) ++group_size[find(n)];
  std::vector<int32_t> claimed;
  for (int32_t n : supported) {
    const int32_t size = group_size[find(n)];
    if (size < options_.min_partition_size) {
      decline_reasons_[n] = "its connected group of supported nodes has " +
                            std::to_string(size) +
                            " node(s), fewer than min_partition_size=" +
                            std::to_string(options_.min_partition_size);
    } else {
      claimed.push_back(n);
    }
  }
  for (const auto& [index, why] : decline_reasons_) {
    Log(KILN_LOG_INFO,
        "OpenCL delegate declines node " + std::to_string(index) + ": " + why);
  }
  Log(KILN_LOG_INFO, "OpenCL delegate claims " +
                         std::to_string(claimed.size()) + " of " +
                         std::to_string(count) + " nodes");
  if (claimed.empty()) return KILN_STATUS_OK;
  return api_.context_delegate_nodes(context, claimed.data(),
                                     static_cast<int32_t>(claimed.size()));
}

const char* Delegate::DeclineReason(int32_t node_index) const {
  auto it = decline_reasons_.find(node_index);
  return it == decline_reasons_.end() ? nullptr : it->second.c_str();
}

void Delegate::FillStats(KilnOpenClStats* stats) const {
  KilnOpenClStats full;
  std::memset(&full, 0, sizeof(full));
  full.struct_size = stats->struct_size;
  full.fp16_storage = fp16_storage_ ? 1 : 0;
  const ProgramCacheStats& s = programs_->stats();
  full.programs_built_from_source = s.built_from_source.load();
  full.programs_loaded_from_disk_cache = s.loaded_from_disk.load();
  full.programs_reused_from_memory = s.reused_from_memory.load();
  full.cache_files_rejected = s.files_rejected.load();
  full.cache_files_written = s.files_written.load();
  std::memcpy(stats, &full, std::min<size_t>(stats->struct_size, sizeof(full)));
}

KilnStatus Delegate::InitPartition(KilnOpaqueContext* context,
                                   KilnOpaqueNode* partition,
                                   std::unique_ptr<Partition>* state) {
  const int32_t* nodes = nullptr;
  int32_t count = 0;
  if (api_.node_delegated_nodes(partition, &nodes, &count) != KILN_STATUS_OK ||
      count <= 0) {
    api_.report_error(context, KILN_STATUS_INVALID_ARGUMENT,
                      "the partition node lists no delegated nodes "
                      "(node_delegated_nodes failed)");
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  *state = std::make_unique<Partition>(
      this, std::vector<int32_t>(nodes, nodes + count));
  return KILN_STATUS_OK;
}

Partition::~Partition() { Release(); }

void Partition::Release() {
  const ClApi* cl = delegate_->cl_;
  for (BoundLaunch& l : launches_) {
    if (l.kernel != nullptr) cl->clReleaseKernel(l.kernel);
  }
  launches_.clear();
  for (auto& entry : buffers_) cl->clReleaseMemObject(entry.second.mem);
  buffers_.clear();
  if (dummy_ != nullptr) cl->clReleaseMemObject(dummy_);
  dummy_ = nullptr;
  inputs_.clear();
  outputs_.clear();
  prepared_ = false;
}

KilnStatus Partition::Fail(KilnOpaqueContext* context, KilnStatus code,
                           const std::string& message) const {
  delegate_->api_.report_error(context, code,
                               ("OpenCL delegate: " + message).c_str());
  return code;
}

KilnStatus Partition::Prepare(KilnOpaqueContext* context,
                              KilnOpaqueNode* partition) {
  Release();
  const KilnHostApi& api = delegate_->api_;
  const ClApi* cl = delegate_->cl_;
  std::map<int32_t, std::vector<int32_t>> shapes;  // tensors produced here
  const ShapeLookup shape_of = [&](int32_t index, std::vector<int32_t>* shape) {
    auto it = shapes.find(index);
    if (it != shapes.end()) {
      *shape = it->second;
      return true;
    }
    KilnOpaqueTensor* t = api.context_tensor(context, index);
    const int32_t rank = t == nullptr ? -1 : api.tensor_rank(t);
    if (rank < 0) return false;
    shape->clear();
    for (int32_t i = 0; i < rank; ++i) {
      const int32_t d = api.tensor_dim(t, i);
      if (d < 0) return false;
      shape->push_back(d);
    }
    return true;
  };
  std::set<int32_t> device_tensors;
  for (int32_t index : nodes_) {
    const KilnOpaqueNode* node = api.context_node(context, index);
    if (node == nullptr) {
      return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                  "delegated node " + std::to_string(index) +
                      " does not exist in the subgraph");
    }
    NodePlan plan;
    const std::string why = PlanNode(api, context, node, shape_of, &plan);
    if (!why.empty() || plan.launches.empty()) {
      return Fail(
          context, KILN_STATUS_INVALID_ARGUMENT,
          "cannot prepare node " + std::to_string(index) + ": " +
              (why.empty() ? "its parameter tensors are not readable" : why));
    }
    shapes[plan.output_tensor] = plan.output_shape;
    for (Launch& l : plan.launches) {
      for (const KernelArg& a : l.args) {
        if (a.kind == KernelArg::Kind::kTensor && a.tensor >= 0) {
          device_tensors.insert(a.tensor);
        }
      }
      if (l.kernel == nullptr) {
        device_tensors.insert(l.copy_from);
        device_tensors.insert(l.copy_to);
      }
      BoundLaunch b;
      b.launch = std::move(l);
      b.node = index;
      launches_.push_back(std::move(b));
    }
  }
  // Partition outputs: size them for the host.
  const int32_t num_outputs = api.node_num_outputs(partition);
  for (int32_t i = 0; i < num_outputs; ++i) {
    const int32_t index = api.node_output_index(partition, i);
    auto it = shapes.find(index);
    if (it == shapes.end()) {
      return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                  "partition output " + std::to_string(i) + " (tensor " +
                      std::to_string(index) +
                      ") is not produced by any delegated node");
    }
    KilnOpaqueTensor* t = api.context_tensor(context, index);
    const KilnStatus s = api.tensor_resize(
        context, t, static_cast<int32_t>(it->second.size()), it->second.data());
    if (s != KILN_STATUS_OK) return s;
    outputs_.push_back(index);
  }
  const size_t element_size =
      delegate_->fp16_storage_ ? sizeof(uint16_t) : sizeof(float);
  cl_int err = CL_SUCCESS;
  dummy_ = cl->clCreateBuffer(delegate_->context_, CL_MEM_READ_WRITE,
                              element_size, nullptr, &err);
  if (dummy_ == nullptr) {
    return Fail(context, KILN_STATUS_RESOURCE_EXHAUSTED,
                "clCreateBuffer failed: " + ClErrorName(err));
  }
  for (int32_t index : device_tensors) {
    Buffer b;
    if (!shape_of(index, &b.shape)) {
      return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                  "tensor " + std::to_string(index) + " has no static shape");
    }
    b.elements = 1;
    for (int32_t d : b.shape) b.elements *= static_cast<size_t>(d);
    b.mem = cl->clCreateBuffer(delegate_->context_, CL_MEM_READ_WRITE,
                               std::max<size_t>(b.elements, 1) * element_size,
                               nullptr, &err);
    if (b.mem == nullptr || err != CL_SUCCESS) {
      return Fail(context, KILN_STATUS_RESOURCE_EXHAUSTED,
                  "clCreateBuffer of " +
                      std::to_string(b.elements * element_size) +
                      " bytes for tensor " + std::to_string(index) +
                      " failed: " + ClErrorName(err));
    }
    buffers_[index] = b;
    if (shapes.count(index) != 0) continue;  // produced inside
    KilnOpaqueTensor* t = api.context_tensor(context, index);
    if (api.tensor_is_constant(t)) {
      const float* data = static_cast<const float*>(api.tensor_data(t));
      if (data == nullptr ||
          api.tensor_byte_size(t) < b.elements * sizeof(float)) {
        return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                    std::string("constant tensor '") + api.tensor_name(t) +
                        "' has no data or too few bytes for its shape");
      }
      if (delegate_->fp16_storage_) {
        std::vector<uint16_t> half(b.elements);
        for (size_t k = 0; k < b.elements; ++k) half[k] = FloatToHalf(data[k]);
        err = cl->clEnqueueWriteBuffer(delegate_->queue_, b.mem, CL_TRUE, 0,
                                       half.size() * 2, half.data(), 0, nullptr,
                                       nullptr);
      } else {
        err = cl->clEnqueueWriteBuffer(delegate_->queue_, b.mem, CL_TRUE, 0,
                                       b.elements * sizeof(float), data, 0,
                                       nullptr, nullptr);
      }
      if (err != CL_SUCCESS) {
        return Fail(context, KILN_STATUS_INTERNAL,
                    std::string("uploading constant tensor '") +
                        api.tensor_name(t) + "' failed: " + ClErrorName(err));
      }
    } else {
      inputs_.push_back(index);
    }
  }
  // Programs and kernels.
  cl_program programs[kNumProgramGroups] = {};
  for (BoundLaunch& b : launches_) {
    const Launch& l = b.launch;
    if (l.kernel == nullptr) continue;
    const int group = static_cast<int>(l.group);
    if (programs[group] == nullptr) {
      std::string error;
      programs[group] = delegate_->programs_->Get(
          ProgramGroupName(l.group), ProgramSource(l.group),
          delegate_->build_options_, &error);
      if (programs[group] == nullptr) {
        return Fail(context, KILN_STATUS_INTERNAL, error);
      }
    }
    b.kernel = cl->clCreateKernel(programs[group], l.kernel, &err);
    if (b.kernel == nullptr || err != CL_SUCCESS) {
      return Fail(context, KILN_STATUS_INTERNAL,
                  std::string("clCreateKernel(") + l.kernel +
                      ") failed: " + ClErrorName(err));
    }
    for (size_t k = 0; k < l.args.size(); ++k) {
      const KernelArg& a = l.args[k];
      const cl_uint at = static_cast<cl_uint>(k);
      switch (a.kind) {
        case KernelArg::Kind::kTensor: {
          cl_mem mem = a.tensor >= 0 ? buffers_[a.tensor].mem : dummy_;
          err = cl->clSetKernelArg(b.kernel, at, sizeof(cl_mem), &mem);
          break;
        }
        case KernelArg::Kind::kInt:
          err = cl->clSetKernelArg(b.kernel, at, sizeof(cl_int), &a.i);
          break;
        case KernelArg::Kind::kFloat:
          err = cl->clSetKernelArg(b.kernel, at, sizeof(cl_float), &a.f);
          break;
        case KernelArg::Kind::kInt4:
          err = cl->clSetKernelArg(b.kernel, at, sizeof(cl_int4), &a.v);
          break;
      }
      if (err != CL_SUCCESS) {
        return Fail(context, KILN_STATUS_INTERNAL,
                    std::string("clSetKernelArg(") + l.kernel + ", " +
                        std::to_string(k) + ") failed: " + ClErrorName(err));
      }
    }
  }
  // Warm-up with the real NDRanges so that lazy per-NDRange compilation
  // happens now, not in the first invoke.
  KilnStatus s = Enqueue(context);
  if (s != KILN_STATUS_OK) return s;
  err = cl->clFinish(delegate_->queue_);
  if (err != CL_SUCCESS) {
    return Fail(context, KILN_STATUS_INTERNAL,
                "clFinish after the warm-up run failed: " + ClErrorName(err));
  }
  prepared_ = true;
  return KILN_STATUS_OK;
}

KilnStatus Partition::Enqueue(KilnOpaqueContext* context) {
  const ClApi* cl = delegate_->cl_;
  const size_t element_size =
      delegate_->fp16_storage_ ? sizeof(uint16_t) : sizeof(float);
  for (const BoundLaunch& b : launches_) {
    const Launch& l = b.launch;
    cl_int err = CL_SUCCESS;
    if (l.kernel == nullptr) {
      if (l.copy_from != l.copy_to && l.copy_elements > 0) {
        err = cl->clEnqueueCopyBuffer(
            delegate_->queue_, buffers_[l.copy_from].mem,
            buffers_[l.copy_to].mem, 0, 0, l.copy_elements * element_size, 0,
            nullptr, nullptr);
      }
    } else {
      err = cl->clEnqueueNDRangeKernel(
          delegate_->queue_, b.kernel, static_cast<cl_uint>(l.global.size()),
          nullptr, l.global.data(), nullptr, 0, nullptr, nullptr);
    }
    if (err != CL_SUCCESS) {
      return Fail(context, KILN_STATUS_INTERNAL,
                  "enqueueing " +
                      std::string(l.kernel != nullptr ? l.kernel : "a copy") +
                      " for node " + std::to_string(b.node) +
                      " failed: " + ClErrorName(err));
    }
  }
  return KILN_STATUS_OK;
}

KilnStatus Partition::Invoke(KilnOpaqueContext* context, KilnOpaqueNode*) {
  if (!prepared_) {
    return Fail(context, KILN_STATUS_FAILED_PRECONDITION,
                "partition invoked before a successful prepare");
  }
  const KilnHostApi& api = delegate_->api_;
  const ClApi* cl = delegate_->cl_;
  const bool fp16 = delegate_->fp16_storage_;
  size_t half_total = 0;
  if (fp16) {
    for (int32_t index : inputs_) half_total += buffers_[index].elements;
    for (int32_t index : outputs_) half_total += buffers_[index].elements;
    half_scratch_.resize(half_total);
  }
  size_t half_offset = 0;
  for (int32_t index : inputs_) {
    const Buffer& b = buffers_[index];
    KilnOpaqueTensor* t = api.context_tensor(context, index);
    const float* data = static_cast<const float*>(api.tensor_data(t));
    if (data == nullptr || api.tensor_byte_size(t) < b.elements * 4) {
      return Fail(context, KILN_STATUS_FAILED_PRECONDITION,
                  std::string("input tensor '") + api.tensor_name(t) +
                      "' has no data or too few bytes at invoke");
    }
    cl_int err;
    if (fp16) {
      uint16_t* half = half_scratch_.data() + half_offset;
      for (size_t k = 0; k < b.elements; ++k) half[k] = FloatToHalf(data[k]);
      half_offset += b.elements;
      err = cl->clEnqueueWriteBuffer(delegate_->queue_, b.mem, CL_FALSE, 0,
                                     b.elements * 2, half, 0, nullptr, nullptr);
    } else {
      err = cl->clEnqueueWriteBuffer(delegate_->queue_, b.mem, CL_FALSE, 0,
                                     b.elements * 4, data, 0, nullptr, nullptr);
    }
    if (err != CL_SUCCESS) {
      return Fail(context, KILN_STATUS_INTERNAL,
                  std::string("uploading input '") + api.tensor_name(t) +
                      "' failed: " + ClErrorName(err));
    }
  }
  KilnStatus s = Enqueue(context);
  if (s != KILN_STATUS_OK) {
    cl->clFinish(delegate_->queue_);
    return s;
  }
  const size_t output_half_start = half_offset;
  for (int32_t index : outputs_) {
    const Buffer& b = buffers_[index];
    KilnOpaqueTensor* t = api.context_tensor(context, index);
    void* data = api.tensor_data(t);
    if (data == nullptr || api.tensor_byte_size(t) < b.elements * 4) {
      cl->clFinish(delegate_->queue_);
      return Fail(context, KILN_STATUS_FAILED_PRECONDITION,
                  std::string("output tensor '") + api.tensor_name(t) +
                      "' has no data or too few bytes at invoke");
    }
    cl_int err;
    if (fp16) {
      err = cl->clEnqueueReadBuffer(
          delegate_->queue_, b.mem, CL_FALSE, 0, b.elements * 2,
          half_scratch_.data() + half_offset, 0, nullptr, nullptr);
      half_offset += b.elements;
    } else {
      err = cl->clEnqueueReadBuffer(delegate_->queue_, b.mem, CL_FALSE, 0,
                                    b.elements * 4, data, 0, nullptr, nullptr);
    }
    if (err != CL_SUCCESS) {
      cl->clFinish(delegate_->queue_);
      return Fail(context, KILN_STATUS_INTERNAL,
                  std::string("reading output '") + api.tensor_name(t) +
                      "' failed: " + ClErrorName(err));
    }
  }
  const cl_int err = cl->clFinish(delegate_->queue_);  // the one sync
  if (err != CL_SUCCESS) {
    return Fail(context, KILN_STATUS_INTERNAL,
                "clFinish failed: " + ClErrorName(err));
  }
  if (fp16) {
    half_offset = output_half_start;
    for (int32_t index : outputs_) {
      const Buffer& b = buffers_[index];
      float* data = static_cast<float*>(
          api.tensor_data(api.context_tensor(context, index)));
      for (size_t k = 0; k < b.elements; ++k) {
        data[k] = HalfToFloat(half_scratch_[half_offset + k]);
      }
      half_offset += b.elements;
    }
  }
  return KILN_STATUS_OK;
}

}  // namespace kiln::opencl
