// The OpenCL entry points the delegate uses, resolved at run time with
// dlopen/dlsym so that the plugin never links libOpenCL and loads on
// machines without it.
#ifndef KILN_PLUGINS_OPENCL_CL_API_H_
#define KILN_PLUGINS_OPENCL_CL_API_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <string>

namespace kiln::opencl {

#define KILN_CL_FUNCTIONS(X)   \
  X(clGetPlatformIDs)          \
  X(clGetPlatformInfo)         \
  X(clGetDeviceIDs)            \
  X(clGetDeviceInfo)           \
  X(clCreateContext)           \
  X(clReleaseContext)          \
  X(clCreateCommandQueue)      \
  X(clReleaseCommandQueue)     \
  X(clCreateBuffer)            \
  X(clReleaseMemObject)        \
  X(clGetMemObjectInfo)        \
  X(clCreateProgramWithSource) \
  X(clCreateProgramWithBinary) \
  X(clBuildProgram)            \
  X(clGetProgramBuildInfo)     \
  X(clGetProgramInfo)          \
  X(clReleaseProgram)          \
  X(clCreateKernel)            \
  X(clReleaseKernel)           \
  X(clSetKernelArg)            \
  X(clEnqueueNDRangeKernel)    \
  X(clEnqueueWriteBuffer)      \
  X(clEnqueueReadBuffer)       \
  X(clEnqueueCopyBuffer)       \
  X(clFinish)

// Function table; every member is non-null once loaded.
struct ClApi {
#define KILN_CL_MEMBER(name) decltype(&::name) name = nullptr;
  KILN_CL_FUNCTIONS(KILN_CL_MEMBER)
#undef KILN_CL_MEMBER
};

// Loads libOpenCL.so.1 (the runtime package's name), then libOpenCL.so, once
// per process, and resolves every function. Thread-safe. Returns the table,
// or null with *error saying which libraries were tried or which symbol is
// missing. The library stays loaded for the life of the process (unloading
// ICD loaders has crashed drivers).
const ClApi* LoadClApi(std::string* error);

// "CL_INVALID_VALUE (-30)" style name of an OpenCL error code.
std::string ClErrorName(cl_int code);

}  // namespace kiln::opencl

#endif  // KILN_PLUGINS_OPENCL_CL_API_H_
