#include "exporter/health_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "proto/common/duration.h"
#include "proto/common/terminal_text.h"
#include "proto/names/names.h"

namespace neuronmon::exporter {
namespace {

struct InstanceDevices {
  std::string_view type;
  std::uint32_t devices;
};

// AWS's figures per instance type (the trn1, trn2 and inf2 architecture pages).
constexpr InstanceDevices kInstanceDevices[] = {
    {"trn1.2xlarge", 1},   {"trn1.32xlarge", 16},  {"trn1n.32xlarge", 16},
    {"trn2.48xlarge", 16}, {"trn2u.48xlarge", 16}, {"inf2.xlarge", 1},
    {"inf2.8xlarge", 1},   {"inf2.24xlarge", 6},   {"inf2.48xlarge", 12},
};

std::string Plural(std::uint32_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "ND3 failed: 15 uncorrectable HBM ECC errors since the driver loaded".
std::string DeviceReason(const v1::DeviceHealth& h) {
  std::string out =
      "ND" + std::to_string(h.neuron_device_index()) + " " + HealthStateName(h.state());
  if (!h.reasons().empty()) out += ": " + h.reasons(0).text();
  if (h.reasons_size() > 1) out += " (+" + std::to_string(h.reasons_size() - 1) + " more)";
  return out;
}

// Milliseconds are enough, and a whole number prints as an integer, as AWS's JSON does.
nlohmann::ordered_json Rounded(double v) {
  const double s = std::round(v * 1000) / 1000;
  if (s == std::floor(s) && std::abs(s) < 1e15) return static_cast<std::int64_t>(s);
  return s;
}

}  // namespace

const char* ActiveOutcomeName(ActiveOutcome outcome) {
  switch (outcome) {
    case ActiveOutcome::kPassed:
      return "passed";
    case ActiveOutcome::kFailed:
      return "failed";
    case ActiveOutcome::kUnknown:
      return "unknown";
    case ActiveOutcome::kDeviceBusy:
      return "device_busy";
    case ActiveOutcome::kSkipped:
      return "skipped";
  }
  return "unknown";
}

std::optional<std::uint32_t> ExpectedDevices(const std::string& instance_type) {
  for (const InstanceDevices& i : kInstanceDevices) {
    if (i.type == instance_type) return i.devices;
  }
  return std::nullopt;
}

CheckResult EvaluateCheck(const CheckInput& in, const CheckOptions& o) {
  CheckResult r;
  r.source = in.source;
  std::vector<std::string> unhealthy, unknown, notes;
  std::string type = in.instance_type;
  if (in.inventory && !in.inventory->instance_info().instance_type().empty()) {
    type = in.inventory->instance_info().instance_type();
  }
  r.expected_devices = o.expect_devices ? o.expect_devices : ExpectedDevices(type);
  const std::string of_type = type.empty() ? "" : " (" + type + ")";
  if (!in.inventory) {
    if (r.expected_devices && *r.expected_devices > 0) {
      unhealthy.push_back("0 of " + Plural(*r.expected_devices, "device", "devices") + of_type +
                          ": " + in.unreachable);
    } else {
      unknown.push_back(in.unreachable);
    }
  } else {
    const v1::Inventory& inv = *in.inventory;
    r.devices = static_cast<std::uint32_t>(inv.devices_size());
    if (r.expected_devices && r.devices < *r.expected_devices) {
      unhealthy.push_back(std::to_string(r.devices) + " of " +
                          Plural(*r.expected_devices, "device", "devices") + of_type);
    }
    // Free cores: every device's cores but those a process holds.
    std::set<std::uint32_t> free;
    for (const v1::Device& d : inv.devices()) free.insert(d.core_ids().begin(), d.core_ids().end());
    for (const v1::Process& p : inv.processes()) {
      if (p.no_datastore()) continue;  // a monitoring tool, not a runtime: it holds no core
      for (std::uint32_t c : p.core_ids()) free.erase(c);
    }
    r.free_cores = static_cast<std::uint32_t>(free.size());
    if (o.min_free_cores && *r.free_cores < *o.min_free_cores) {
      unhealthy.push_back(Plural(*r.free_cores, "free NeuronCore", "free NeuronCores") + ", " +
                          std::to_string(*o.min_free_cores) + " required");
    }
    const v1::DeviceHealthStats* health = in.report && in.report->system().has_device_health()
                                              ? &in.report->system().device_health()
                                              : nullptr;
    if (health == nullptr) {
      unknown.push_back(in.report ? "the report holds no device health"
                                  : "no report: " + in.unreachable);
    } else if (!health->error().empty()) {
      unknown.push_back("device health: " + health->error());
    } else {
      std::map<std::uint32_t, const v1::DeviceHealth*> by_index;
      for (const v1::DeviceHealth& h : health->devices()) by_index[h.neuron_device_index()] = &h;
      for (const v1::Device& d : inv.devices()) {
        const auto it = by_index.find(d.index());
        const v1::HealthState state =
            it == by_index.end() ? v1::HEALTH_STATE_UNSPECIFIED : it->second->state();
        switch (state) {
          case v1::HEALTH_STATE_OK:
            ++r.ok;
            break;
          case v1::HEALTH_STATE_DEGRADED:
            ++r.degraded;
            break;
          case v1::HEALTH_STATE_FAILED:
            ++r.failed;
            break;
          default:
            ++r.unknown;
            unknown.push_back("ND" + std::to_string(d.index()) + ": health not known");
            continue;
        }
        if (state >= o.fail_on) {
          unhealthy.push_back(DeviceReason(*it->second));
        } else if (state != v1::HEALTH_STATE_OK) {
          notes.push_back(DeviceReason(*it->second) + " (not failing: --fail-on failed)");
        }
      }
    }
    if (in.report) {
      const Nanos age = in.now - FromUnixNanos(in.report->wall_time_unix_ns());
      r.sample_age_seconds = std::max(0.0, std::chrono::duration<double>(age).count());
      if (age > o.max_age) {
        unknown.push_back("the newest sample is " + FormatDuration(age) + " old (--max-age " +
                          FormatDuration(o.max_age) + ")");
      }
    }
  }
  r.outcome = !unhealthy.empty() ? CheckOutcome::kUnhealthy
              : !unknown.empty() ? CheckOutcome::kUnknown
                                 : CheckOutcome::kHealthy;
  for (auto* list : {&unhealthy, &unknown, &notes}) {
    for (std::string& s : *list) r.reasons.push_back(SanitizeForTerminal(s));
  }
  return r;
}

void AddActive(CheckResult* r, ActiveResult active) {
  active.reason = SanitizeForTerminal(active.reason);  // the JSON's too
  active.command = SanitizeForTerminal(active.command);
  std::string reason = active.reason;
  switch (active.outcome) {
    case ActiveOutcome::kFailed:
      r->outcome = CheckOutcome::kUnhealthy;
      r->reasons.insert(r->reasons.begin(), std::move(reason));
      break;
    case ActiveOutcome::kUnknown:
    case ActiveOutcome::kDeviceBusy:
      if (r->outcome == CheckOutcome::kHealthy) r->outcome = CheckOutcome::kUnknown;
      r->reasons.insert(r->reasons.begin() + (r->outcome == CheckOutcome::kUnhealthy ? 1 : 0),
                        std::move(reason));
      break;
    case ActiveOutcome::kPassed:
    case ActiveOutcome::kSkipped:
      r->reasons.push_back(std::move(reason));
      break;
  }
  r->active = std::move(active);
}

std::string CheckLine(const CheckResult& r) {
  std::string line = r.outcome == CheckOutcome::kHealthy     ? "healthy: "
                     : r.outcome == CheckOutcome::kUnhealthy ? "unhealthy: "
                                                             : "unknown: ";
  if (r.outcome == CheckOutcome::kHealthy) {
    line += Plural(r.devices, "device", "devices") +
            (r.degraded == 0 ? std::string(" ok")
                             : " (" + std::to_string(r.ok) + " ok, " + std::to_string(r.degraded) +
                                   " degraded)");
    if (r.free_cores) line += ", " + Plural(*r.free_cores, "free NeuronCore", "free NeuronCores");
    if (!r.reasons.empty()) line += "; ";
  }
  for (std::size_t i = 0; i < r.reasons.size(); ++i) line += (i ? "; " : "") + r.reasons[i];
  if (!r.source.empty()) line += " (" + r.source + ")";
  return line;
}

std::string CheckJson(const CheckResult& r) {
  const char* outcome = r.outcome == CheckOutcome::kHealthy     ? "healthy"
                        : r.outcome == CheckOutcome::kUnhealthy ? "unhealthy"
                                                                : "unknown";
  nlohmann::ordered_json j = {{"outcome", outcome},
                              {"exit_code", static_cast<int>(r.outcome)},
                              {"source", r.source},
                              {"reasons", r.reasons},
                              {"devices", r.devices},
                              {"expected_devices", nullptr},
                              {"ok", r.ok},
                              {"degraded", r.degraded},
                              {"failed", r.failed},
                              {"unknown", r.unknown},
                              {"free_cores", nullptr},
                              {"sample_age_seconds", nullptr}};
  if (r.expected_devices) j["expected_devices"] = *r.expected_devices;
  if (r.free_cores) j["free_cores"] = *r.free_cores;
  j["active"] = nullptr;
  if (r.active) {
    const ActiveResult& a = *r.active;
    nlohmann::ordered_json aj = {{"result", ActiveOutcomeName(a.outcome)},
                                 {"reason", a.reason},
                                 {"command", a.command},
                                 {"ranks", a.ranks},
                                 {"bus_bandwidth", nullptr},
                                 {"reference", nullptr},
                                 {"floor", nullptr},
                                 {"seconds", Rounded(a.seconds)}};
    if (a.busbw) aj["bus_bandwidth"] = Rounded(*a.busbw);
    if (a.reference) aj["reference"] = Rounded(*a.reference);
    if (a.floor) aj["floor"] = Rounded(*a.floor);
    j["active"] = std::move(aj);
  }
  if (r.sample_age_seconds) j["sample_age_seconds"] = Rounded(*r.sample_age_seconds);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace neuronmon::exporter
