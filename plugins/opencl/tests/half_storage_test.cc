// fp16 storage: the host conversions the delegate uses (kiln/sdk/float16.h)
// against the OpenCL device's own vstore_half / vload_half, which its
// kernels use on the same buffers. NaN is compared as NaN: neither side
// promises a payload, and the delegate only hands NaNs through.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cl_api.h"
#include "gtest/gtest.h"
#include "kiln/sdk/float16.h"

namespace kiln::opencl {
namespace {

const char* kSource = R"CL(
__kernel void store_half(__global const float* in, __global half* out) {
  const int i = get_global_id(0);
  vstore_half(in[i], i, out);
}
__kernel void load_half(__global const half* in, __global float* out) {
  const int i = get_global_id(0);
  out[i] = vload_half(i, in);
}
)CL";

bool IsHalfNan(uint16_t h) {
  return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0;
}

float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// One OpenCL device (the first found) running kSource.
class OpenClHalfStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    cl_ = LoadClApi(&error);
    cl_platform_id platform = nullptr;
    cl_uint n = 0;
    if (cl_ == nullptr || cl_->clGetPlatformIDs(1, &platform, &n) != 0 ||
        n == 0 ||
        cl_->clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device_, &n) !=
            CL_SUCCESS ||
        n == 0) {
      GTEST_SKIP() << "no OpenCL device to compare with " << error;
    }
    cl_int err = CL_SUCCESS;
    context_ =
        cl_->clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS) << ClErrorName(err);
    queue_ = cl_->clCreateCommandQueue(context_, device_, 0, &err);
    ASSERT_EQ(err, CL_SUCCESS) << ClErrorName(err);
    program_ =
        cl_->clCreateProgramWithSource(context_, 1, &kSource, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS) << ClErrorName(err);
    err = cl_->clBuildProgram(program_, 1, &device_, "-cl-std=CL1.2", nullptr,
                              nullptr);
    ASSERT_EQ(err, CL_SUCCESS) << ClErrorName(err);
  }
  void TearDown() override {
    if (program_ != nullptr) cl_->clReleaseProgram(program_);
    if (queue_ != nullptr) cl_->clReleaseCommandQueue(queue_);
    if (context_ != nullptr) cl_->clReleaseContext(context_);
  }

  // Runs `kernel` over `in` (count elements of in_size bytes) into `out`.
  void Run(const char* kernel, const void* in, size_t in_size, void* out,
           size_t out_size, size_t count) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = cl_->clCreateKernel(program_, kernel, &err);
    ASSERT_EQ(err, CL_SUCCESS) << ClErrorName(err);
    cl_mem a = cl_->clCreateBuffer(context_, CL_MEM_READ_WRITE, count * in_size,
                                   nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS) << ClErrorName(err);
    cl_mem b = cl_->clCreateBuffer(context_, CL_MEM_READ_WRITE,
                                   count * out_size, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS) << ClErrorName(err);
    cl_->clEnqueueWriteBuffer(queue_, a, CL_TRUE, 0, count * in_size, in, 0,
                              nullptr, nullptr);
    cl_->clSetKernelArg(k, 0, sizeof(cl_mem), &a);
    cl_->clSetKernelArg(k, 1, sizeof(cl_mem), &b);
    err = cl_->clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &count, nullptr, 0,
                                      nullptr, nullptr);
    EXPECT_EQ(err, CL_SUCCESS) << ClErrorName(err);
    err = cl_->clEnqueueReadBuffer(queue_, b, CL_TRUE, 0, count * out_size, out,
                                   0, nullptr, nullptr);
    EXPECT_EQ(err, CL_SUCCESS) << ClErrorName(err);
    cl_->clReleaseMemObject(a);
    cl_->clReleaseMemObject(b);
    cl_->clReleaseKernel(k);
  }

  const ClApi* cl_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
};

TEST_F(OpenClHalfStorageTest, EveryHalfWidensAsTheDeviceReadsIt) {
  std::vector<uint16_t> halves(1u << 16);
  for (uint32_t b = 0; b < halves.size(); ++b) {
    halves[b] = static_cast<uint16_t>(b);
  }
  std::vector<float> device(halves.size());
  Run("load_half", halves.data(), sizeof(uint16_t), device.data(),
      sizeof(float), halves.size());
  for (uint32_t b = 0; b < halves.size(); ++b) {
    const float host = sdk::HalfToFloat(halves[b]);
    if (std::isnan(device[b])) {
      EXPECT_TRUE(std::isnan(host)) << "half bits " << b;
    } else {
      EXPECT_EQ(host, device[b]) << "half bits " << b;
      EXPECT_EQ(std::signbit(host), std::signbit(device[b]))
          << "half bits " << b;
    }
  }
}

TEST_F(OpenClHalfStorageTest, FloatsNarrowAsTheDeviceStoresThem) {
  std::vector<float> floats;
  // Bit patterns across every exponent, then the subnormal-half range (where
  // rounding shifts by 14..24 bits) and the overflow edge densely, both
  // signs.
  for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 4099) {
    floats.push_back(FloatFromBits(static_cast<uint32_t>(b)));
  }
  for (uint32_t sign : {0u, 0x80000000u}) {
    for (uint32_t b = 0x32FF0000u; b <= 0x38810000u; b += 211) {
      floats.push_back(FloatFromBits(sign | b));
    }
    for (uint32_t b = 0x477FE000u; b <= 0x47801000u; b += 7) {
      floats.push_back(FloatFromBits(sign | b));
    }
  }
  std::vector<uint16_t> device(floats.size());
  Run("store_half", floats.data(), sizeof(float), device.data(),
      sizeof(uint16_t), floats.size());
  int mismatches = 0;
  for (size_t i = 0; i < floats.size() && mismatches < 10; ++i) {
    const uint16_t host = sdk::FloatToHalf(floats[i]);
    const bool same =
        IsHalfNan(device[i]) ? IsHalfNan(host) : host == device[i];
    if (!same) {
      ++mismatches;
      ADD_FAILURE() << "float " << floats[i] << ": host half " << host
                    << ", device half " << device[i];
    }
  }
}

}  // namespace
}  // namespace kiln::opencl
