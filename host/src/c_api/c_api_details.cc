// Application C API 1.1 additions: the default plugin directory, an
// interpreter's plugin records, tensors by index, shape signatures, full
// quantization parameters, node descriptions and warnings.
#include <cstring>
#include <memory>
#include <string>

#include "c_api/c_api_internal.h"
#include "interpreter/interpreter.h"
#include "plugin/install_paths.h"

namespace {

const kiln::TensorState* T(const KilnTensor* t) {
  return reinterpret_cast<const kiln::TensorState*>(t);
}
const kiln::SignatureRunner* R(const KilnSignatureRunner* r) {
  return reinterpret_cast<const kiln::SignatureRunner*>(r);
}

int32_t TensorIndexOf(const std::vector<kiln::SignatureTensor>& tensors,
                      const char* name) {
  if (name == nullptr) return -1;
  for (const kiln::SignatureTensor& t : tensors) {
    if (t.name == name) return t.tensor_index;
  }
  return -1;
}

int32_t IndexAt(const std::vector<int32_t>& indices, int32_t i) {
  if (i < 0 || static_cast<size_t>(i) >= indices.size()) return -1;
  return indices[static_cast<size_t>(i)];
}

const std::vector<kiln::NodeInfo>& DescribedNodes(
    const KilnInterpreter& interpreter, int subgraph) {
  const size_t warnings = interpreter.interpreter->warnings().size();
  if (interpreter.node_cache_subgraph != subgraph ||
      interpreter.node_cache_warnings != warnings) {
    interpreter.node_cache = interpreter.interpreter->DescribeNodes(subgraph);
    interpreter.node_cache_subgraph = subgraph;
    interpreter.node_cache_warnings = warnings;
  }
  return interpreter.node_cache;
}

}  // namespace

extern "C" {

const char* KilnDefaultPluginDirectory(void) {
  return kiln::LocateDefaultPluginDirectory().directory.c_str();
}

const char* KilnDefaultPluginDirectoryOrigin(void) {
  return kiln::LocateDefaultPluginDirectory().origin.c_str();
}

KilnError* KilnInterpreterGetPluginProbe(const KilnInterpreter* interpreter,
                                         KilnPluginProbe** probe) {
  if (probe == nullptr) {
    return kiln::MakeKilnError(KILN_STATUS_INVALID_ARGUMENT,
                               "KilnInterpreterGetPluginProbe: probe is NULL");
  }
  *probe = nullptr;
  if (interpreter == nullptr) {
    return kiln::MakeKilnError(
        KILN_STATUS_INVALID_ARGUMENT,
        "KilnInterpreterGetPluginProbe: interpreter is NULL");
  }
  auto p = std::make_unique<KilnPluginProbe>();
  p->records = interpreter->interpreter->plugin_records();
  *probe = p.release();
  return nullptr;
}

int32_t KilnInterpreterTensorCount(const KilnInterpreter* interpreter) {
  if (interpreter == nullptr) return 0;
  return static_cast<int32_t>(interpreter->interpreter->num_tensors(0));
}

KilnTensor* KilnInterpreterTensor(KilnInterpreter* interpreter,
                                  int32_t tensor_index) {
  if (interpreter == nullptr) return nullptr;
  return reinterpret_cast<KilnTensor*>(
      interpreter->interpreter->raw_tensor(0, tensor_index));
}

int32_t KilnInterpreterInputTensorIndex(const KilnInterpreter* interpreter,
                                        int32_t index) {
  if (interpreter == nullptr) return -1;
  return IndexAt(interpreter->interpreter->model().graph(0).inputs, index);
}

int32_t KilnInterpreterOutputTensorIndex(const KilnInterpreter* interpreter,
                                         int32_t index) {
  if (interpreter == nullptr) return -1;
  return IndexAt(interpreter->interpreter->model().graph(0).outputs, index);
}

int32_t KilnSignatureRunnerInputTensorIndex(const KilnSignatureRunner* runner,
                                            const char* name) {
  if (runner == nullptr) return -1;
  return TensorIndexOf(R(runner)->signature().inputs, name);
}

int32_t KilnSignatureRunnerOutputTensorIndex(const KilnSignatureRunner* runner,
                                             const char* name) {
  if (runner == nullptr) return -1;
  return TensorIndexOf(R(runner)->signature().outputs, name);
}

int32_t KilnTensorShapeSignatureNumDims(const KilnTensor* tensor) {
  if (tensor == nullptr) return -1;
  const kiln::TensorState& t = *T(tensor);
  if (!t.desc->shape_signature.empty()) {
    return static_cast<int32_t>(t.desc->shape_signature.size());
  }
  return t.has_rank ? static_cast<int32_t>(t.shape.size()) : -1;
}

int32_t KilnTensorShapeSignatureDim(const KilnTensor* tensor, int32_t axis) {
  if (tensor == nullptr || axis < 0) return -1;
  const kiln::TensorState& t = *T(tensor);
  const std::vector<int32_t>& dims =
      t.desc->shape_signature.empty() ? t.shape : t.desc->shape_signature;
  return IndexAt(dims, axis);
}

KilnError* KilnTensorGetQuantizationInfo(const KilnTensor* tensor,
                                         KilnTensorQuantizationInfo* info) {
  constexpr uint32_t kSize_1_1 =
      KILN_STRUCT_SIZE(KilnTensorQuantizationInfo, zero_points);
  if (KilnError* e =
          kiln::CheckStruct(info, info == nullptr ? 0 : info->struct_size,
                            kSize_1_1, "KilnTensorGetQuantizationInfo",
                            "KILN_TENSOR_QUANTIZATION_INFO_STRUCT_SIZE")) {
    return e;
  }
  if (tensor == nullptr) {
    return kiln::MakeKilnError(KILN_STATUS_INVALID_ARGUMENT,
                               "KilnTensorGetQuantizationInfo: tensor is NULL");
  }
  const kiln::Quantization& q = T(tensor)->desc->quantization;
  KilnTensorQuantizationInfo full;
  std::memset(&full, 0, sizeof(full));
  full.num_scales = static_cast<int32_t>(q.scales.size());
  full.num_zero_points = static_cast<int32_t>(q.zero_points.size());
  full.quantized_dimension = q.quantized_dimension;
  full.scales = q.scales.empty() ? nullptr : q.scales.data();
  full.zero_points = q.zero_points.empty() ? nullptr : q.zero_points.data();
  kiln::FillUpTo(full, info);
  return nullptr;
}

int32_t KilnInterpreterSubgraphCount(const KilnInterpreter* interpreter) {
  return interpreter == nullptr ? 0 : interpreter->interpreter->num_subgraphs();
}

int32_t KilnInterpreterNodeCount(const KilnInterpreter* interpreter,
                                 int32_t subgraph) {
  if (interpreter == nullptr || subgraph < 0 ||
      subgraph >= interpreter->interpreter->num_subgraphs()) {
    return 0;
  }
  return static_cast<int32_t>(DescribedNodes(*interpreter, subgraph).size());
}

KilnError* KilnInterpreterGetNodeInfo(const KilnInterpreter* interpreter,
                                      int32_t subgraph, int32_t node,
                                      KilnNodeInfo* info) {
  constexpr uint32_t kSize_1_1 = KILN_STRUCT_SIZE(KilnNodeInfo, decline_reason);
  if (KilnError* e = kiln::CheckStruct(
          info, info == nullptr ? 0 : info->struct_size, kSize_1_1,
          "KilnInterpreterGetNodeInfo", "KILN_NODE_INFO_STRUCT_SIZE")) {
    return e;
  }
  if (interpreter == nullptr) {
    return kiln::MakeKilnError(
        KILN_STATUS_INVALID_ARGUMENT,
        "KilnInterpreterGetNodeInfo: interpreter is NULL");
  }
  const int32_t count = KilnInterpreterNodeCount(interpreter, subgraph);
  if (node < 0 || node >= count) {
    return kiln::MakeKilnError(
        KILN_STATUS_OUT_OF_RANGE,
        "KilnInterpreterGetNodeInfo: subgraph " + std::to_string(subgraph) +
            " has no node " + std::to_string(node) + " (it has " +
            std::to_string(count) + "; the model has " +
            std::to_string(KilnInterpreterSubgraphCount(interpreter)) +
            " subgraphs)");
  }
  const kiln::NodeInfo& n =
      DescribedNodes(*interpreter, subgraph)[static_cast<size_t>(node)];
  KilnNodeInfo full;
  std::memset(&full, 0, sizeof(full));
  full.index = n.index;
  full.version = n.version;
  full.host_intrinsic = n.host_intrinsic ? 1 : 0;
  full.delegated = n.delegated ? 1 : 0;
  full.partition_node = n.delegated ? n.partition_node : -1;
  full.op = interpreter->Intern(n.op);
  full.plugin_path = interpreter->Intern(n.plugin_path);
  full.delegate_name = interpreter->Intern(n.delegated ? n.delegate_name : "");
  full.decline_reason = interpreter->Intern(
      n.delegated
          ? ""
          : interpreter->interpreter->DelegateDeclineReason(subgraph, n.index));
  kiln::FillUpTo(full, info);
  return nullptr;
}

int32_t KilnInterpreterWarningCount(const KilnInterpreter* interpreter) {
  if (interpreter == nullptr) return 0;
  return static_cast<int32_t>(interpreter->interpreter->warnings().size());
}

const char* KilnInterpreterWarning(const KilnInterpreter* interpreter,
                                   int32_t index) {
  if (interpreter == nullptr || index < 0 ||
      index >= KilnInterpreterWarningCount(interpreter)) {
    return nullptr;
  }
  return interpreter->Intern(
      interpreter->interpreter->warnings()[static_cast<size_t>(index)]);
}

// ---- Plan cache (application C API 1.2) ----

KilnError* KilnInterpreterOptionsSetPlanCacheSize(
    KilnInterpreterOptions* options, int32_t max_plans) {
  if (options == nullptr) {
    return kiln::MakeKilnError(
        KILN_STATUS_INVALID_ARGUMENT,
        "KilnInterpreterOptionsSetPlanCacheSize: options is NULL");
  }
  if (max_plans < 0) {
    return kiln::MakeKilnError(
        KILN_STATUS_INVALID_ARGUMENT,
        "KilnInterpreterOptionsSetPlanCacheSize: max_plans is " +
            std::to_string(max_plans) +
            "; use 0 to turn the plan cache off or a positive number of "
            "plans per subgraph");
  }
  options->plan_cache.max_plans = max_plans;
  return nullptr;
}

void KilnInterpreterOptionsSetUseDefaultDelegates(
    KilnInterpreterOptions* options, int32_t enabled) {
  if (options != nullptr) options->use_default_delegates = enabled != 0;
}

KilnError* KilnInterpreterOptionsSetNumThreads(KilnInterpreterOptions* options,
                                               int32_t num_threads) {
  if (options == nullptr) {
    return kiln::MakeKilnError(
        KILN_STATUS_INVALID_ARGUMENT,
        "KilnInterpreterOptionsSetNumThreads: options is NULL");
  }
  if (num_threads < 0) {
    return kiln::MakeKilnError(
        KILN_STATUS_INVALID_ARGUMENT,
        "KilnInterpreterOptionsSetNumThreads: num_threads is " +
            std::to_string(num_threads) +
            "; use 0 for the default or a positive thread count");
  }
  options->num_threads = num_threads;
  return nullptr;
}

void KilnInterpreterOptionsSetAllowInsecurePlugins(
    KilnInterpreterOptions* options, int32_t allow) {
  if (options != nullptr) options->plugins.allow_insecure_plugins = allow != 0;
}

KilnError* KilnInterpreterGetPlanCacheStats(const KilnInterpreter* interpreter,
                                            KilnPlanCacheStats* stats) {
  if (KilnError* e = kiln::CheckStruct(
          stats, stats == nullptr ? 0 : stats->struct_size,
          KILN_PLAN_CACHE_STATS_STRUCT_SIZE, "KilnInterpreterGetPlanCacheStats",
          "KILN_PLAN_CACHE_STATS_STRUCT_SIZE")) {
    return e;
  }
  if (interpreter == nullptr) {
    return kiln::MakeKilnError(
        KILN_STATUS_INVALID_ARGUMENT,
        "KilnInterpreterGetPlanCacheStats: interpreter is NULL");
  }
  const kiln::PlanCacheStats s = interpreter->interpreter->plan_cache_stats();
  KilnPlanCacheStats full;
  std::memset(&full, 0, sizeof(full));
  full.max_plans = s.max_plans;
  full.hits = s.hits;
  full.misses = s.misses;
  full.evictions = s.evictions;
  full.plans = s.plans;
  full.bytes = s.bytes;
  full.plugin_states = s.plugin_states;
  kiln::FillUpTo(full, stats);
  return nullptr;
}

}  // extern "C"
