#include "proto/names/event_json.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "proto/common/clock.h"
#include "proto/names/names.h"

namespace neuronmon {
namespace {

// A whole number as an integer (nlohmann would print 3.0), any other as it is.
nlohmann::ordered_json Number(double v) {
  if (v == static_cast<double>(static_cast<std::int64_t>(v)) && v > -9e15 && v < 9e15) {
    return static_cast<std::int64_t>(v);
  }
  return v;
}

}  // namespace

std::string EventJson(const v1::Event& event) {
  nlohmann::ordered_json subject = nlohmann::ordered_json::object();
  const v1::EventSubject& s = event.subject();
  if (s.instance()) subject["instance"] = true;
  if (s.has_neuron_device_index()) subject["neuron_device_index"] = s.neuron_device_index();
  if (s.has_neuroncore_index()) subject["neuroncore_index"] = s.neuroncore_index();
  if (s.pid() != 0) subject["pid"] = s.pid();
  if (!s.runtime_tag().empty()) subject["runtime_tag"] = s.runtime_tag();
  if (!s.job().empty()) subject["job"] = s.job();
  nlohmann::ordered_json evidence = nlohmann::ordered_json::array();
  for (const v1::Evidence& e : event.evidence()) {
    nlohmann::ordered_json item = {
        {"name", e.name()}, {"value", Number(e.value())}, {"unit", e.unit()}};
    if (!e.comparison().empty()) {
      item["threshold"] = Number(e.threshold());
      item["comparison"] = e.comparison();
    }
    evidence.push_back(std::move(item));
  }
  nlohmann::ordered_json reasons = nlohmann::ordered_json::array();
  for (const v1::HealthReason& r : event.reasons()) {
    reasons.push_back({{"code", r.code()},
                       {"text", r.text()},
                       {"state", HealthStateName(r.state())},
                       {"action", HealthActionName(r.action())}});
  }
  const WallTime when = FromUnixNanos(event.unix_ns());
  const nlohmann::ordered_json out = {{"seq", event.seq()},
                                      {"time", FormatUtcMillis(when)},
                                      {"sample_seq", event.sample_seq()},
                                      {"kind", EventKindName(event.kind())},
                                      {"subject", std::move(subject)},
                                      {"before", event.before()},
                                      {"after", event.after()},
                                      {"summary", event.summary()},
                                      {"evidence", std::move(evidence)},
                                      {"reasons", std::move(reasons)}};
  return out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace neuronmon
