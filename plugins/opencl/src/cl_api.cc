#include "cl_api.h"

#include <dlfcn.h>

#include <mutex>

namespace kiln::opencl {
namespace {

struct LoadResult {
  ClApi api;
  bool ok = false;
  std::string error;
};

LoadResult Load() {
  LoadResult r;
  static const char* const kNames[] = {"libOpenCL.so.1", "libOpenCL.so"};
  void* handle = nullptr;
  std::string tried;
  for (const char* name : kNames) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
    const char* why = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + name + ": " +
             (why != nullptr ? why : "not found");
  }
  if (handle == nullptr) {
    r.error = "no OpenCL runtime found (" + tried +
              "); install an OpenCL ICD loader and driver (on Debian: "
              "ocl-icd-libopencl1 plus a vendor ICD such as pocl-opencl-icd)";
    return r;
  }
#define KILN_CL_RESOLVE(name)                                              \
  r.api.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));  \
  if (r.api.name == nullptr) {                                             \
    r.error = "the OpenCL library has no symbol " #name                    \
              "; it is older than OpenCL 1.2, install a newer ICD loader"; \
    return r;                                                              \
  }
  KILN_CL_FUNCTIONS(KILN_CL_RESOLVE)
#undef KILN_CL_RESOLVE
  r.ok = true;
  return r;
}

}  // namespace

const ClApi* LoadClApi(std::string* error) {
  static const LoadResult* result = new LoadResult(Load());
  if (!result->ok) {
    if (error != nullptr) *error = result->error;
    return nullptr;
  }
  return &result->api;
}

std::string ClErrorName(cl_int code) {
  const char* name = "unknown OpenCL error";
  switch (code) {
    case CL_SUCCESS:
      name = "CL_SUCCESS";
      break;
    case CL_DEVICE_NOT_FOUND:
      name = "CL_DEVICE_NOT_FOUND";
      break;
    case CL_DEVICE_NOT_AVAILABLE:
      name = "CL_DEVICE_NOT_AVAILABLE";
      break;
    case CL_COMPILER_NOT_AVAILABLE:
      name = "CL_COMPILER_NOT_AVAILABLE";
      break;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
      name = "CL_MEM_OBJECT_ALLOCATION_FAILURE";
      break;
    case CL_OUT_OF_RESOURCES:
      name = "CL_OUT_OF_RESOURCES";
      break;
    case CL_OUT_OF_HOST_MEMORY:
      name = "CL_OUT_OF_HOST_MEMORY";
      break;
    case CL_BUILD_PROGRAM_FAILURE:
      name = "CL_BUILD_PROGRAM_FAILURE";
      break;
    case CL_INVALID_VALUE:
      name = "CL_INVALID_VALUE";
      break;
    case CL_INVALID_DEVICE:
      name = "CL_INVALID_DEVICE";
      break;
    case CL_INVALID_BINARY:
      name = "CL_INVALID_BINARY";
      break;
    case CL_INVALID_BUILD_OPTIONS:
      name = "CL_INVALID_BUILD_OPTIONS";
      break;
    case CL_INVALID_PROGRAM:
      name = "CL_INVALID_PROGRAM";
      break;
    case CL_INVALID_KERNEL_NAME:
      name = "CL_INVALID_KERNEL_NAME";
      break;
    case CL_INVALID_KERNEL_ARGS:
      name = "CL_INVALID_KERNEL_ARGS";
      break;
    case CL_INVALID_ARG_INDEX:
      name = "CL_INVALID_ARG_INDEX";
      break;
    case CL_INVALID_ARG_SIZE:
      name = "CL_INVALID_ARG_SIZE";
      break;
    case CL_INVALID_WORK_GROUP_SIZE:
      name = "CL_INVALID_WORK_GROUP_SIZE";
      break;
    case CL_INVALID_GLOBAL_WORK_SIZE:
      name = "CL_INVALID_GLOBAL_WORK_SIZE";
      break;
    case CL_INVALID_BUFFER_SIZE:
      name = "CL_INVALID_BUFFER_SIZE";
      break;
    case CL_INVALID_MEM_OBJECT:
      name = "CL_INVALID_MEM_OBJECT";
      break;
    case CL_INVALID_COMMAND_QUEUE:
      name = "CL_INVALID_COMMAND_QUEUE";
      break;
    case CL_INVALID_CONTEXT:
      name = "CL_INVALID_CONTEXT";
      break;
    case CL_INVALID_PLATFORM:
      name = "CL_INVALID_PLATFORM";
      break;
    case CL_INVALID_DEVICE_TYPE:
      name = "CL_INVALID_DEVICE_TYPE";
      break;
    case -1001:
      name = "CL_PLATFORM_NOT_FOUND_KHR";
      break;
    default:
      break;
  }
  return std::string(name) + " (" + std::to_string(code) + ")";
}

}  // namespace kiln::opencl
