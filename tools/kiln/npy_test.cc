#include "npy.h"

#include <sys/stat.h>

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

// A .npy file of `header` (the dict, padded to 64 bytes with '\n') and
// `data`.
std::string NpyWithHeader(std::string header, const std::string& data) {
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

std::string ParseError(const std::string& bytes) {
  return std::string(ParseNpy(bytes, "t.npy").status().message());
}

// Issue 10: trailing garbage in the header was accepted.
TEST(NpyTest, RejectsMalformedHeaders) {
  const std::string data(8, '\0');
  const std::string good =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  ASSERT_TRUE(ParseNpy(NpyWithHeader(good, data), "t.npy").ok());
  EXPECT_THAT(ParseError(NpyWithHeader(good + " garbage", data)),
              HasSubstr("unexpected bytes after the header dict"));
  EXPECT_THAT(
      ParseError(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (2,), 'extra': 1}",
                               data)),
      HasSubstr("unexpected or repeated key 'extra'"));
  EXPECT_THAT(ParseError(NpyWithHeader("{'descr': '<f4', 'descr': '<f4', "
                                       "'fortran_order': False, 'shape': (2,)}",
                                       data)),
              HasSubstr("unexpected or repeated key 'descr'"));
  EXPECT_THAT(ParseError(NpyWithHeader(
                  "{'descr': '<f4', 'fortran_order': False}", data)),
              HasSubstr("lacks one of descr, fortran_order and shape"));
  EXPECT_THAT(
      ParseError(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (2, -1)}",
                               data)),
      HasSubstr("bad shape entry"));
  EXPECT_THAT(
      ParseError(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (2147483647, 2147483647, "
                               "2147483647)}",
                               data)),
      HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(ParseError(NpyWithHeader(good, data + "xx")),
              HasSubstr("holds 10 data bytes but its shape (2) and dtype "
                        "'<f4' need 8 (trailing bytes after the data)"));
  std::string huge("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
  EXPECT_THAT(ParseError(huge),
              HasSubstr("its header claims 2147483647 bytes"));
}

// Issue 10: a directory aborted kiln run, a FIFO blocked it, /dev/zero was
// read until memory ran out.
TEST(NpyTest, RefusesFilesThatAreNotRegular) {
  const std::string fifo = ::testing::TempDir() + "/kiln_npy_fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path :
       {::testing::TempDir(), fifo, std::string("/dev/zero")}) {
    const absl::Status s = ReadNpy(path).status();
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("is not a regular file (a directory, FIFO or "
                          "device)"))
        << path;
  }
  std::remove(fifo.c_str());
}

// The header is checked before any data is read.
TEST(NpyTest, HeaderAloneTellsTheDataSize) {
  const std::string path = ::testing::TempDir() + "/kiln_npy_header.npy";
  ASSERT_TRUE(WriteNpy(path, Floats({2, 2}, {1, 2, 3, 4})).ok());
  absl::StatusOr<NpyHeaderInfo> h = ReadNpyHeader(path);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->type, KILN_TYPE_FLOAT32);
  EXPECT_THAT(h->shape, ElementsAre(2, 2));
  EXPECT_EQ(h->data_bytes, 16u);
  EXPECT_EQ(h->data_offset % 64, 0u);
  EXPECT_EQ(h->data_offset + 16,
            SerializeNpy(Floats({2, 2}, {1, 2, 3, 4})).size());
}

}  // namespace
}  // namespace kiln::cli
