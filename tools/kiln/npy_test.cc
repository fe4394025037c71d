#include "npy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

NpyArray Floats(std::vector<int32_t> shape, std::vector<float> v) {
  NpyArray a;
  a.type = KILN_TYPE_FLOAT32;
  a.shape = std::move(shape);
  a.data.resize(v.size() * sizeof(float));
  std::memcpy(a.data.data(), v.data(), a.data.size());
  return a;
}

TEST(NpyTest, RoundTripKeepsTypeShapeAndBytes) {
  for (const std::vector<int32_t>& shape :
       {std::vector<int32_t>{}, std::vector<int32_t>{3},
        std::vector<int32_t>{1, 3}}) {
    std::vector<float> values(shape.empty() ? 1 : 3, 0.f);
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * i - 1.f;
    NpyArray a = Floats(shape, values);
    absl::StatusOr<NpyArray> b = ParseNpy(SerializeNpy(a), "mem");
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(b->type, KILN_TYPE_FLOAT32);
    EXPECT_EQ(b->shape, shape);
    EXPECT_EQ(b->data, a.data);
  }
}

TEST(NpyTest, HeaderIsSixtyFourByteAligned) {
  const std::string bytes = SerializeNpy(Floats({2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ((bytes.size() - 16) % 64, 0u);
  EXPECT_THAT(bytes, HasSubstr("'shape': (2, 2)"));
}

TEST(NpyTest, NumpyReadsWhatWeWriteAndWeReadWhatNumpyWrites) {
  const std::string dir = ::testing::TempDir();
  const std::string ours = dir + "/kiln_npy_ours.npy";
  ASSERT_TRUE(WriteNpy(ours, Floats({2, 3}, {1, 2, 3, 4, 5, 6})).ok());
  const std::string theirs = dir + "/kiln_npy_theirs.npy";
  const std::string cmd =
      "python3 -c \"import numpy as np; a=np.load('" + ours +
      "'); assert a.shape==(2,3) and a.dtype==np.float32 and a[1,2]==6; "
      "np.save('" +
      theirs + "', np.arange(4, dtype=np.int64).reshape(2,2))\"";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "numpy is required (setup script)";
  absl::StatusOr<NpyArray> b = ReadNpy(theirs);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->type, KILN_TYPE_INT64);
  EXPECT_THAT(b->shape, ElementsAre(2, 2));
  int64_t last = 0;
  std::memcpy(&last, b->data.data() + 24, 8);
  EXPECT_EQ(last, 3);
}

TEST(NpyTest, RejectsBadInputsWithReasons) {
  EXPECT_THAT(std::string(ParseNpy("hello world", "x.npy").status().message()),
              HasSubstr("not a .npy file"));
  std::string bytes = SerializeNpy(Floats({2}, {1, 2}));
  EXPECT_THAT(std::string(ParseNpy(bytes.substr(0, bytes.size() - 1), "t.npy")
                              .status()
                              .message()),
              HasSubstr("need 8"));
  std::string fortran = bytes;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_THAT(std::string(ParseNpy(fortran, "f.npy").status().message()),
              HasSubstr("Fortran-order"));
  std::string big = bytes;
  big.replace(big.find("<f4"), 3, ">f4");
  EXPECT_THAT(std::string(ParseNpy(big, "b.npy").status().message()),
              HasSubstr("unsupported dtype '>f4'"));
}

}  // namespace
}  // namespace kiln::cli
