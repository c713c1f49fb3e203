// HostileReplays: for `soak --hostile-host`, recordings anyone could hand a user — headers claiming
// a 1 ns or an overflowing period, a garbage file, a recording at the shortest period longer than
// a replay keeps, the same cut mid-chunk — replayed in a loop with `neuron-monitor --replay`, as a
// user would, each run's peak RSS (VmHWM, read every 10 ms while it runs) and outcome kept. Run()
// plays one after another, with a pause between runs, until the phase leaves kRunning. Not
// thread-safe: one thread runs it.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench/soak/options.h"

namespace neuronmon::soak {

struct ReplayTally {
  std::uint64_t runs = 0;
  std::uint64_t refused = 0;    // exited non-zero with a message on stderr
  std::uint64_t played = 0;     // exited 0
  std::uint64_t unclear = 0;    // exited non-zero without a message, or killed by a signal
  std::uint64_t overran = 0;    // still running after the time limit, killed
  std::uint64_t cut_short = 0;  // killed as the soak ended (not counted in runs)
  double peak_rss_mib = 0;      // the largest of any run
  std::string peak_recording;   // the recording that run played
  std::map<std::string, std::string> first_message;  // per recording: its first stderr line
};

class HostileReplays {
 public:
  // Writes the recordings under `dir` (a simulated `o.device`); false with `error` when it cannot.
  // `replayer`: the neuron-monitor binary.
  bool Prepare(const std::filesystem::path& dir, const SoakOptions& o, std::string replayer,
               std::string& error);
  void Run(const std::atomic<Phase>& phase);
  // Safe to call once Run has returned.
  const ReplayTally& tally() const { return tally_; }

 private:
  // Plays `recording` once and counts how it ended.
  void Play(const std::filesystem::path& recording, const std::atomic<Phase>& phase);

  std::filesystem::path dir_;
  std::string replayer_;
  std::vector<std::filesystem::path> recordings_;
  ReplayTally tally_;
};

// The neuron-monitor next to `daemon_binary` in a build tree (../exporter/neuron-monitor) or an
// installation (the same directory, or ../bin from sbin); empty when there is none.
std::string FindReplayer(const std::string& daemon_binary);

}  // namespace neuronmon::soak
