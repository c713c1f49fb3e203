#include "daemon/core/report/device_health.h"

#include <algorithm>
#include <string>

#include "proto/wire/snapshot_codec.h"

namespace neuronmon::daemon {
namespace {

void Count(const HardwareErrors& e, v1::HardwareErrorCounts& out) {
  out.set_mem_ecc_uncorrected(e.mem_ecc_uncorrected);
  out.set_mem_ecc_repairable(e.mem_ecc_repairable);
  out.set_sram_ecc_uncorrected(e.sram_ecc_uncorrected);
  out.set_nc_uncorrectable(e.nc_uncorrectable);
  out.set_hbm_uncorrectable(e.hbm_uncorrectable);
  out.set_dma_abort(e.dma_abort);
  out.set_collectives(e.collectives);
  out.set_events(e.events);
  out.set_kernel_sram_uncorrectable(e.kernel_sram_uncorrectable);
  out.set_kernel_nc_uncorrectable(e.kernel_nc_uncorrectable);
  out.set_kernel_hbm_uncorrectable(e.kernel_hbm_uncorrectable);
  out.set_kernel_dma(e.kernel_dma);
  out.set_kernel_other(e.kernel_other);
}

std::string Plural(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

const char* HealthAdvice(v1::HealthAction action) {
  switch (action) {
    case v1::HEALTH_ACTION_WATCH:
      return "keep watching: the hardware corrected these errors, but a rising rate comes before "
             "uncorrectable ones";
    case v1::HEALTH_ACTION_DRAIN:
      return "drain it: let running work finish and schedule nothing new on this device until it "
             "is checked";
    case v1::HEALTH_ACTION_RESET:
      return "drain it, then reset the device (reload the neuron driver, or reboot); replace it "
             "if the errors come back";
    case v1::HEALTH_ACTION_REPLACE:
      return "drain it and replace the hardware: stop and start the instance to move to another "
             "host (a reboot keeps this one), and report it to AWS support";
    default:
      return "";
  }
}

v1::DeviceHealth DeviceHealthOf(const Snapshot& start, const Snapshot& end, std::size_t device,
                                bool reset, const std::string& corrected_unavailable) {
  v1::DeviceHealth h;
  h.set_neuron_device_index(static_cast<std::uint32_t>(device));
  const DeviceCounters& e = end.devices[device];
  const DeviceCounters zero;
  const DeviceCounters& b = reset || device >= start.devices.size() ? zero : start.devices[device];
  wire::PowerToProto(e.power, *h.mutable_power());
  h.set_errors_unavailable(e.errors_unavailable);
  h.set_kernel_log_unavailable(e.kernel_log_unavailable);
  Count(e.errors, *h.mutable_errors_total());
  Count(e.errors.Minus(b.errors), *h.mutable_errors());
  const EccCounters window_ecc = e.ecc.Minus(b.ecc);
  const auto reason = [&](const char* code, std::string text, v1::HealthState state,
                          v1::HealthAction action) {
    v1::HealthReason* r = h.add_reasons();
    r->set_code(code);
    r->set_text(std::move(text));
    r->set_state(state);
    r->set_action(action);
  };
  using v1::HEALTH_ACTION_DRAIN;
  using v1::HEALTH_ACTION_REPLACE;
  using v1::HEALTH_ACTION_RESET;
  using v1::HEALTH_ACTION_WATCH;
  using v1::HEALTH_STATE_DEGRADED;
  using v1::HEALTH_STATE_FAILED;
  using v1::HEALTH_STATE_OK;
  const char* since = " since the driver loaded";
  if (!e.present) {
    reason("not_responding", "the device does not answer", HEALTH_STATE_FAILED,
           HEALTH_ACTION_RESET);
  } else {
    const HardwareErrors& t = e.errors;
    if (t.mem_ecc_uncorrected > 0) {
      reason("mem_ecc_uncorrected",
             Plural(t.mem_ecc_uncorrected, "uncorrectable HBM ECC error",
                    "uncorrectable HBM ECC errors") +
                 since,
             HEALTH_STATE_FAILED, HEALTH_ACTION_REPLACE);
    }
    if (t.hbm_uncorrectable > 0) {
      reason("hbm_uncorrectable",
             Plural(t.hbm_uncorrectable, "execution", "executions") +
                 " hit an uncorrectable HBM error" + since,
             HEALTH_STATE_FAILED, HEALTH_ACTION_REPLACE);
    }
    if (t.nc_uncorrectable > 0) {
      reason("nc_uncorrectable",
             Plural(t.nc_uncorrectable, "execution", "executions") +
                 " hit an uncorrectable NeuronCore error" + since,
             HEALTH_STATE_FAILED, HEALTH_ACTION_RESET);
    }
    if (t.mem_ecc_repairable > 0) {
      reason(
          "mem_ecc_repairable",
          Plural(t.mem_ecc_repairable, "uncorrected HBM ECC error", "uncorrected HBM ECC errors") +
              " a reset repairs" + since,
          HEALTH_STATE_DEGRADED, HEALTH_ACTION_RESET);
    }
    if (t.sram_ecc_uncorrected > 0) {
      reason("sram_ecc_uncorrected",
             Plural(t.sram_ecc_uncorrected, "uncorrectable SRAM ECC error",
                    "uncorrectable SRAM ECC errors") +
                 since,
             HEALTH_STATE_DEGRADED, HEALTH_ACTION_RESET);
    }
    if (t.dma_abort > 0) {
      reason("dma_abort",
             Plural(t.dma_abort, "execution", "executions") + " aborted by a DMA error" + since,
             HEALTH_STATE_DEGRADED, HEALTH_ACTION_RESET);
    }
    if (t.collectives > 0) {
      reason("collectives_error",
             Plural(t.collectives, "execution", "executions") +
                 " hit a collectives hardware error" + since + " (check its links and peers)",
             HEALTH_STATE_DEGRADED, HEALTH_ACTION_DRAIN);
    }
    const std::uint64_t attributed =
        t.nc_uncorrectable + t.hbm_uncorrectable + t.dma_abort + t.collectives;
    if (t.events > attributed) {
      reason("hw_error_event",
             Plural(t.events - attributed, "hardware error event", "hardware error events") +
                 " reported" + since,
             HEALTH_STATE_DEGRADED, HEALTH_ACTION_DRAIN);
    }
    // The kernel log's NEURON_HW_ERR events, where they tell more than the driver's counters (an
    // older driver without them, or events the counters do not count): the same rules.
    const struct {
      const char* code;
      const char* type;
      std::uint64_t logged;
      std::uint64_t counted;
      v1::HealthState state;
      v1::HealthAction action;
    } kernel[] = {
        {"kernel_hbm_uncorrectable", "HBM_UNCORRECTABLE_ERROR", t.kernel_hbm_uncorrectable,
         t.mem_ecc_uncorrected + t.hbm_uncorrectable, HEALTH_STATE_FAILED, HEALTH_ACTION_REPLACE},
        {"kernel_nc_uncorrectable", "NC_UNCORRECTABLE_ERROR", t.kernel_nc_uncorrectable,
         t.nc_uncorrectable, HEALTH_STATE_FAILED, HEALTH_ACTION_RESET},
        {"kernel_sram_uncorrectable", "SRAM_UNCORRECTABLE_ERROR", t.kernel_sram_uncorrectable,
         t.sram_ecc_uncorrected, HEALTH_STATE_DEGRADED, HEALTH_ACTION_RESET},
        {"kernel_dma_error", "DMA_ERROR", t.kernel_dma, t.dma_abort, HEALTH_STATE_DEGRADED,
         HEALTH_ACTION_RESET},
        {"kernel_hw_error", "another type", t.kernel_other, 0, HEALTH_STATE_DEGRADED,
         HEALTH_ACTION_DRAIN},
    };
    for (const auto& k : kernel) {
      if (k.logged <= k.counted) continue;
      std::string text = Plural(k.logged, "NEURON_HW_ERR event", "NEURON_HW_ERR events") + " (" +
                         k.type + ") in the kernel log";
      if (k.counted > 0)
        text += ", more than the driver's counters show (" + std::to_string(k.counted) + ")";
      reason(k.code, std::move(text), k.state, k.action);
    }
    const double minutes =
        static_cast<double>((end.device_time - start.device_time).count()) / 60e9;
    const std::uint64_t corrected = window_ecc.mem_corrected + window_ecc.sram_corrected;
    if (corrected_unavailable.empty() && corrected > 0 && minutes > 0) {
      const double rate = static_cast<double>(corrected) / minutes;
      char text[120];
      std::snprintf(text, sizeof text, "%.1f corrected ECC errors per minute (%s)", rate,
                    rate >= kCorrectedEccPerMinute ? "10 or more" : "fewer than 10");
      reason("ecc_corrected_rate", text,
             rate >= kCorrectedEccPerMinute ? HEALTH_STATE_DEGRADED : HEALTH_STATE_OK,
             rate >= kCorrectedEccPerMinute ? HEALTH_ACTION_DRAIN : HEALTH_ACTION_WATCH);
    }
  }
  // The worst first; the state and action are the worst any reason asks for.
  std::stable_sort(h.mutable_reasons()->begin(), h.mutable_reasons()->end(),
                   [](const v1::HealthReason& x, const v1::HealthReason& y) {
                     return x.state() != y.state() ? x.state() > y.state()
                                                   : x.action() > y.action();
                   });
  v1::HealthState state = HEALTH_STATE_OK;
  v1::HealthAction action = v1::HEALTH_ACTION_NONE;
  for (const v1::HealthReason& r : h.reasons()) {
    state = std::max(state, r.state());
    action = std::max(action, r.action());
  }
  h.set_state(state);
  h.set_action(action);
  h.set_advice(HealthAdvice(action));
  return h;
}

}  // namespace neuronmon::daemon
