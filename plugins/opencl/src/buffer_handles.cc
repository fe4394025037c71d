// Buffer handles of the OpenCL delegate (delegate.h): a KilnBufferHandle is
// a cl_mem of the instance's context (kiln/opencl/opencl_delegate.h).
#include <cstdint>
#include <string>
#include <vector>

#include "delegate.h"
#include "kiln/sdk/float16.h"
#include "kiln/sdk/profiler.h"

namespace kiln::opencl {
namespace {

cl_mem MemOf(KilnBufferHandle handle) {
  return reinterpret_cast<cl_mem>(static_cast<intptr_t>(handle));
}

KilnBufferHandle HandleOf(cl_mem mem) {
  return static_cast<KilnBufferHandle>(reinterpret_cast<intptr_t>(mem));
}

// The float32 host data and element count of `t` for a copy with the
// buffer of `handle`, both checked; reports why not.
KilnStatus CopyEnds(const Delegate& delegate, sdk::DelegateContext& context,
                    KilnBufferHandle handle, const sdk::Tensor& t, float** data,
                    size_t* elements) {
  *data = t.data<float>();
  *elements = static_cast<size_t>(t.byte_size() / sizeof(float));
  std::string error = std::string("tensor '") + t.name() +
                      "' is not a float32 tensor with host memory";
  if (t.type() != KILN_TYPE_FLOAT32 || *data == nullptr ||
      !delegate.CheckBuffer(MemOf(handle), *elements, &error)) {
    return context.Fail(KILN_STATUS_INVALID_ARGUMENT,
                        "OpenCL delegate: ", error);
  }
  return KILN_STATUS_OK;
}

}  // namespace

bool Delegate::CheckBuffer(cl_mem mem, size_t elements,
                           std::string* error) const {
  if (partition_buffers_.count(mem) != 0) return true;
  cl_context owner = nullptr;
  size_t size = 0;
  cl_int err = cl_->clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof(owner),
                                       &owner, nullptr);
  if (err == CL_SUCCESS) {
    err =
        cl_->clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(size), &size, nullptr);
  }
  const size_t element_bytes = fp16_storage_ ? 2 : 4;
  if (err != CL_SUCCESS || owner != context_) {
    *error = "buffer handle " + std::to_string(HandleOf(mem)) +
             " is not a cl_mem of this delegate's OpenCL context (" +
             (err != CL_SUCCESS ? ClErrorName(err) : "another context") +
             "); create it in the context kiln.opencl_buffers/1 returns";
    return false;
  }
  if (size < elements * element_bytes) {
    *error = "the buffer bound has " + std::to_string(size) +
             " bytes, the tensor needs " +
             std::to_string(elements * element_bytes) + " (" +
             std::to_string(elements) +
             (fp16_storage_ ? " halves)" : " floats)");
    return false;
  }
  return true;
}

KilnStatus Delegate::CopyFromBufferHandle(sdk::DelegateContext& context,
                                          KilnBufferHandle handle,
                                          const sdk::Tensor& tensor) {
  sdk::ProfileScope event(profiler_, context.raw_context(), "download",
                          "opencl");
  float* data = nullptr;
  size_t elements = 0;
  KILN_SDK_RETURN_IF_ERROR(
      CopyEnds(*this, context, handle, tensor, &data, &elements));
  const cl_mem mem = MemOf(handle);
  cl_int err;
  if (fp16_storage_) {
    std::vector<uint16_t> half(elements);
    err = cl_->clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, elements * 2,
                                   half.data(), 0, nullptr, nullptr);
    for (size_t k = 0; err == CL_SUCCESS && k < elements; ++k) {
      data[k] = sdk::HalfToFloat(half[k]);
    }
  } else {
    err = cl_->clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, elements * 4, data,
                                   0, nullptr, nullptr);
  }
  if (err != CL_SUCCESS) {
    return context.Fail(KILN_STATUS_INTERNAL,
                        "OpenCL delegate: reading the buffer of tensor '",
                        tensor.name(), "' failed: ", ClErrorName(err));
  }
  ++tensor_downloads_;
  return KILN_STATUS_OK;
}

KilnStatus Delegate::CopyToBufferHandle(sdk::DelegateContext& context,
                                        KilnBufferHandle handle,
                                        const sdk::Tensor& tensor) {
  sdk::ProfileScope event(profiler_, context.raw_context(), "upload", "opencl");
  float* data = nullptr;
  size_t elements = 0;
  KILN_SDK_RETURN_IF_ERROR(
      CopyEnds(*this, context, handle, tensor, &data, &elements));
  const cl_mem mem = MemOf(handle);
  cl_int err;
  if (fp16_storage_) {
    std::vector<uint16_t> half(elements);
    for (size_t k = 0; k < elements; ++k) half[k] = sdk::FloatToHalf(data[k]);
    err = cl_->clEnqueueWriteBuffer(queue_, mem, CL_TRUE, 0, elements * 2,
                                    half.data(), 0, nullptr, nullptr);
  } else {
    err = cl_->clEnqueueWriteBuffer(queue_, mem, CL_TRUE, 0, elements * 4, data,
                                    0, nullptr, nullptr);
  }
  if (err != CL_SUCCESS) {
    return context.Fail(KILN_STATUS_INTERNAL,
                        "OpenCL delegate: writing the buffer of tensor '",
                        tensor.name(), "' failed: ", ClErrorName(err));
  }
  ++tensor_uploads_;
  return KILN_STATUS_OK;
}

KilnStatus Partition::UseBoundBuffers(sdk::PartitionContext& p) {
  for (int32_t index : inputs_) KILN_SDK_RETURN_IF_ERROR(UseBuffer(p, index));
  for (int32_t index : outputs_) KILN_SDK_RETURN_IF_ERROR(UseBuffer(p, index));
  return KILN_STATUS_OK;
}

KilnStatus Partition::UseBuffer(sdk::PartitionContext& p, int32_t index) {
  Buffer& b = buffers_[index];
  const sdk::Tensor t = p.tensor(index);
  const KilnBufferHandle handle = p.BufferHandle(t);
  b.from_handle = handle != KILN_INVALID_BUFFER_HANDLE;
  const cl_mem mem = b.from_handle ? MemOf(handle) : b.mem;
  std::string error;
  if (b.from_handle && !delegate_->CheckBuffer(mem, b.elements, &error)) {
    return Fail(p, KILN_STATUS_INVALID_ARGUMENT,
                std::string("tensor '") + t.name() + "': " + error);
  }
  if (mem == b.bound) return KILN_STATUS_OK;
  b.bound = mem;
  for (const BoundLaunch& l : launches_) {
    if (l.kernel == nullptr) continue;  // copies read `bound` when enqueued
    for (const KernelArg& a : l.launch.args) {
      if (a.kind == KernelArg::Kind::kTensor && a.tensor == index) {
        KILN_SDK_RETURN_IF_ERROR(SetKernelArgs(p, l));
        break;
      }
    }
  }
  return KILN_STATUS_OK;
}

KilnStatus Partition::BindOutputs(sdk::PartitionContext& p) {
  for (int32_t index : outputs_) {
    KILN_SDK_RETURN_IF_ERROR(p.BindBufferHandle(p.tensor(index),
                                                HandleOf(buffers_[index].bound),
                                                /*host_data_stale=*/true));
  }
  return KILN_STATUS_OK;
}

void Partition::UnbindOutputs(sdk::PartitionContext& p) {
  if (!keep_outputs_) return;
  for (int32_t index : outputs_) {
    const sdk::Tensor t = p.tensor(index);
    if (p.BufferHandle(t) == HandleOf(buffers_[index].mem)) {
      p.BindBufferHandle(t, KILN_INVALID_BUFFER_HANDLE, false);
    }
  }
}

}  // namespace kiln::opencl
