// One event (docs/events.md) as the JSON object /events and `neuron-monitor --events` print, on
// one line without a newline: seq, time (RFC 3339, UTC, milliseconds), sample_seq, kind, subject,
// before, after, summary, evidence, reasons. Strings are escaped (invalid UTF-8 replaced), so a
// runtime's tag cannot break the line. Pure; thread-safe.
#pragma once

#include <string>

#include "neuronmon/v1/event.pb.h"

namespace neuronmon {

std::string EventJson(const v1::Event& event);

}  // namespace neuronmon
