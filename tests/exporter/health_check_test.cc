// neuron-ls --check's verdict: healthy, unhealthy or unknown from the inventory, the devices'
// health and what the operator requires — every mapping docs/health.md states, the one line and
// the JSON.
#include "exporter/health_check.h"

#include <gtest/gtest.h>

namespace neuronmon::exporter {
namespace {

const WallTime kNow = WallTime(std::chrono::seconds(1796000000));

// `devices` devices of 2 cores each on a trn1.32xlarge, `busy` cores held by one process, and a
// report taken 1 s before kNow with each device's state (OK unless `states` says otherwise).
CheckInput Input(int devices, std::vector<v1::HealthState> states = {}, int busy = 0) {
  CheckInput in;
  in.source = "neuron-monitord (unix:/run/x.sock)";
  in.now = kNow;
  v1::Inventory inv;
  inv.mutable_instance_info()->set_instance_type("trn1.32xlarge");
  for (int d = 0; d < devices; ++d) {
    v1::Device* dev = inv.add_devices();
    dev->set_index(static_cast<std::uint32_t>(d));
    dev->add_core_ids(static_cast<std::uint32_t>(2 * d));
    dev->add_core_ids(static_cast<std::uint32_t>(2 * d + 1));
  }
  v1::Process* p = inv.add_processes();
  for (int c = 0; c < busy; ++c) p->add_core_ids(static_cast<std::uint32_t>(c));
  in.inventory = inv;
  v1::Report r;
  r.set_wall_time_unix_ns(ToUnixNanos(kNow - std::chrono::seconds(1)));
  v1::DeviceHealthStats* dh = r.mutable_system()->mutable_device_health();
  for (int d = 0; d < devices; ++d) {
    v1::DeviceHealth* h = dh->add_devices();
    h->set_neuron_device_index(static_cast<std::uint32_t>(d));
    const auto i = static_cast<std::size_t>(d);
    h->set_state(i < states.size() ? states[i] : v1::HEALTH_STATE_OK);
    if (h->state() != v1::HEALTH_STATE_OK) {
      v1::HealthReason* reason = h->add_reasons();
      reason->set_text(h->state() == v1::HEALTH_STATE_FAILED ? "15 uncorrectable HBM ECC errors"
                                                             : "30 corrected ECC errors a minute");
    }
  }
  in.report = r;
  return in;
}

TEST(HealthCheck, AllDevicesOkIsHealthy) {
  const CheckResult r = EvaluateCheck(Input(16), {});
  EXPECT_EQ(r.outcome, CheckOutcome::kHealthy);
  EXPECT_EQ(CheckLine(r),
            "healthy: 16 devices ok, 32 free NeuronCores (neuron-monitord (unix:/run/x.sock))");
}

TEST(HealthCheck, AFailedDeviceIsUnhealthyADegradedOneOnlyWhenAsked) {
  using enum v1::HealthState;
  const CheckInput failed =
      Input(16, {HEALTH_STATE_OK, HEALTH_STATE_OK, HEALTH_STATE_OK, HEALTH_STATE_FAILED});
  const CheckResult r = EvaluateCheck(failed, {});
  EXPECT_EQ(r.outcome, CheckOutcome::kUnhealthy);
  EXPECT_EQ(CheckLine(r),
            "unhealthy: ND3 failed: 15 uncorrectable HBM ECC errors (neuron-monitord "
            "(unix:/run/x.sock))");
  const CheckInput degraded = Input(16, {HEALTH_STATE_DEGRADED});
  const CheckResult told = EvaluateCheck(degraded, {});
  EXPECT_EQ(told.outcome, CheckOutcome::kHealthy);
  EXPECT_EQ(CheckLine(told),
            "healthy: 16 devices (15 ok, 1 degraded), 32 free NeuronCores; ND0 degraded: 30 "
            "corrected ECC errors a minute (not failing: --fail-on failed) (neuron-monitord "
            "(unix:/run/x.sock))");
  CheckOptions strict;
  strict.fail_on = v1::HEALTH_STATE_DEGRADED;
  EXPECT_EQ(EvaluateCheck(degraded, strict).outcome, CheckOutcome::kUnhealthy);
  EXPECT_EQ(EvaluateCheck(failed, strict).outcome, CheckOutcome::kUnhealthy);
}

TEST(HealthCheck, MissingDevicesAreUnhealthy) {
  const CheckResult r = EvaluateCheck(Input(14), {});
  EXPECT_EQ(r.outcome, CheckOutcome::kUnhealthy);
  EXPECT_EQ(r.reasons.front(), "14 of 16 devices (trn1.32xlarge)");
  CheckOptions fewer;
  fewer.expect_devices = 14;
  EXPECT_EQ(EvaluateCheck(Input(14), fewer).outcome, CheckOutcome::kHealthy);
  fewer.expect_devices = 15;
  EXPECT_EQ(EvaluateCheck(Input(14), fewer).reasons.front(), "14 of 15 devices (trn1.32xlarge)");
}

TEST(HealthCheck, NothingReadIsUnknownUnlessTheInstanceTypeExpectsDevices) {
  CheckInput none;
  none.source = "this host's driver (/sys)";
  none.unreachable = "no Neuron devices under /sys/class/neuron_device";
  none.now = kNow;
  const CheckResult unknown = EvaluateCheck(none, {});
  EXPECT_EQ(unknown.outcome, CheckOutcome::kUnknown);
  EXPECT_EQ(
      CheckLine(unknown),
      "unknown: no Neuron devices under /sys/class/neuron_device (this host's driver (/sys))");
  none.instance_type = "inf2.24xlarge";
  const CheckResult missing = EvaluateCheck(none, {});
  EXPECT_EQ(missing.outcome, CheckOutcome::kUnhealthy);
  EXPECT_EQ(missing.reasons.front(),
            "0 of 6 devices (inf2.24xlarge): no Neuron devices under /sys/class/neuron_device");
}

TEST(HealthCheck, UnknownHealthAndStaleSamplesAreUnknown) {
  CheckInput in = Input(2);
  in.report->mutable_system()->mutable_device_health()->mutable_devices(1)->set_state(
      v1::HEALTH_STATE_UNSPECIFIED);
  CheckOptions two;
  two.expect_devices = 2;
  EXPECT_EQ(EvaluateCheck(in, two).outcome, CheckOutcome::kUnknown);
  EXPECT_EQ(EvaluateCheck(in, two).reasons.front(), "ND1: health not known");
  CheckInput stale = Input(2);
  stale.now = kNow + std::chrono::seconds(60);
  const CheckResult old = EvaluateCheck(stale, two);
  EXPECT_EQ(old.outcome, CheckOutcome::kUnknown);
  EXPECT_EQ(old.reasons.front(), "the newest sample is 1m1s old (--max-age 30s)");
  // Unhealthy wins over unknown: a failed device on a stale sample is still failed.
  CheckInput both = Input(2, {v1::HEALTH_STATE_FAILED});
  both.now = stale.now;
  EXPECT_EQ(EvaluateCheck(both, two).outcome, CheckOutcome::kUnhealthy);
  CheckInput no_report = Input(2);
  no_report.report.reset();
  no_report.unreachable = "no report within 5s";
  EXPECT_EQ(EvaluateCheck(no_report, two).reasons.front(), "no report: no report within 5s");
}

TEST(HealthCheck, FreeCoresAreCheckedWhenRequired) {
  CheckOptions four;
  four.expect_devices = 2;
  four.min_free_cores = 2;
  EXPECT_EQ(EvaluateCheck(Input(2, {}, 2), four).outcome, CheckOutcome::kHealthy);
  const CheckResult busy = EvaluateCheck(Input(2, {}, 3), four);
  EXPECT_EQ(busy.outcome, CheckOutcome::kUnhealthy);
  EXPECT_EQ(busy.reasons.front(), "1 free NeuronCore, 2 required");
}

TEST(HealthCheck, JsonHasEverything) {
  const CheckResult r = EvaluateCheck(Input(16, {v1::HEALTH_STATE_FAILED}), {});
  EXPECT_EQ(CheckJson(r),
            "{\"outcome\":\"unhealthy\",\"exit_code\":1,\"source\":\"neuron-monitord "
            "(unix:/run/x.sock)\",\"reasons\":[\"ND0 failed: 15 uncorrectable HBM ECC errors\"],"
            "\"devices\":16,\"expected_devices\":16,\"ok\":15,\"degraded\":0,\"failed\":1,"
            "\"unknown\":0,\"free_cores\":32,\"sample_age_seconds\":1,\"active\":null}");
}

TEST(HealthCheck, InstanceTypesDevices) {
  EXPECT_EQ(ExpectedDevices("trn2.48xlarge"), 16u);
  EXPECT_EQ(ExpectedDevices("inf2.48xlarge"), 12u);
  EXPECT_EQ(ExpectedDevices("trn1.2xlarge"), 1u);
  EXPECT_EQ(ExpectedDevices("m5.large"), std::nullopt);
}

}  // namespace
}  // namespace neuronmon::exporter
