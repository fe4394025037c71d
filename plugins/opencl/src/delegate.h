// The OpenCL delegate, on the SDK's delegate helper (kiln/sdk/delegate.h):
// one instance per KilnDelegateInterface.create, owning one device,
// context, in-order queue and program cache; and the kernel of each
// partition it runs.
//
// Buffer handles (buffer_handles.cc; kiln/opencl/opencl_delegate.h says
// what a handle is): on a host serving extension API 1.2 a partition binds
// its output buffers to its output tensors, marked newer than the host
// data, instead of reading them back; a partition of the same instance
// that reads such a tensor, or one the application bound a cl_mem to, uses
// that buffer directly. The host asks for a copy (CopyFromBufferHandle,
// CopyToBufferHandle) only when a reader on the other side needs one.
#ifndef KILN_PLUGINS_OPENCL_DELEGATE_H_
#define KILN_PLUGINS_OPENCL_DELEGATE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cl_api.h"
#include "kiln/opencl/opencl_delegate.h"
#include "kiln/sdk/delegate.h"
#include "ops.h"
#include "program_cache.h"
#include "settings.h"

namespace kiln::opencl {

struct DeviceCandidate;  // an OpenCL device found by device selection

// Threading: the host drives one instance from one thread at a time
// (kiln_extension.h); FillStats may be called from any thread.
class Delegate : public sdk::Delegate {
 public:
  // sdk::DelegateFactory: applies the settings, loads OpenCL and picks the
  // device. Fails with UNAVAILABLE when OpenCL or a matching device is
  // missing, INVALID_ARGUMENT for bad settings, after reporting the reason.
  static KilnStatus Create(sdk::DelegateContext& context,
                           const sdk::DelegateSettings& settings,
                           std::unique_ptr<sdk::Delegate>* delegate);
  ~Delegate() override;

  // Supported when PlanNode can plan the node on the model's shapes.
  sdk::NodeSupport Supports(const sdk::GraphNode& node) override;
  int32_t min_partition_size() const override {
    return options_.min_partition_size;
  }
  std::unique_ptr<sdk::PartitionKernel> CreatePartitionKernel() override;

  // Buffer handles (buffer_handles.cc).
  KilnStatus CopyFromBufferHandle(sdk::DelegateContext& context,
                                  KilnBufferHandle handle,
                                  const sdk::Tensor& tensor) override;
  KilnStatus CopyToBufferHandle(sdk::DelegateContext& context,
                                KilnBufferHandle handle,
                                const sdk::Tensor& tensor) override;
  // Nothing to free: a partition's buffers live as long as the partition,
  // an application's belong to the application.
  void FreeBufferHandle(KilnBufferHandle) override {}
  // True when `mem` is a buffer of one of this instance's partitions, or a
  // buffer of its context with room for `elements` elements in its storage
  // format; else false with *error saying why.
  bool CheckBuffer(cl_mem mem, size_t elements, std::string* error) const;

  void FillStats(KilnOpenClStats* stats) const;
  const std::string& description() const { return description_; }
  const DelegateOptions& options() const { return options_; }
  cl_context cl_context_handle() const { return context_; }
  cl_command_queue cl_queue() const { return queue_; }

 private:
  friend class Partition;
  Delegate(const KilnHostApi& host, DelegateOptions options)
      : host_(&host), options_(std::move(options)) {}
  KilnStatus OpenDevice(sdk::DelegateContext& context,
                        const DeviceCandidate& chosen);
  void Log(int32_t severity, const std::string& message) const;

  // The host table of the load instance that created this delegate; valid
  // for the delegate's whole life.
  const KilnHostApi* host_;
  DelegateOptions options_;
  const ClApi* cl_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  bool fp16_storage_ = false;
  std::string build_options_;
  std::string description_;
  std::unique_ptr<ProgramCache> programs_;
  // kiln.profiler/1 of the host (null on hosts older than 1.2).
  const KilnProfilerHostExtension* profiler_ = nullptr;
  // Buffers of every live partition, registered by the partitions.
  std::set<cl_mem> partition_buffers_;
  // Tensor transfers at invoke time (kiln.opencl_stats/1).
  std::atomic<uint64_t> tensor_uploads_{0};
  std::atomic<uint64_t> tensor_downloads_{0};
};

// A claimed partition: device buffers for its tensors and its launches.
class Partition : public sdk::PartitionKernel {
 public:
  explicit Partition(Delegate* delegate) : delegate_(delegate) {}
  ~Partition() override;

  // Plans shapes, sizes the partition's outputs, creates buffers, uploads
  // constants, builds the programs and runs every kernel once with its real
  // NDRange (drivers such as PoCL compile per NDRange on first enqueue).
  KilnStatus Prepare(sdk::PartitionContext& p) override;
  // Uploads inputs, enqueues all launches, reads outputs, then waits once.
  KilnStatus Invoke(sdk::PartitionContext& p) override;

 private:
  struct Buffer {
    cl_mem mem = nullptr;      // the partition's own
    cl_mem bound = nullptr;    // the one the launches use: mem, or a handle's
    bool from_handle = false;  // this invoke reads/writes a bound handle
    std::vector<int32_t> shape;
    size_t elements = 0;
  };
  struct BoundLaunch {
    Launch launch;
    cl_kernel kernel = nullptr;
    int32_t node = -1;
  };
  // Shapes of the tensors the partition's nodes produce, as planned.
  using PlannedShapes = std::map<int32_t, std::vector<int32_t>>;

  void Release();
  size_t element_size() const;
  KilnStatus Fail(sdk::PartitionContext& p, KilnStatus code,
                  const std::string& message) const;
  // Prepare, step by step.
  KilnStatus PlanLaunches(sdk::PartitionContext& p, PlannedShapes* shapes,
                          std::set<int32_t>* device_tensors);
  KilnStatus SizeOutputs(sdk::PartitionContext& p, const PlannedShapes& shapes);
  KilnStatus CreateBuffers(sdk::PartitionContext& p,
                           const PlannedShapes& shapes,
                           const std::set<int32_t>& device_tensors);
  KilnStatus UploadConstant(sdk::PartitionContext& p, const sdk::Tensor& t,
                            const Buffer& b);
  KilnStatus CreateKernels(sdk::PartitionContext& p);
  KilnStatus SetKernelArgs(sdk::PartitionContext& p, const BoundLaunch& b);
  KilnStatus Enqueue(sdk::PartitionContext& p);
  // Invoke, step by step. Each leaves the queue drained on failure.
  KilnStatus WriteInputs(sdk::PartitionContext& p, size_t* half_offset);
  KilnStatus ReadOutputs(sdk::PartitionContext& p, size_t half_offset);
  void ConvertHalfOutputs(sdk::PartitionContext& p, size_t half_offset);
  // Buffer handles (buffer_handles.cc): the buffer of each input and output
  // (a bound handle's, else the partition's own) and the kernel arguments
  // pointing at it; binding the outputs, newer than the host data, after
  // the run; unbinding them before the buffers go.
  KilnStatus UseBoundBuffers(sdk::PartitionContext& p);
  KilnStatus UseBuffer(sdk::PartitionContext& p, int32_t index);
  KilnStatus BindOutputs(sdk::PartitionContext& p);
  void UnbindOutputs(sdk::PartitionContext& p);

  Delegate* delegate_;
  std::map<int32_t, Buffer> buffers_;
  cl_mem dummy_ = nullptr;
  std::vector<BoundLaunch> launches_;
  std::vector<int32_t> inputs_;   // non-constant tensors written per invoke
  std::vector<int32_t> outputs_;  // the partition node's outputs
  std::vector<uint16_t> half_scratch_;
  bool prepared_ = false;
  // The host binds buffer handles (extension API 1.2): outputs stay in
  // device memory.
  bool keep_outputs_ = false;
};

}  // namespace kiln::opencl

#endif  // KILN_PLUGINS_OPENCL_DELEGATE_H_
