#include "proto/common/hardware_errors.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "neuronmon/v1/report.pb.h"
#include "proto/wire/field_codec.h"

namespace neuronmon {
namespace {

// The table is the message: every field of v1.HardwareErrorCounts has a row of its name, in the
// message's order, and every row a field — so a counter added to one and not the other fails here.
TEST(HardwareErrorFields, AreTheFieldsOfHardwareErrorCounts) {
  const google::protobuf::Descriptor* d = v1::HardwareErrorCounts::descriptor();
  ASSERT_EQ(static_cast<std::size_t>(d->field_count()), kHardwareErrorFields.size());
  for (int i = 0; i < d->field_count(); ++i) {
    EXPECT_EQ(d->field(i)->name(),
              std::string(kHardwareErrorFields[static_cast<std::size_t>(i)].name));
  }
}

TEST(HardwareErrorFields, NameEachMemberOnce) {
  std::set<std::string_view> codes;
  for (const HardwareErrorField& f : kHardwareErrorFields) {
    int rows = 0;  // member pointers have no order: count the rows naming this one
    for (const HardwareErrorField& g : kHardwareErrorFields) rows += g.member == f.member ? 1 : 0;
    EXPECT_EQ(rows, 1) << f.name;
    EXPECT_TRUE(codes.insert(f.health.code.empty() ? f.name : f.health.code).second) << f.name;
  }
}

TEST(HardwareErrorFields, RoundTripThroughTheMessage) {
  HardwareErrors e;
  std::uint64_t n = 1;
  for (const HardwareErrorField& f : kHardwareErrorFields) e.*f.member = n++;
  v1::HardwareErrorCounts m;
  wire::HardwareErrorsToProto(e, m);
  EXPECT_EQ(m.mem_ecc_uncorrected(), e.mem_ecc_uncorrected);
  EXPECT_EQ(m.kernel_other(), e.kernel_other);
  EXPECT_EQ(wire::HardwareErrorsFromProto(m), e);
}

TEST(HardwareErrorFields, MinusAndTotalsCoverEveryCounter) {
  HardwareErrors later, earlier;
  std::uint64_t driver_rows = 0, kernel_rows = 0;
  for (const HardwareErrorField& f : kHardwareErrorFields) {
    later.*f.member = 10;
    earlier.*f.member = 4;
    (f.source == ErrorSource::kDriver ? driver_rows : kernel_rows) += 1;
  }
  const HardwareErrors d = later.Minus(earlier);
  for (const HardwareErrorField& f : kHardwareErrorFields) EXPECT_EQ(d.*f.member, 6u) << f.name;
  EXPECT_EQ(earlier.Minus(later).mem_ecc_uncorrected, 4u);  // went backwards: restarted
  EXPECT_EQ(later.Total(), 10 * driver_rows);               // every driver counter, once
  EXPECT_EQ(later.KernelTotal(), 10 * kernel_rows);         // every kernel-log type, once
  EXPECT_GE(driver_rows, 8u);
  EXPECT_GE(kernel_rows, 5u);
}

TEST(HardwareErrorFields, KernelLogTypesFindTheirRow) {
  EXPECT_EQ(KernelLogFieldOf("DMA_ERROR").member, &HardwareErrors::kernel_dma);
  EXPECT_EQ(KernelLogFieldOf("HBM_UNCORRECTABLE_ERROR").member,
            &HardwareErrors::kernel_hbm_uncorrectable);
  EXPECT_EQ(KernelLogFieldOf("NOTIFICATION_ERROR").member, &HardwareErrors::kernel_other);
  EXPECT_EQ(KernelLogFieldOf("").member, &HardwareErrors::kernel_other);
}

}  // namespace
}  // namespace neuronmon
