// One soak run: start the daemon in a temp dir, run every load component against it for
// --duration, stop the daemon while the clients are still connected (they read its goodbye), then
// the clients, and print the verdict. Threads: one per load component (the two abusers, the
// scraper, the top client) and the caller's, which watches the daemon; each component's tally is
// guarded by its own mutex. Everything opened is closed on the way out.
#pragma once

#include <signal.h>

#include "bench/soak/daemon_process.h"
#include "bench/soak/options.h"

namespace neuronmon::soak {

// Starts the daemon in `dir`, runs the load, reports. Returns the exit status: 0 when every
// criterion held, 1 when one failed, 2 when the daemon could not be prepared or started (its log
// printed to stderr). REQUIRES: `stop_signals` are blocked in the calling thread (and so in the
// threads it starts); one of them ends the run early, still reporting.
int Soak(const SoakOptions& o, const TempDir& dir, const sigset_t& stop_signals);

}  // namespace neuronmon::soak
