#include "daemon/core/report/device_health.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>

#include "proto/wire/field_codec.h"
#include "proto/wire/snapshot_codec.h"

namespace neuronmon::daemon {
namespace {

std::string Plural(std::uint64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
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

namespace {

static_assert(static_cast<int>(HealthState::kFailed) == v1::HEALTH_STATE_FAILED &&
              static_cast<int>(HealthState::kDegraded) == v1::HEALTH_STATE_DEGRADED &&
              static_cast<int>(HealthState::kOk) == v1::HEALTH_STATE_OK);
static_assert(static_cast<int>(HealthAction::kReplace) == v1::HEALTH_ACTION_REPLACE &&
              static_cast<int>(HealthAction::kReset) == v1::HEALTH_ACTION_RESET &&
              static_cast<int>(HealthAction::kDrain) == v1::HEALTH_ACTION_DRAIN &&
              static_cast<int>(HealthAction::kWatch) == v1::HEALTH_ACTION_WATCH);

constexpr std::string_view kSince = " since the driver loaded";

void AddReason(v1::DeviceHealth& h, std::string_view code, std::string text, v1::HealthState state,
               v1::HealthAction action) {
  v1::HealthReason* r = h.add_reasons();
  r->set_code(std::string(code));
  r->set_text(std::move(text));
  r->set_state(state);
  r->set_action(action);
}

void AddReason(v1::DeviceHealth& h, const HardwareErrorField& f, std::string text) {
  AddReason(h, f.health.code.empty() ? f.name : f.health.code, std::move(text),
            static_cast<v1::HealthState>(f.health.state),
            static_cast<v1::HealthAction>(f.health.action));
}

// The driver's executions that hit an error: the driver reports each as an event too.
std::uint64_t Executions(const HardwareErrors& t) {
  std::uint64_t n = 0;
  for (const HardwareErrorField& f : kHardwareErrorFields) n += f.execution ? t.*f.member : 0;
  return n;
}

// What the driver's counters count of the events of kernel-log type `type`.
std::uint64_t CountedByDriver(const HardwareErrors& t, std::string_view type) {
  std::uint64_t n = 0;
  for (const HardwareErrorField& f : kHardwareErrorFields) {
    if (f.source == ErrorSource::kDriver && !type.empty() && f.kernel_type == type)
      n += t.*f.member;
  }
  return n;
}

// A reason for each driver counter that is not zero: errors since the driver loaded.
void AddDriverReasons(const HardwareErrors& t, v1::DeviceHealth& h) {
  for (const HardwareErrorField& f : kHardwareErrorFields) {
    if (f.source != ErrorSource::kDriver) continue;
    std::uint64_t n = t.*f.member;
    if (f.member == &HardwareErrors::events) n = n > Executions(t) ? n - Executions(t) : 0;
    if (n == 0) continue;
    AddReason(h, f,
              Plural(n, f.health.one, f.health.many) + std::string(f.health.what) +
                  std::string(kSince) + std::string(f.health.advice));
  }
}

// The kernel log's NEURON_HW_ERR events beyond what the driver's counters confirm. Any process
// that can open a Neuron device can print such a line, so an unconfirmed event makes the device
// degraded (drain it and check), never failed: a failed state needs the driver's counter.
void AddKernelLogReasons(const HardwareErrors& t, const std::string& errors_unavailable,
                         v1::DeviceHealth& h) {
  for (const HardwareErrorField& f : kHardwareErrorFields) {
    if (f.source != ErrorSource::kKernelLog) continue;
    const std::uint64_t logged = t.*f.member;
    const std::uint64_t counted = CountedByDriver(t, f.kernel_type);
    if (logged <= counted) continue;
    std::string text = Plural(logged, "NEURON_HW_ERR event", "NEURON_HW_ERR events") + " (" +
                       (f.kernel_type.empty() ? "another type" : std::string(f.kernel_type)) +
                       ") reported in the kernel log, ";
    if (counted > 0) text += std::to_string(logged - counted) + " ";
    text += "not confirmed by the driver's counters";
    if (!errors_unavailable.empty()) {
      text += " (they cannot be read)";
    } else if (counted > 0) {
      text += " (" + std::to_string(counted) + ")";
    }
    AddReason(h, f.health.code.empty() ? f.name : f.health.code, std::move(text),
              v1::HEALTH_STATE_DEGRADED, v1::HEALTH_ACTION_DRAIN);
  }
}

// Corrected ECC errors this frequent often come before uncorrectable ones.
void AddCorrectedRate(const Snapshot& start, const Snapshot& end, const EccCounters& window,
                      v1::DeviceHealth& h) {
  const double minutes = static_cast<double>((end.device_time - start.device_time).count()) / 60e9;
  const std::uint64_t corrected = window.mem_corrected + window.sram_corrected;
  if (corrected == 0 || minutes <= 0) return;
  const double rate = static_cast<double>(corrected) / minutes;
  const bool many = rate >= kCorrectedEccPerMinute;
  char text[120];
  std::snprintf(text, sizeof text, "%.1f corrected ECC errors per minute (%s)", rate,
                many ? "10 or more" : "fewer than 10");
  AddReason(h, "ecc_corrected_rate", text, many ? v1::HEALTH_STATE_DEGRADED : v1::HEALTH_STATE_OK,
            many ? v1::HEALTH_ACTION_DRAIN : v1::HEALTH_ACTION_WATCH);
}

// The worst first; the state and action are the worst any reason asks for.
void Conclude(v1::DeviceHealth& h) {
  std::stable_sort(h.mutable_reasons()->begin(), h.mutable_reasons()->end(),
                   [](const v1::HealthReason& x, const v1::HealthReason& y) {
                     return x.state() != y.state() ? x.state() > y.state()
                                                   : x.action() > y.action();
                   });
  v1::HealthState state = v1::HEALTH_STATE_OK;
  v1::HealthAction action = v1::HEALTH_ACTION_NONE;
  for (const v1::HealthReason& r : h.reasons()) {
    state = std::max(state, r.state());
    action = std::max(action, r.action());
  }
  h.set_state(state);
  h.set_action(action);
  h.set_advice(HealthAdvice(action));
}

}  // namespace

v1::DeviceHealth DeviceHealthOf(const Snapshot& start, const Snapshot& end, std::size_t device,
                                bool reset, const std::string& corrected_unavailable) {
  v1::DeviceHealth h;
  h.set_neuron_device_index(static_cast<std::uint32_t>(device));
  const DeviceCounters& e = end.devices[device];
  const DeviceCounters zero;
  const DeviceCounters& b = reset || device >= start.devices.size() ? zero : start.devices[device];
  wire::PowerToProto(e.power, *h.mutable_power());
  h.set_errors_unavailable(e.errors_unavailable);
  h.set_errors_missing(e.errors_missing);
  h.set_kernel_log_unavailable(e.kernel_log_unavailable);
  wire::HardwareErrorsToProto(e.errors, *h.mutable_errors_total());
  wire::HardwareErrorsToProto(e.errors.Minus(b.errors), *h.mutable_errors());
  if (!e.present) {
    AddReason(h, "not_responding", "the device does not answer", v1::HEALTH_STATE_FAILED,
              v1::HEALTH_ACTION_RESET);
  } else {
    AddDriverReasons(e.errors, h);
    if (!e.unhealthy_components.empty()) {
      std::string names;
      for (const std::string& c : e.unhealthy_components) names += (names.empty() ? "" : ", ") + c;
      AddReason(h, "unhealthy_component", "the firmware reports unhealthy components: " + names,
                v1::HEALTH_STATE_DEGRADED, v1::HEALTH_ACTION_DRAIN);
    }
    AddKernelLogReasons(e.errors, e.errors_unavailable, h);
    if (corrected_unavailable.empty()) AddCorrectedRate(start, end, e.ecc.Minus(b.ecc), h);
  }
  Conclude(h);
  return h;
}

}  // namespace neuronmon::daemon
