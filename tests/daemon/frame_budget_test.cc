// The client's bound on the fields of one frame (wire::kDefaultMaxFields) against the largest
// report a real daemon sends: every group of a 64-device trn2 UltraServer, with its welcome. The
// bound must leave a wide margin, or a legitimate daemon would be refused as hostile.
#include <gtest/gtest.h>

#include "daemon/core/daemon_core.h"
#include "proto/wire/frame_codec.h"

namespace neuronmon::daemon {
namespace {

using std::chrono::seconds;

// The number of length-delimited fields in `frame`'s envelope (the least budget that admits it).
std::size_t FieldsIn(std::string_view frame) {
  // The frame starts with its varint length; WithinFieldBudget reads the envelope after it.
  std::size_t prefix = 0;
  while (static_cast<unsigned char>(frame[prefix]) & 0x80) ++prefix;
  const std::string_view envelope = frame.substr(prefix + 1);
  std::size_t lo = 0, hi = wire::kDefaultMaxFields;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (wire::WithinFieldBudget(envelope, *v1::Envelope::descriptor(), mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

TEST(FrameBudget, TheLargestRealReportIsFarWithinTheClientsBound) {
  const MonoTime start(seconds(0));
  auto backend = MakeBackend({"sim:trn2-ultraserver", "healthy-training", 1, 1}, start);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  DaemonCore core({seconds(1), std::chrono::minutes(1), "test"}, std::move(*backend), nullptr);
  for (int t = 0; t <= 30; ++t) core.Sample(start + seconds(t), WallTime(seconds(t)));
  const auto sub = Subscription::FromRequest(v1::Subscribe(), seconds(1));  // every group
  ASSERT_TRUE(sub.ok());
  const std::shared_ptr<const std::string> frame = core.LiveFrame(*sub);
  ASSERT_NE(frame, nullptr);
  const std::size_t report_fields = FieldsIn(*frame);
  v1::Envelope welcome;
  *welcome.mutable_welcome() = core.MakeWelcome(start + seconds(30));
  const std::size_t welcome_fields = FieldsIn(*wire::EncodeFrame(welcome));
  EXPECT_GT(report_fields, 1000u) << "the walk counts nested fields";
  EXPECT_LT(report_fields * 10, wire::kDefaultMaxFields) << report_fields << " fields";
  EXPECT_LT(welcome_fields * 10, wire::kDefaultMaxFields) << welcome_fields << " fields";
  std::printf("ultraserver report: %zu bytes, %zu fields; welcome: %zu fields\n", frame->size(),
              report_fields, welcome_fields);
}

}  // namespace
}  // namespace neuronmon::daemon
