// Device health: each rule of docs/health.md gives its state and action, reasons come worst
// first, and the window's errors are told apart from the driver's totals.
#include "daemon/core/report/device_health.h"

#include <gtest/gtest.h>

#include <chrono>

#include "proto/names/names.h"

namespace neuronmon::daemon {
namespace {

// Two snapshots of one device, a minute apart.
struct Pair {
  Snapshot start, end;
  Pair() {
    start.devices.resize(1);
    end.devices.resize(1);
    start.device_time = Nanos(0);
    end.device_time = std::chrono::minutes(1);
  }
  v1::DeviceHealth Health(bool reset = false, const std::string& corrected = "") const {
    return DeviceHealthOf(start, end, 0, reset, corrected);
  }
};

std::vector<std::string> Codes(const v1::DeviceHealth& h) {
  std::vector<std::string> out;
  for (const v1::HealthReason& r : h.reasons()) out.push_back(r.code());
  return out;
}

TEST(DeviceHealth, ADeviceWithoutErrorsIsOk) {
  Pair p;
  const v1::DeviceHealth h = p.Health();
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_OK);
  EXPECT_EQ(h.action(), v1::HEALTH_ACTION_NONE);
  EXPECT_TRUE(h.reasons().empty());
  EXPECT_EQ(h.advice(), "");
  EXPECT_EQ(h.neuron_device_index(), 0u);
}

TEST(DeviceHealth, UncorrectableHbmEccSinceTheDriverLoadedFailsTheDevice) {
  Pair p;
  // Both errors happened before the window: health still counts them (the driver's totals).
  p.start.devices[0].errors.mem_ecc_uncorrected = 2;
  p.end.devices[0].errors.mem_ecc_uncorrected = 2;
  const v1::DeviceHealth h = p.Health();
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_FAILED);
  EXPECT_EQ(h.action(), v1::HEALTH_ACTION_REPLACE);
  ASSERT_EQ(h.reasons_size(), 1);
  EXPECT_EQ(h.reasons(0).code(), "mem_ecc_uncorrected");
  EXPECT_EQ(h.reasons(0).text(), "2 uncorrectable HBM ECC errors since the driver loaded");
  EXPECT_EQ(h.advice(), HealthAdvice(v1::HEALTH_ACTION_REPLACE));
  EXPECT_EQ(h.errors_total().mem_ecc_uncorrected(), 2u);
  EXPECT_EQ(h.errors().mem_ecc_uncorrected(), 0u);  // none within the window
}

// trn2 firmware: a pending HBM repair shows the errors as repairable (degraded, reset); a failed
// repair as uncorrected (failed, replace). Health follows the file, never a counter epoch.
TEST(DeviceHealth, HbmRepairStateDecidesTheAction) {
  Pair p;
  p.end.devices[0].errors.mem_ecc_repairable = 2;
  v1::DeviceHealth h = p.Health();
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_DEGRADED);
  EXPECT_EQ(h.action(), v1::HEALTH_ACTION_RESET);
  p.end.devices[0].errors.mem_ecc_repairable = 0;
  p.end.devices[0].errors.mem_ecc_uncorrected = 2;
  h = p.Health();
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_FAILED);
  EXPECT_EQ(h.action(), v1::HEALTH_ACTION_REPLACE);
}

// Driver 2.30.2's health_status/unhealthy_components: a device whose firmware names a component
// is degraded (drain), the components named.
TEST(DeviceHealth, UnhealthyComponentsAreAReason) {
  Pair p;
  p.end.devices[0].unhealthy_components = {"hbm", "link_3"};
  const v1::DeviceHealth h = p.Health();
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_DEGRADED);
  EXPECT_EQ(h.action(), v1::HEALTH_ACTION_DRAIN);
  ASSERT_EQ(h.reasons_size(), 1);
  EXPECT_EQ(h.reasons(0).code(), "unhealthy_component");
  EXPECT_EQ(h.reasons(0).text(), "the firmware reports unhealthy components: hbm, link_3");
}

TEST(DeviceHealth, EachRuleGivesItsStateAndAction) {
  struct Case {
    void (*set)(DeviceCounters&);
    const char* code;
    v1::HealthState state;
    v1::HealthAction action;
  };
  const Case cases[] = {
      {[](DeviceCounters& d) { d.present = false; }, "not_responding", v1::HEALTH_STATE_FAILED,
       v1::HEALTH_ACTION_RESET},
      {[](DeviceCounters& d) { d.errors.hbm_uncorrectable = 1; }, "hbm_uncorrectable",
       v1::HEALTH_STATE_FAILED, v1::HEALTH_ACTION_REPLACE},
      {[](DeviceCounters& d) { d.errors.nc_uncorrectable = 1; }, "nc_uncorrectable",
       v1::HEALTH_STATE_FAILED, v1::HEALTH_ACTION_RESET},
      {[](DeviceCounters& d) { d.errors.mem_ecc_repairable = 3; }, "mem_ecc_repairable",
       v1::HEALTH_STATE_DEGRADED, v1::HEALTH_ACTION_RESET},
      {[](DeviceCounters& d) { d.errors.sram_ecc_uncorrected = 1; }, "sram_ecc_uncorrected",
       v1::HEALTH_STATE_DEGRADED, v1::HEALTH_ACTION_RESET},
      {[](DeviceCounters& d) { d.errors.dma_abort = 1; }, "dma_abort", v1::HEALTH_STATE_DEGRADED,
       v1::HEALTH_ACTION_RESET},
      {[](DeviceCounters& d) { d.errors.hbm_repairable = 2; }, "hbm_repairable",
       v1::HEALTH_STATE_DEGRADED, v1::HEALTH_ACTION_RESET},
      {[](DeviceCounters& d) { d.errors.collectives = 1; }, "collectives_error",
       v1::HEALTH_STATE_DEGRADED, v1::HEALTH_ACTION_DRAIN},
      {[](DeviceCounters& d) { d.errors.events = 1; }, "hw_error_event", v1::HEALTH_STATE_DEGRADED,
       v1::HEALTH_ACTION_DRAIN},
  };
  for (const Case& c : cases) {
    Pair p;
    c.set(p.end.devices[0]);
    const v1::DeviceHealth h = p.Health();
    ASSERT_EQ(h.reasons_size(), 1) << c.code;
    EXPECT_EQ(h.reasons(0).code(), c.code);
    EXPECT_EQ(h.state(), c.state) << c.code;
    EXPECT_EQ(h.action(), c.action) << c.code;
    EXPECT_EQ(h.advice(), HealthAdvice(c.action)) << c.code;
  }
}

TEST(DeviceHealth, EventsThatFailedExecutionsAreNotCountedTwice) {
  Pair p;
  p.end.devices[0].errors.dma_abort = 2;
  p.end.devices[0].errors.events = 2;  // the driver reported each abort as an event too
  EXPECT_EQ(Codes(p.Health()), std::vector<std::string>{"dma_abort"});
  p.end.devices[0].errors.events = 5;
  const v1::DeviceHealth h = p.Health();
  EXPECT_EQ(Codes(h), (std::vector<std::string>{"dma_abort", "hw_error_event"}));
  EXPECT_EQ(h.reasons(1).text(), "3 hardware error events reported since the driver loaded");
}

TEST(DeviceHealth, ReasonsComeWorstFirstAndTheWorstDecides) {
  Pair p;
  DeviceCounters& d = p.end.devices[0];
  d.errors.collectives = 1;          // degraded, drain
  d.errors.mem_ecc_repairable = 1;   // degraded, reset
  d.errors.mem_ecc_uncorrected = 1;  // failed, replace
  d.ecc.mem_corrected = 3;           // within the window: 3 a minute, watch
  const v1::DeviceHealth h = p.Health();
  EXPECT_EQ(Codes(h), (std::vector<std::string>{"mem_ecc_uncorrected", "mem_ecc_repairable",
                                                "collectives_error", "ecc_corrected_rate"}));
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_FAILED);
  EXPECT_EQ(h.action(), v1::HEALTH_ACTION_REPLACE);
}

TEST(DeviceHealth, CorrectedErrorsAreWatchedThenDegradeAtTenAMinute) {
  Pair p;
  p.start.devices[0].ecc.mem_corrected = 100;  // before the window: not a rate
  p.end.devices[0].ecc.mem_corrected = 109;
  v1::DeviceHealth h = p.Health();
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_OK);
  EXPECT_EQ(h.action(), v1::HEALTH_ACTION_WATCH);
  ASSERT_EQ(h.reasons_size(), 1);
  EXPECT_EQ(h.reasons(0).text(), "9.0 corrected ECC errors per minute (fewer than 10)");
  p.end.devices[0].ecc.sram_corrected = 1;  // 10 a minute
  h = p.Health();
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_DEGRADED);
  EXPECT_EQ(h.action(), v1::HEALTH_ACTION_DRAIN);
  // A backend that cannot count corrected errors does not judge by them.
  h = p.Health(false, "the driver counts only uncorrected errors");
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_OK);
  EXPECT_TRUE(h.reasons().empty());
}

TEST(DeviceHealth, AcrossAResetTheWindowCountsTheCountersThemselves) {
  Pair p;
  p.start.devices[0].errors.dma_abort = 7;
  p.end.devices[0].errors.dma_abort = 2;  // restarted, then 2
  EXPECT_EQ(p.Health(/*reset=*/true).errors().dma_abort(), 2u);
  EXPECT_EQ(p.Health(/*reset=*/true).errors_total().dma_abort(), 2u);
}

TEST(DeviceHealth, PowerAndUnreadableCountersAreCarriedWithTheirReasons) {
  Pair p;
  p.end.devices[0].power = DevicePower{"", 18.86, 0.86, 25, 1'700'000'000'000'000'000};
  p.end.devices[0].errors_unavailable = "the driver does not expose health_status/hw_error_event";
  v1::DeviceHealth h = p.Health();
  EXPECT_EQ(h.power().unavailable(), "");
  EXPECT_DOUBLE_EQ(h.power().average_percent(), 18.86);
  EXPECT_DOUBLE_EQ(h.power().max_percent(), 25);
  EXPECT_EQ(h.power().sampled_unix_ns(), 1'700'000'000'000'000'000);
  EXPECT_EQ(h.errors_unavailable(), "the driver does not expose health_status/hw_error_event");
  p.end.devices[0].power = DevicePower{"the driver has no reading yet (POWER_STATUS_NO_DATA)"};
  h = p.Health();
  EXPECT_EQ(h.power().unavailable(), "the driver has no reading yet (POWER_STATUS_NO_DATA)");
  EXPECT_EQ(h.power().average_percent(), 0);
}

TEST(DeviceHealth, NamesAreThoseOutputsUse) {
  EXPECT_STREQ(HealthStateName(v1::HEALTH_STATE_DEGRADED), "degraded");
  EXPECT_STREQ(HealthActionName(v1::HEALTH_ACTION_REPLACE), "replace");
  EXPECT_STREQ(HealthActionName(v1::HEALTH_ACTION_NONE), "none");
}

}  // namespace
}  // namespace neuronmon::daemon

namespace neuronmon::daemon {
namespace {

// The kernel log's NEURON_HW_ERR events add a reason only where the driver's counters show fewer
// of the same errors (an older driver without them): the same error never counts twice. Any
// process that can open a Neuron device can print such a line, so events the counters do not
// confirm make a device degraded, never failed.
TEST(DeviceHealth, KernelLogEventsBeyondTheCountersAreReasons) {
  Pair p;
  HardwareErrors& e = p.end.devices[0].errors;
  e.sram_ecc_uncorrected = 2;
  e.kernel_sram_uncorrectable = 2;  // the same two errors
  EXPECT_EQ(Codes(p.Health()), (std::vector<std::string>{"sram_ecc_uncorrected"}));
  EXPECT_EQ(p.Health().errors_total().kernel_sram_uncorrectable(), 2u);
  EXPECT_EQ(p.Health().errors().kernel_sram_uncorrectable(), 2u);
  // An HBM error the counters do not show: a claim, not a failure.
  e.kernel_hbm_uncorrectable = 1;
  v1::DeviceHealth h = p.Health();
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_DEGRADED);
  EXPECT_EQ(h.action(), v1::HEALTH_ACTION_RESET);  // the SRAM counter's
  ASSERT_EQ(Codes(h),
            (std::vector<std::string>{"sram_ecc_uncorrected", "kernel_hbm_uncorrectable"}));
  EXPECT_EQ(h.reasons(1).text(),
            "1 NEURON_HW_ERR event (HBM_UNCORRECTABLE_ERROR) reported in the kernel log, not "
            "confirmed by the driver's counters");
  EXPECT_EQ(h.reasons(1).state(), v1::HEALTH_STATE_DEGRADED);
  EXPECT_EQ(h.reasons(1).action(), v1::HEALTH_ACTION_DRAIN);
  // Alone, every type is degraded and drained, and counters that cannot be read are said so.
  e = {};
  e.kernel_hbm_uncorrectable = 4;
  e.kernel_nc_uncorrectable = 1;
  p.end.devices[0].errors_unavailable = "no health_status";
  h = p.Health();
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_DEGRADED);
  EXPECT_EQ(h.action(), v1::HEALTH_ACTION_DRAIN);
  ASSERT_EQ(Codes(h),
            (std::vector<std::string>{"kernel_nc_uncorrectable", "kernel_hbm_uncorrectable"}));
  EXPECT_EQ(h.reasons(1).text(),
            "4 NEURON_HW_ERR events (HBM_UNCORRECTABLE_ERROR) reported in the kernel log, not "
            "confirmed by the driver's counters (they cannot be read)");
  p.end.devices[0].errors_unavailable = "";
  // The driver's counter agrees: failed, by the counter's own reason.
  e.mem_ecc_uncorrected = 4;
  h = p.Health();
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_FAILED);
  EXPECT_EQ(h.action(), v1::HEALTH_ACTION_REPLACE);
  EXPECT_EQ(Codes(h), (std::vector<std::string>{"mem_ecc_uncorrected", "kernel_nc_uncorrectable"}));
  // More DMA errors logged than the counters show; an unknown type.
  e = {};
  e.dma_abort = 1;
  e.kernel_dma = 3;
  e.kernel_other = 1;
  h = p.Health();
  EXPECT_EQ(h.state(), v1::HEALTH_STATE_DEGRADED);
  EXPECT_EQ(h.action(), v1::HEALTH_ACTION_RESET);
  ASSERT_EQ(Codes(h),
            (std::vector<std::string>{"dma_abort", "kernel_dma_error", "kernel_hw_error"}));
  EXPECT_EQ(h.reasons(1).text(),
            "3 NEURON_HW_ERR events (DMA_ERROR) reported in the kernel log, 2 not confirmed by "
            "the driver's counters (1)");
  EXPECT_EQ(h.reasons(2).action(), v1::HEALTH_ACTION_DRAIN);
  // A kernel log that cannot be read is said so.
  p.end.devices[0].kernel_log_unavailable = "cannot read /dev/kmsg: Operation not permitted";
  EXPECT_EQ(p.Health().kernel_log_unavailable(), "cannot read /dev/kmsg: Operation not permitted");
}

}  // namespace
}  // namespace neuronmon::daemon
