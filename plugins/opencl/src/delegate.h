// The OpenCL delegate: one instance per KilnDelegateInterface.create, owning
// one device, context, in-order queue and program cache; and the state of
// each partition it runs.
#ifndef KILN_PLUGINS_OPENCL_DELEGATE_H_
#define KILN_PLUGINS_OPENCL_DELEGATE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cl_api.h"
#include "kiln/kiln_extension.h"
#include "kiln/opencl/opencl_delegate.h"
#include "ops.h"
#include "program_cache.h"
#include "settings.h"

namespace kiln::opencl {

class Partition;

// Threading: the host drives one instance from one thread at a time
// (kiln_extension.h); stats() may be called from any thread.
class Delegate {
 public:
  // Parses settings, loads OpenCL and picks the device. On failure returns
  // the status (UNAVAILABLE when OpenCL or a matching device is missing,
  // INVALID_ARGUMENT for bad settings) after report_error with the reason.
  static KilnStatus Create(const KilnHostApi& api, KilnOpaqueContext* context,
                           const uint8_t* settings, uint64_t settings_size,
                           std::unique_ptr<Delegate>* delegate);
  ~Delegate();

  // KilnDelegateInterface.partition: claims supported nodes, records a
  // reason for every declined node and logs it at info level.
  KilnStatus ClaimNodes(KilnOpaqueContext* context);
  // Null when `node_index` was claimed or not seen by the last ClaimNodes.
  const char* DeclineReason(int32_t node_index) const;

  KilnStatus InitPartition(KilnOpaqueContext* context,
                           KilnOpaqueNode* partition,
                           std::unique_ptr<Partition>* state);

  void FillStats(KilnOpenClStats* stats) const;
  const std::string& description() const { return description_; }
  const DelegateOptions& options() const { return options_; }

 private:
  friend class Partition;
  Delegate(const KilnHostApi& api, DelegateOptions options)
      : api_(api), options_(std::move(options)) {}
  void Log(int32_t severity, const std::string& message) const;

  const KilnHostApi& api_;
  DelegateOptions options_;
  const ClApi* cl_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  bool fp16_storage_ = false;
  std::string build_options_;
  std::string description_;
  std::unique_ptr<ProgramCache> programs_;
  std::map<int32_t, std::string> decline_reasons_;
};

// A claimed partition: device buffers for its tensors and its launches.
class Partition {
 public:
  Partition(Delegate* delegate, std::vector<int32_t> nodes)
      : delegate_(delegate), nodes_(std::move(nodes)) {}
  ~Partition();

  // Plans shapes, sizes the partition's outputs, creates buffers, uploads
  // constants, builds the programs and runs every kernel once with its real
  // NDRange (drivers such as PoCL compile per NDRange on first enqueue).
  KilnStatus Prepare(KilnOpaqueContext* context, KilnOpaqueNode* partition);
  // Uploads inputs, enqueues all launches, reads outputs, then waits once.
  KilnStatus Invoke(KilnOpaqueContext* context, KilnOpaqueNode* partition);

 private:
  struct Buffer {
    cl_mem mem = nullptr;
    std::vector<int32_t> shape;
    size_t elements = 0;
  };
  struct BoundLaunch {
    Launch launch;
    cl_kernel kernel = nullptr;
    int32_t node = -1;
  };
  void Release();
  KilnStatus Fail(KilnOpaqueContext* context, KilnStatus code,
                  const std::string& message) const;
  KilnStatus Enqueue(KilnOpaqueContext* context);

  Delegate* delegate_;
  std::vector<int32_t> nodes_;
  std::map<int32_t, Buffer> buffers_;
  cl_mem dummy_ = nullptr;
  std::vector<BoundLaunch> launches_;
  std::vector<int32_t> inputs_;   // non-constant tensors written per invoke
  std::vector<int32_t> outputs_;  // the partition node's outputs
  std::vector<uint16_t> half_scratch_;
  bool prepared_ = false;
};

// IEEE binary16 conversions (round to nearest even) for fp16 storage.
uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t value);

}  // namespace kiln::opencl

#endif  // KILN_PLUGINS_OPENCL_DELEGATE_H_
