#include "delegate.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "kiln/sdk/float16.h"
#include "kiln/sdk/profiler.h"

namespace kiln::opencl {

struct DeviceCandidate {
  cl_platform_id platform;
  cl_device_id device;
  cl_device_type type;
  std::string platform_name, device_name;
};

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

const char* DeviceTypeText(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

// Picks the device; on failure returns false with a message listing what
// was found.
bool SelectDevice(const ClApi* cl, const DelegateOptions& options,
                  DeviceCandidate* chosen, std::string* error) {
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
  std::vector<DeviceCandidate> found;
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
      DeviceCandidate c{p, d, 0, platform_name,
                        DeviceString(cl, d, CL_DEVICE_NAME)};
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
  auto gpu =
      std::find_if(found.begin(), found.end(), [](const DeviceCandidate& c) {
        return (c.type & CL_DEVICE_TYPE_GPU) != 0;
      });
  *chosen = gpu != found.end() ? *gpu : found.front();
  return true;
}

}  // namespace

KilnStatus Delegate::Create(sdk::DelegateContext& context,
                            const sdk::DelegateSettings& settings,
                            std::unique_ptr<sdk::Delegate>* out) {
  DelegateOptions options;
  std::string error;
  if (!ApplyDelegateSettings(settings, &options, &error)) {
    return context.Fail(KILN_STATUS_INVALID_ARGUMENT,
                        "OpenCL delegate settings: ", error);
  }
  std::unique_ptr<Delegate> d(new Delegate(context.host(), std::move(options)));
  d->cl_ = LoadClApi(&error);
  DeviceCandidate chosen;
  if (d->cl_ == nullptr ||
      !SelectDevice(d->cl_, d->options_, &chosen, &error)) {
    return context.Fail(KILN_STATUS_UNAVAILABLE,
                        "the OpenCL delegate cannot run here: ", error);
  }
  KILN_SDK_RETURN_IF_ERROR(d->OpenDevice(context, chosen));
  d->profiler_ = sdk::HostProfiler(context.host());
  *out = std::move(d);
  return KILN_STATUS_OK;
}

KilnStatus Delegate::OpenDevice(sdk::DelegateContext& context,
                                const DeviceCandidate& chosen) {
  const ClApi* cl = cl_;
  device_ = chosen.device;
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {
      CL_CONTEXT_PLATFORM,
      reinterpret_cast<cl_context_properties>(chosen.platform), 0};
  context_ = cl->clCreateContext(props, 1, &device_, nullptr, nullptr, &err);
  if (context_ == nullptr || err != CL_SUCCESS) {
    return context.Fail(KILN_STATUS_UNAVAILABLE,
                        "clCreateContext failed for OpenCL device '",
                        chosen.device_name, "': ", ClErrorName(err));
  }
  queue_ = cl->clCreateCommandQueue(context_, device_, 0, &err);
  if (queue_ == nullptr || err != CL_SUCCESS) {
    return context.Fail(KILN_STATUS_UNAVAILABLE,
                        "clCreateCommandQueue failed for OpenCL device '",
                        chosen.device_name, "': ", ClErrorName(err));
  }
  const std::string extensions =
      DeviceString(cl, device_, CL_DEVICE_EXTENSIONS);
  const bool device_has_fp16 =
      extensions.find("cl_khr_fp16") != std::string::npos;
  fp16_storage_ = options_.allow_fp16_storage && device_has_fp16;
  if (options_.allow_fp16_storage && !device_has_fp16) {
    Log(KILN_LOG_INFO, "fp16 storage was allowed but OpenCL device '" +
                           chosen.device_name +
                           "' has no cl_khr_fp16; using fp32");
  }
  build_options_ = "-cl-std=CL1.2";
  if (fp16_storage_) build_options_ += " -DKILN_FP16_STORAGE=1";
  DeviceIdentity identity;
  identity.device_name = chosen.device_name;
  identity.driver_version = DeviceString(cl, device_, CL_DRIVER_VERSION);
  identity.platform_version =
      PlatformString(cl, chosen.platform, CL_PLATFORM_VERSION);
  description_ = chosen.device_name + " (" + chosen.platform_name + ", " +
                 identity.driver_version + ")";
  programs_ = std::make_unique<ProgramCache>(
      cl, context_, device_, identity, ResolveCacheDir(options_.cache_dir),
      [this](int32_t severity, const std::string& message) {
        Log(severity, message);
      });
  Log(KILN_LOG_INFO,
      "OpenCL delegate uses " + description_ +
          (fp16_storage_ ? " with fp16 storage" : " with fp32 storage"));
  return KILN_STATUS_OK;
}

Delegate::~Delegate() {
  programs_.reset();
  if (queue_ != nullptr) cl_->clReleaseCommandQueue(queue_);
  if (context_ != nullptr) cl_->clReleaseContext(context_);
}

void Delegate::Log(int32_t severity, const std::string& message) const {
  host_->log(nullptr, severity, message.c_str());
}

sdk::NodeSupport Delegate::Supports(const sdk::GraphNode& node) {
  const ShapeLookup model_shape = [&node](int32_t index,
                                          std::vector<int32_t>* shape) {
    return StaticShape(node.tensor(index), shape);
  };
  NodePlan plan;
  return PlanNode(node, model_shape, &plan);
}

std::unique_ptr<sdk::PartitionKernel> Delegate::CreatePartitionKernel() {
  return std::make_unique<Partition>(this);
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
  full.tensor_uploads = tensor_uploads_.load();
  full.tensor_downloads = tensor_downloads_.load();
  std::memcpy(stats, &full, std::min<size_t>(stats->struct_size, sizeof(full)));
}

namespace {

// A tensor's shape as planned inside the partition, else its static shape.
bool PlannedShape(const sdk::PartitionContext& p,
                  const std::map<int32_t, std::vector<int32_t>>& planned,
                  int32_t index, std::vector<int32_t>* shape) {
  auto it = planned.find(index);
  if (it == planned.end()) return StaticShape(p.tensor(index), shape);
  *shape = it->second;
  return true;
}

}  // namespace

Partition::~Partition() { Release(); }

void Partition::Release() {
  const ClApi* cl = delegate_->cl_;
  for (BoundLaunch& l : launches_) {
    if (l.kernel != nullptr) cl->clReleaseKernel(l.kernel);
  }
  launches_.clear();
  for (auto& entry : buffers_) {
    delegate_->partition_buffers_.erase(entry.second.mem);
    cl->clReleaseMemObject(entry.second.mem);
  }
  buffers_.clear();
  if (dummy_ != nullptr) cl->clReleaseMemObject(dummy_);
  dummy_ = nullptr;
  inputs_.clear();
  outputs_.clear();
  prepared_ = false;
}

size_t Partition::element_size() const {
  return delegate_->fp16_storage_ ? sizeof(uint16_t) : sizeof(float);
}

KilnStatus Partition::Fail(sdk::PartitionContext& p, KilnStatus code,
                           const std::string& message) const {
  return p.Fail(code, "OpenCL delegate: ", message);
}

KilnStatus Partition::Prepare(sdk::PartitionContext& p) {
  UnbindOutputs(p);
  Release();
  keep_outputs_ = p.HostHas(&KilnHostApi::tensor_set_buffer_handle);
  PlannedShapes shapes;
  std::set<int32_t> device_tensors;
  KILN_SDK_RETURN_IF_ERROR(PlanLaunches(p, &shapes, &device_tensors));
  KILN_SDK_RETURN_IF_ERROR(SizeOutputs(p, shapes));
  KILN_SDK_RETURN_IF_ERROR(CreateBuffers(p, shapes, device_tensors));
  KILN_SDK_RETURN_IF_ERROR(CreateKernels(p));
  // Warm-up with the real NDRanges so that lazy per-NDRange compilation
  // happens now, not in the first invoke.
  KILN_SDK_RETURN_IF_ERROR(Enqueue(p));
  const cl_int err = delegate_->cl_->clFinish(delegate_->queue_);
  if (err != CL_SUCCESS) {
    return Fail(p, KILN_STATUS_INTERNAL,
                "clFinish after the warm-up run failed: " + ClErrorName(err));
  }
  prepared_ = true;
  return KILN_STATUS_OK;
}

// Plans every delegated node on the shapes planned so far; collects the
// tensors that need a device buffer.
KilnStatus Partition::PlanLaunches(sdk::PartitionContext& p,
                                   PlannedShapes* shapes,
                                   std::set<int32_t>* device_tensors) {
  const ShapeLookup shape_of = [&](int32_t index, std::vector<int32_t>* shape) {
    return PlannedShape(p, *shapes, index, shape);
  };
  for (const sdk::GraphNode& node : p.nodes()) {
    NodePlan plan;
    const sdk::NodeSupport support = PlanNode(node, shape_of, &plan);
    if (!support.supported() || plan.launches.empty()) {
      return Fail(
          p, KILN_STATUS_INVALID_ARGUMENT,
          "cannot prepare node " + std::to_string(node.index()) + ": " +
              (support.supported() ? "its parameter tensors are not readable"
                                   : support.reason()));
    }
    (*shapes)[plan.output_tensor] = plan.output_shape;
    for (Launch& l : plan.launches) {
      for (const KernelArg& a : l.args) {
        if (a.kind == KernelArg::Kind::kTensor && a.tensor >= 0) {
          device_tensors->insert(a.tensor);
        }
      }
      if (l.kernel == nullptr) {
        device_tensors->insert(l.copy_from);
        device_tensors->insert(l.copy_to);
      }
      BoundLaunch b;
      b.launch = std::move(l);
      b.node = node.index();
      launches_.push_back(std::move(b));
    }
  }
  return KILN_STATUS_OK;
}

// Sizes the partition's outputs for the host.
KilnStatus Partition::SizeOutputs(sdk::PartitionContext& p,
                                  const PlannedShapes& shapes) {
  for (int32_t i = 0; i < p.num_outputs(); ++i) {
    const int32_t index = p.output_index(i);
    auto it = shapes.find(index);
    if (it == shapes.end()) {
      return Fail(p, KILN_STATUS_INVALID_ARGUMENT,
                  "partition output " + std::to_string(i) + " (tensor " +
                      std::to_string(index) +
                      ") is not produced by any delegated node");
    }
    KILN_SDK_RETURN_IF_ERROR(p.Resize(p.tensor(index), it->second));
    outputs_.push_back(index);
  }
  return KILN_STATUS_OK;
}

// One buffer per device tensor (and a dummy for absent optional inputs);
// uploads constants and records the inputs written per invoke.
KilnStatus Partition::CreateBuffers(sdk::PartitionContext& p,
                                    const PlannedShapes& shapes,
                                    const std::set<int32_t>& device_tensors) {
  const ClApi* cl = delegate_->cl_;
  cl_int err = CL_SUCCESS;
  dummy_ = cl->clCreateBuffer(delegate_->context_, CL_MEM_READ_WRITE,
                              element_size(), nullptr, &err);
  if (dummy_ == nullptr) {
    return Fail(p, KILN_STATUS_RESOURCE_EXHAUSTED,
                "clCreateBuffer failed: " + ClErrorName(err));
  }
  for (int32_t index : device_tensors) {
    Buffer b;
    if (!PlannedShape(p, shapes, index, &b.shape)) {
      return Fail(p, KILN_STATUS_INVALID_ARGUMENT,
                  "tensor " + std::to_string(index) + " has no static shape");
    }
    b.elements = 1;
    for (int32_t d : b.shape) b.elements *= static_cast<size_t>(d);
    const size_t bytes = std::max<size_t>(b.elements, 1) * element_size();
    b.mem = cl->clCreateBuffer(delegate_->context_, CL_MEM_READ_WRITE, bytes,
                               nullptr, &err);
    if (b.mem == nullptr || err != CL_SUCCESS) {
      return Fail(p, KILN_STATUS_RESOURCE_EXHAUSTED,
                  "clCreateBuffer of " +
                      std::to_string(b.elements * element_size()) +
                      " bytes for tensor " + std::to_string(index) +
                      " failed: " + ClErrorName(err));
    }
    b.bound = b.mem;
    buffers_[index] = b;
    delegate_->partition_buffers_.insert(b.mem);
    if (shapes.count(index) != 0) continue;  // produced inside
    const sdk::Tensor t = p.tensor(index);
    if (t.is_constant()) {
      KILN_SDK_RETURN_IF_ERROR(UploadConstant(p, t, b));
    } else {
      inputs_.push_back(index);
    }
  }
  return KILN_STATUS_OK;
}

KilnStatus Partition::UploadConstant(sdk::PartitionContext& p,
                                     const sdk::Tensor& t, const Buffer& b) {
  const float* data = t.data<const float>();
  if (data == nullptr || t.byte_size() < b.elements * sizeof(float)) {
    return Fail(p, KILN_STATUS_INVALID_ARGUMENT,
                std::string("constant tensor '") + t.name() +
                    "' has no data or too few bytes for its shape");
  }
  const ClApi* cl = delegate_->cl_;
  cl_int err;
  if (delegate_->fp16_storage_) {
    std::vector<uint16_t> half(b.elements);
    for (size_t k = 0; k < b.elements; ++k) half[k] = sdk::FloatToHalf(data[k]);
    err = cl->clEnqueueWriteBuffer(delegate_->queue_, b.mem, CL_TRUE, 0,
                                   half.size() * 2, half.data(), 0, nullptr,
                                   nullptr);
  } else {
    err = cl->clEnqueueWriteBuffer(delegate_->queue_, b.mem, CL_TRUE, 0,
                                   b.elements * sizeof(float), data, 0, nullptr,
                                   nullptr);
  }
  if (err != CL_SUCCESS) {
    return Fail(p, KILN_STATUS_INTERNAL,
                std::string("uploading constant tensor '") + t.name() +
                    "' failed: " + ClErrorName(err));
  }
  return KILN_STATUS_OK;
}

// Builds (or reuses) each program group's program and creates the kernels.
KilnStatus Partition::CreateKernels(sdk::PartitionContext& p) {
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
        return Fail(p, KILN_STATUS_INTERNAL, error);
      }
    }
    cl_int err = CL_SUCCESS;
    b.kernel = delegate_->cl_->clCreateKernel(programs[group], l.kernel, &err);
    if (b.kernel == nullptr || err != CL_SUCCESS) {
      return Fail(p, KILN_STATUS_INTERNAL,
                  std::string("clCreateKernel(") + l.kernel +
                      ") failed: " + ClErrorName(err));
    }
    KILN_SDK_RETURN_IF_ERROR(SetKernelArgs(p, b));
  }
  return KILN_STATUS_OK;
}

KilnStatus Partition::SetKernelArgs(sdk::PartitionContext& p,
                                    const BoundLaunch& b) {
  const ClApi* cl = delegate_->cl_;
  const Launch& l = b.launch;
  for (size_t k = 0; k < l.args.size(); ++k) {
    const KernelArg& a = l.args[k];
    const cl_uint at = static_cast<cl_uint>(k);
    cl_int err = CL_SUCCESS;
    switch (a.kind) {
      case KernelArg::Kind::kTensor: {
        cl_mem mem = a.tensor >= 0 ? buffers_[a.tensor].bound : dummy_;
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
      return Fail(p, KILN_STATUS_INTERNAL,
                  std::string("clSetKernelArg(") + l.kernel + ", " +
                      std::to_string(k) + ") failed: " + ClErrorName(err));
    }
  }
  return KILN_STATUS_OK;
}

KilnStatus Partition::Enqueue(sdk::PartitionContext& p) {
  const ClApi* cl = delegate_->cl_;
  for (const BoundLaunch& b : launches_) {
    const Launch& l = b.launch;
    cl_int err = CL_SUCCESS;
    if (l.kernel == nullptr) {
      if (l.copy_from != l.copy_to && l.copy_elements > 0) {
        err = cl->clEnqueueCopyBuffer(
            delegate_->queue_, buffers_[l.copy_from].bound,
            buffers_[l.copy_to].bound, 0, 0, l.copy_elements * element_size(),
            0, nullptr, nullptr);
      }
    } else {
      err = cl->clEnqueueNDRangeKernel(
          delegate_->queue_, b.kernel, static_cast<cl_uint>(l.global.size()),
          nullptr, l.global.data(), nullptr, 0, nullptr, nullptr);
    }
    if (err != CL_SUCCESS) {
      return Fail(p, KILN_STATUS_INTERNAL,
                  "enqueueing " +
                      std::string(l.kernel != nullptr ? l.kernel : "a copy") +
                      " for node " + std::to_string(b.node) +
                      " failed: " + ClErrorName(err));
    }
  }
  return KILN_STATUS_OK;
}

KilnStatus Partition::Invoke(sdk::PartitionContext& p) {
  if (!prepared_) {
    return Fail(p, KILN_STATUS_FAILED_PRECONDITION,
                "partition invoked before a successful prepare");
  }
  const ClApi* cl = delegate_->cl_;
  const KilnProfilerHostExtension* profiler = delegate_->profiler_;
  if (keep_outputs_) KILN_SDK_RETURN_IF_ERROR(UseBoundBuffers(p));
  if (delegate_->fp16_storage_) {
    size_t half_total = 0;
    for (int32_t index : inputs_) half_total += buffers_[index].elements;
    for (int32_t index : outputs_) half_total += buffers_[index].elements;
    half_scratch_.resize(half_total);
  }
  size_t half_offset = 0;
  {
    sdk::ProfileScope upload(profiler, p.raw_context(), "upload", "opencl");
    KILN_SDK_RETURN_IF_ERROR(WriteInputs(p, &half_offset));
  }
  sdk::ProfileScope enqueue(profiler, p.raw_context(), "enqueue", "opencl");
  const KilnStatus s = Enqueue(p);
  enqueue.End();
  if (s != KILN_STATUS_OK) {
    cl->clFinish(delegate_->queue_);
    return s;
  }
  if (!keep_outputs_) KILN_SDK_RETURN_IF_ERROR(ReadOutputs(p, half_offset));
  sdk::ProfileScope finish(profiler, p.raw_context(), "finish", "opencl");
  const cl_int err = cl->clFinish(delegate_->queue_);  // the one sync
  finish.End();
  if (err != CL_SUCCESS) {
    return Fail(p, KILN_STATUS_INTERNAL,
                "clFinish failed: " + ClErrorName(err));
  }
  if (keep_outputs_) return BindOutputs(p);
  if (delegate_->fp16_storage_) ConvertHalfOutputs(p, half_offset);
  return KILN_STATUS_OK;
}

// Enqueues the (non-blocking) uploads of the partition's inputs; with fp16
// storage converts them into half_scratch_ from *half_offset on, and
// advances it.
KilnStatus Partition::WriteInputs(sdk::PartitionContext& p,
                                  size_t* half_offset) {
  const ClApi* cl = delegate_->cl_;
  for (int32_t index : inputs_) {
    const Buffer& b = buffers_[index];
    if (b.from_handle) continue;  // already in device memory
    const sdk::Tensor t = p.tensor(index);
    const float* data = t.data<const float>();
    if (data == nullptr || t.byte_size() < b.elements * 4) {
      cl->clFinish(delegate_->queue_);
      return Fail(p, KILN_STATUS_FAILED_PRECONDITION,
                  std::string("input tensor '") + t.name() +
                      "' has no data or too few bytes at invoke");
    }
    cl_int err;
    if (delegate_->fp16_storage_) {
      uint16_t* half = half_scratch_.data() + *half_offset;
      for (size_t k = 0; k < b.elements; ++k)
        half[k] = sdk::FloatToHalf(data[k]);
      *half_offset += b.elements;
      err = cl->clEnqueueWriteBuffer(delegate_->queue_, b.mem, CL_FALSE, 0,
                                     b.elements * 2, half, 0, nullptr, nullptr);
    } else {
      err = cl->clEnqueueWriteBuffer(delegate_->queue_, b.mem, CL_FALSE, 0,
                                     b.elements * 4, data, 0, nullptr, nullptr);
    }
    if (err != CL_SUCCESS) {
      cl->clFinish(delegate_->queue_);
      return Fail(p, KILN_STATUS_INTERNAL,
                  std::string("uploading input '") + t.name() +
                      "' failed: " + ClErrorName(err));
    }
    ++delegate_->tensor_uploads_;
  }
  return KILN_STATUS_OK;
}

// Enqueues the (non-blocking) reads of the partition's outputs: straight
// into the host tensors, or with fp16 storage into half_scratch_ from
// `half_offset` on.
KilnStatus Partition::ReadOutputs(sdk::PartitionContext& p,
                                  size_t half_offset) {
  const ClApi* cl = delegate_->cl_;
  for (int32_t index : outputs_) {
    const Buffer& b = buffers_[index];
    const sdk::Tensor t = p.tensor(index);
    void* data = t.data<void>();
    if (data == nullptr || t.byte_size() < b.elements * 4) {
      cl->clFinish(delegate_->queue_);
      return Fail(p, KILN_STATUS_FAILED_PRECONDITION,
                  std::string("output tensor '") + t.name() +
                      "' has no data or too few bytes at invoke");
    }
    cl_int err;
    if (delegate_->fp16_storage_) {
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
      return Fail(p, KILN_STATUS_INTERNAL,
                  std::string("reading output '") + t.name() +
                      "' failed: " + ClErrorName(err));
    }
    ++delegate_->tensor_downloads_;
  }
  return KILN_STATUS_OK;
}

// With fp16 storage, after the final clFinish: widens the outputs read into
// half_scratch_ (from `half_offset` on) into the host tensors.
void Partition::ConvertHalfOutputs(sdk::PartitionContext& p,
                                   size_t half_offset) {
  for (int32_t index : outputs_) {
    const Buffer& b = buffers_[index];
    float* data = p.tensor(index).data<float>();
    for (size_t k = 0; k < b.elements; ++k) {
      data[k] = sdk::HalfToFloat(half_scratch_[half_offset + k]);
    }
    half_offset += b.elements;
  }
}

}  // namespace kiln::opencl
