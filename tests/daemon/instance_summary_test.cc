// The instance summary over the applications' verdicts and the devices' health: a failed device
// never sits under a healthy headline (issue 37's "ND1 failed" below "instance: healthy").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/core/analysis/summary.h"

namespace neuronmon::daemon::analysis_internal {
namespace {

using ::testing::StartsWith;

Analysis OneHealthyApplication() {
  Analysis a;
  v1::Finding f;
  f.set_kind(v1::FINDING_KIND_HEALTHY);
  f.set_severity(v1::SEVERITY_INFO);
  f.set_subject("llama-rank0");
  f.set_summary("healthy");
  a.runtimes[4242].push_back(f);
  return a;
}

v1::DeviceHealth Device(std::uint32_t index, v1::HealthState state, const std::string& reason) {
  v1::DeviceHealth d;
  d.set_neuron_device_index(index);
  d.set_state(state);
  if (!reason.empty()) {
    v1::HealthReason* r = d.add_reasons();
    r->set_text(reason);
    r->set_state(state);
  }
  d.set_advice("drain the device and replace the instance");
  return d;
}

TEST(InstanceSummary, AFailedDeviceIsTheHeadlineOverHealthyApplications) {
  const Analysis a = OneHealthyApplication();
  const v1::Finding ok = Summarize(a, true, 0, {}, {Device(0, v1::HEALTH_STATE_OK, "")});
  EXPECT_EQ(ok.kind(), v1::FINDING_KIND_HEALTHY);

  const v1::Finding failed =
      Summarize(a, true, 0, {},
                {Device(0, v1::HEALTH_STATE_OK, ""),
                 Device(1, v1::HEALTH_STATE_FAILED, "2 uncorrectable HBM ECC errors")});
  EXPECT_EQ(failed.kind(), v1::FINDING_KIND_ERRORS);
  EXPECT_EQ(failed.severity(), v1::SEVERITY_CRITICAL);
  EXPECT_THAT(
      failed.summary(),
      StartsWith("ND1 failed: 2 uncorrectable HBM ECC errors; 1 of 1 applications healthy"));
  EXPECT_EQ(failed.advice(), "drain the device and replace the instance");

  // With no application at all, a failed device still heads the instance.
  const v1::Finding idle =
      Summarize(Analysis{}, false, 0, {}, {Device(3, v1::HEALTH_STATE_FAILED, "NeuronCore error")});
  EXPECT_EQ(idle.kind(), v1::FINDING_KIND_ERRORS);
  EXPECT_THAT(idle.summary(), StartsWith("ND3 failed: NeuronCore error"));

  // A degraded device keeps working: the headline stays the applications'.
  const v1::Finding degraded = Summarize(
      a, true, 0, {}, {Device(2, v1::HEALTH_STATE_DEGRADED, "corrected ECC errors 30/min")});
  EXPECT_EQ(degraded.kind(), v1::FINDING_KIND_HEALTHY);
}

// A culprit the applications name keeps the headline: the device's failure is in the devices'
// own health.
TEST(InstanceSummary, AnApplicationCulpritKeepsTheHeadline) {
  Analysis a;
  v1::Finding hang;
  hang.set_kind(v1::FINDING_KIND_HANG);
  hang.set_severity(v1::SEVERITY_CRITICAL);
  hang.set_summary("rank5 has not joined all_reduce for 41 s");
  a.runtimes[7].push_back(hang);
  const v1::Finding s =
      Summarize(a, true, 0, {}, {Device(0, v1::HEALTH_STATE_FAILED, "NeuronCore error")});
  EXPECT_EQ(s.kind(), v1::FINDING_KIND_HANG);
}

}  // namespace
}  // namespace neuronmon::daemon::analysis_internal
