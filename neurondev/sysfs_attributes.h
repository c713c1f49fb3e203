// Parsers of single attribute files of the driver's sysfs tree, pure and exposed for tests: a
// counter, connected_devices, the power line and the tensor engine's counters. Each accepts the
// value with or without a trailing newline; its errors quote the text. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "neurondev/tree_reading.h"
#include "proto/common/status.h"

namespace neuronmon::neurondev {

// `connected_devices` is "\n" when a device has no neighbours; an empty file is the driver's
// overflow (the list did not fit) and an error.
Result<std::uint64_t> ParseCounter(std::string_view text);
Result<std::vector<int>> ParseConnectedDevices(std::string_view text);
Result<PowerReading> ParsePower(std::string_view text);
Result<std::vector<PeCounters>> ParsePeCounters(std::string_view text);

// Why `now` cannot be a later reading of the same core's tensor-engine counters than `before`
// (empty: it can). The driver reads each 64-bit counter as two 32-bit halves, so one read can be
// torn by 2^32 either way: a row count or row group that changed, a counter that went backwards,
// or one row whose cycles (active + idle) grew differently from the others' by 2^31 or more —
// every row group counts the same clock. Without `before`, only the row groups' order is checked.
std::string PeCountersTorn(const std::vector<PeCounters>& before,
                           const std::vector<PeCounters>& now);

// health_status/unhealthy_components: component names ("hbm", "sram", "link_3", ...) separated
// by newlines, commas or spaces; none when healthy. Each name is cut to 64 characters with
// anything but [A-Za-z0-9_.-] replaced by '?', and at most 32 are kept.
std::vector<std::string> ParseComponents(std::string_view text);

// `text` without its trailing newline, if it has one.
std::string_view TrimNewline(std::string_view text);

}  // namespace neuronmon::neurondev
