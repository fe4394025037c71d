// The option mapping table agrees with the generated schema.
#include "model/op_options.h"

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "kiln/kiln_builtin_ops.h"
#include "schema/kiln_model_generated.h"

namespace kiln {
namespace {

TEST(OpOptionsTest, UnionIndexNamesTheDeclaredTable) {
  for (const OpOptionsLayout& layout : AllOpOptionsLayouts()) {
    SCOPED_TRACE(BuiltinOpName(layout.builtin_code));
    const std::string name =
        layout.in_options_2
            ? fb::EnumNameBuiltinOptions2(
                  static_cast<fb::BuiltinOptions2>(layout.union_type))
            : fb::EnumNameBuiltinOptions(
                  static_cast<fb::BuiltinOptions>(layout.union_type));
    EXPECT_EQ(name, layout.table_name);
    EXPECT_FALSE(layout.fields.empty());
  }
}

TEST(OpOptionsTest, OneLayoutPerOpAndOneFieldPerKey) {
  std::set<int32_t> codes;
  for (const OpOptionsLayout& layout : AllOpOptionsLayouts()) {
    EXPECT_TRUE(codes.insert(layout.builtin_code).second)
        << BuiltinOpName(layout.builtin_code);
    std::set<uint32_t> keys;
    std::set<uint16_t> slots;
    for (const OptionField& f : layout.fields) {
      EXPECT_TRUE(keys.insert(f.key).second) << OptionKeyName(f.key);
      EXPECT_TRUE(slots.insert(f.vtable_offset).second) << OptionKeyName(f.key);
      EXPECT_STRNE(OptionKeyName(f.key), "unknown option key");
    }
  }
}

TEST(OpOptionsTest, UnionIndicesMatchTflite) {
  // Spot checks of indices fixed by the TFLite format.
  EXPECT_EQ(static_cast<int>(fb::BuiltinOptions::Conv2DOptions), 1);
  EXPECT_EQ(static_cast<int>(fb::BuiltinOptions::AddOptions), 11);
  EXPECT_EQ(static_cast<int>(fb::BuiltinOptions::ReducerOptions), 27);
  EXPECT_EQ(static_cast<int>(fb::BuiltinOptions::TransposeConvOptions), 49);
  EXPECT_EQ(static_cast<int>(fb::BuiltinOptions::WhileOptions), 93);
  EXPECT_EQ(static_cast<int>(fb::BuiltinOptions::BatchMatMulOptions), 101);
  EXPECT_EQ(static_cast<int>(fb::BuiltinOptions::VarHandleOptions), 111);
  EXPECT_EQ(static_cast<int>(fb::BuiltinOptions::GeluOptions), 116);
  EXPECT_EQ(static_cast<int>(fb::BuiltinOptions::RightShiftOptions), 126);
  EXPECT_EQ(static_cast<int>(fb::BuiltinOptions2::StableHLOCompositeOptions),
            21);
  EXPECT_EQ(static_cast<int>(fb::BuiltinOptions2::StablehloCaseOptions), 23);
}

TEST(OpOptionsTest, UnmappedOpHasNoLayout) {
  EXPECT_EQ(FindOpOptionsLayout(KILN_OP_RELU), nullptr);
  EXPECT_EQ(FindOpOptionsLayout(KILN_OP_CUSTOM), nullptr);
  ASSERT_NE(FindOpOptionsLayout(KILN_OP_MEAN), nullptr);
  EXPECT_EQ(FindOpOptionsLayout(KILN_OP_MEAN)->union_type,
            static_cast<uint8_t>(fb::BuiltinOptions::ReducerOptions));
}

}  // namespace
}  // namespace kiln
