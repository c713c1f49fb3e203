// EmbeddedSimulator: the LocalDaemonStarter of neuronmon's programs — the daemon itself
// (daemon::EmbeddedDaemon) on a thread of this process, simulating the device. The one place where
// client code reaches the daemon; programs pass it in Endpoint::start_local.
#pragma once

#include "client/client.h"
#include "client/replay_source.h"

namespace neuronmon::client {

// `log_fd`: where the daemon logs warnings; -1: nowhere.
LocalDaemonStarter EmbeddedSimulator(int log_fd = -1);

// Opens recordings with the daemon's replayer (daemon/core/archive/replay.h), for --replay.
ReplayOpener EmbeddedReplay();

}  // namespace neuronmon::client
