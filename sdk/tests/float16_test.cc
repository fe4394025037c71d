// kiln/sdk/float16.h against the compiler's IEEE binary16 conversions
// (_Float16, rounding to nearest even), an implementation independent of
// the SDK's bit manipulation.
#include "kiln/sdk/float16.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"

namespace kiln::sdk {
namespace {

#ifdef __FLT16_MAX__
uint16_t Bits(_Float16 h) {
  uint16_t b;
  std::memcpy(&b, &h, sizeof(b));
  return b;
}
_Float16 FromBits(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, sizeof(h));
  return h;
}
float FloatFromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}
#endif

TEST(SdkFloat16Test, EveryHalfConvertsExactlyToFloat) {
#ifndef __FLT16_MAX__
  GTEST_SKIP() << "this compiler has no _Float16 to compare with";
#else
  for (uint32_t b = 0; b <= 0xFFFFu; ++b) {
    const float expected =
        static_cast<float>(FromBits(static_cast<uint16_t>(b)));
    const float got = HalfToFloat(static_cast<uint16_t>(b));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << "half bits " << b;
    } else {
      EXPECT_EQ(got, expected) << "half bits " << b;
      EXPECT_EQ(std::signbit(got), std::signbit(expected)) << "half bits " << b;
    }
  }
#endif
}

TEST(SdkFloat16Test, FloatsRoundToNearestEvenHalf) {
#ifndef __FLT16_MAX__
  GTEST_SKIP() << "this compiler has no _Float16 to compare with";
#else
  int64_t checked = 0;
  auto check = [&](uint32_t bits) {
    const float f = FloatFromBits(bits);
    const uint16_t got = FloatToHalf(f);
    const uint16_t expected = Bits(static_cast<_Float16>(f));
    if (std::isnan(f)) {
      ASSERT_EQ(got & 0x7C00u, 0x7C00u) << "float bits " << bits;
      ASSERT_NE(got & 0x3FFu, 0u) << "float bits " << bits;
    } else {
      ASSERT_EQ(got, expected) << "float bits " << bits;
    }
    ++checked;
  };
  // Every exponent and many mantissas: all bit patterns in steps of 997.
  for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 997) {
    check(static_cast<uint32_t>(b));
  }
  for (uint32_t sign : {0u, 0x80000000u}) {
    // Normal halves: each 19-bit prefix with the 13 dropped bits just
    // below, at and just above the tie.
    for (uint32_t high = 0; high < (1u << 18); ++high) {
      for (uint32_t low : {0x0FFFu, 0x1000u, 0x1001u}) {
        check(sign | (high << 13) | low);
      }
    }
    // Subnormal and zero results, and the overflow edge, densely.
    for (uint32_t b = 0x32FF0000u; b <= 0x38810000u; b += 61) check(sign | b);
    for (uint32_t b = 0x477F0000u; b <= 0x47810000u; ++b) check(sign | b);
  }
  EXPECT_GT(checked, 6000000);
#endif
}

}  // namespace
}  // namespace kiln::sdk
