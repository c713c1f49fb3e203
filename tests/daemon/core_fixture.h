// Test helpers shared by the tests of the daemon's pure core (subscriptions, report math, the
// shared-frame cache): a Subscribe request, a small trn2-like inventory and a snapshot of it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "neuronmon/v1/envelope.pb.h"
#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/snapshot.h"

namespace neuronmon::daemon::testing {

// A Subscribe for `groups`, each with its period in milliseconds, and `tags` as the tag filter.
v1::Subscribe Request(std::initializer_list<std::pair<v1::Group, int>> groups,
                      std::string tags = "");

// A small trn2-like inventory: 2 devices x 4 logical cores, LNC=2, 192 host vCPUs.
v1::Inventory Inventory();

// A snapshot of Inventory() at `seconds_at` with counters at zero and one runtime (pid 4242,
// tag "llama-rank0", cores 0-3).
Snapshot Base(std::uint64_t seq, int seconds_at);

}  // namespace neuronmon::daemon::testing
