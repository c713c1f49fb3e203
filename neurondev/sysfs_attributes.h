// Parsers of single attribute files of the driver's sysfs tree, pure and exposed for tests: a
// counter, connected_devices, the power line and the tensor engine's counters. Each accepts the
// value with or without a trailing newline; its errors quote the text. Thread-safe.
#pragma once

#include <cstdint>
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

// `text` without its trailing newline, if it has one.
std::string_view TrimNewline(std::string_view text);

}  // namespace neuronmon::neurondev
