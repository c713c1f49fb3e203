// Waiting for a client event of one kind in tests: the events before it are skipped.
#pragma once

#include <chrono>
#include <optional>

#include "client/client.h"

namespace neuronmon::testing {

// The next event of `kind` within `timeout`, or nullopt.
inline std::optional<client::Event> NextOf(client::Client& c, client::Event::Kind kind,
                                           Nanos timeout = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::optional<client::Event> e = c.Next(std::chrono::milliseconds(50));
    if (e && e->kind == kind) return e;
  }
  return std::nullopt;
}

}  // namespace neuronmon::testing
