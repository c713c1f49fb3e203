// Device health: whether each device is fit to stay in the pool — ok, degraded or failed — with
// the reasons and what to do (docs/health.md). Read from the driver's error counters (cumulative
// since it loaded, so a device that once had an uncorrectable error stays failed until a reset)
// and the window's corrected-error rate. Pure.
#pragma once

#include <cstdint>

#include "neuronmon/v1/report.pb.h"
#include "proto/common/snapshot.h"

namespace neuronmon::daemon {

// Corrected ECC errors per minute over the window that make a device degraded: corrected errors
// this frequent often come before uncorrectable ones.
inline constexpr double kCorrectedEccPerMinute = 10;

// The health of `device` at `end`, with the errors of the window from `start` (`reset`: the
// counters restarted in between, so the window's errors are the counters themselves).
// `corrected_unavailable`: why corrected ECC errors cannot be counted (empty: they can).
v1::DeviceHealth DeviceHealthOf(const Snapshot& start, const Snapshot& end, std::size_t device,
                                bool reset, const std::string& corrected_unavailable);

// The advice for the strongest action, in words.
const char* HealthAdvice(v1::HealthAction action);

}  // namespace neuronmon::daemon
