#include "bench/soak/hostile_replays.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <thread>

#include "bench/soak/daemon_process.h"
#include "bench/soak/hostile_host.h"
#include "proto/archive/archive.h"
#include "simdev/instance.h"

namespace neuronmon::soak {
namespace {

using namespace std::chrono_literals;

constexpr auto kRunLimit = 60s;       // a replay still running after this overran
constexpr auto kPause = 3s;           // between two runs, so the loop is not a CPU hog
constexpr int kLongSnapshots = 1500;  // at 10 ms: more than a replay keeps (1,200)

// Writes `snapshots` snapshots of `instance`, `period` apart, under a header claiming
// `claimed_period` ns.
Status WriteRecording(const std::filesystem::path& path, simdev::Instance& instance,
                      std::uint64_t claimed_period, Nanos period, int snapshots) {
  v1::ArchiveHeader header;
  header.set_daemon_version("soak");
  header.set_description("a hostile recording");
  header.set_base_period_ns(claimed_period);
  header.set_recorder("soak --hostile-host");
  auto writer = archive::ArchiveWriter::Create(path.string(), header);
  if (!writer.ok()) return writer.status();
  const WallTime wall0 = WallTime(std::chrono::seconds(1'790'000'000));
  for (int i = 0; i < snapshots; ++i) {
    const Nanos t = 60s + period * i;
    Snapshot s = instance.Read(t);
    s.seq = static_cast<std::uint64_t>(i) + 1;
    s.mono = MonoTime(t);
    s.wall = wall0 + (t - 60s);
    if (Status st = (*writer)->Append(s, instance.Inventory(t), "hostile"); !st.ok()) return st;
  }
  return (*writer)->Close();
}

// The peak resident set of `pid` so far (VmHWM), in MiB; 0 once it has exited. wait4's ru_maxrss
// cannot tell: a spawned child's counts the RSS soak had when it was spawned.
double PeakRssMib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmHWM:")) return std::strtod(line.c_str() + 6, nullptr) / 1024;
  }
  return 0;
}

// The first line of `file`, with `dir`'s path left out of it.
std::string FirstLine(const std::filesystem::path& file, const std::string& dir) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  for (std::size_t at; (at = line.find(dir)) != std::string::npos;) line.erase(at, dir.size());
  return line.substr(0, 200);
}

}  // namespace

std::string FindReplayer(const std::string& daemon_binary) {
  const std::filesystem::path d = std::filesystem::path(daemon_binary).parent_path();
  for (const auto& candidate : {d.parent_path() / "exporter" / "neuron-monitor",
                                d / "neuron-monitor", d.parent_path() / "bin" / "neuron-monitor"}) {
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

bool HostileReplays::Prepare(const std::filesystem::path& dir, const SoakOptions& o,
                             std::string replayer, std::string& error) {
  dir_ = dir;
  replayer_ = std::move(replayer);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  Result<std::unique_ptr<simdev::Instance>> instance = SimulatedInstance(o);
  if (!instance.ok()) {
    error = instance.status().message();
    return false;
  }
  struct Made {
    const char* name;
    std::uint64_t claimed;
    int snapshots;
  };
  const Made made[] = {
      {"period-1ns.nmrec", 1, 60},
      {"period-overflow.nmrec", std::numeric_limits<std::uint64_t>::max(), 60},
      {"period-10ms-long.nmrec", 10'000'000, kLongSnapshots},
  };
  for (const Made& m : made) {
    const std::filesystem::path path = dir / m.name;
    if (Status s = WriteRecording(path, **instance, m.claimed, 10ms, m.snapshots); !s.ok()) {
      error = s.message();
      return false;
    }
    recordings_.push_back(path);
  }
  // The long one cut inside its last chunk, and bytes that are no recording at all.
  const std::filesystem::path torn = dir / "torn.nmrec";
  std::filesystem::copy_file(recordings_.back(), torn, ec);
  if (!ec) std::filesystem::resize_file(torn, std::filesystem::file_size(torn) * 2 / 3, ec);
  std::ofstream garbage(dir / "garbage.nmrec", std::ios::binary);
  for (std::uint32_t i = 0, x = 2463534242u; i < (1u << 20); ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    garbage.put(static_cast<char>(x));
  }
  garbage.close();
  recordings_.push_back(torn);
  recordings_.push_back(dir / "garbage.nmrec");
  if (ec || !garbage) {
    error = "cannot write the hostile recordings in " + dir.string();
    return false;
  }
  return true;
}

void HostileReplays::Play(const std::filesystem::path& recording, const std::atomic<Phase>& phase) {
  const std::filesystem::path err = dir_ / "stderr";
  std::string error;
  const pid_t pid =
      SpawnChild({replayer_, "--replay", recording.string()}, "/dev/null", err, error);
  if (pid < 0) {
    ++tally_.unclear;
    tally_.first_message[recording.filename()] = error;
    return;
  }
  const auto deadline = Steady::now() + kRunLimit;
  int status = 0;
  bool killed = false, cut = false;
  double rss = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    rss = std::max(rss, PeakRssMib(pid));
    const bool overran = Steady::now() > deadline;
    if (!killed && (overran || phase.load() == Phase::kStopped)) {
      ::kill(pid, SIGKILL);
      killed = true;
      cut = !overran;
    }
    std::this_thread::sleep_for(10ms);
  }
  if (rss > tally_.peak_rss_mib) {
    tally_.peak_rss_mib = rss;
    tally_.peak_recording = recording.filename();
  }
  if (cut) {  // the soak ended under it: not a run to judge
    ++tally_.cut_short;
    return;
  }
  const std::string message = FirstLine(err, dir_.string() + "/");
  auto& first = tally_.first_message[recording.filename()];
  if (first.empty()) first = message.empty() ? DescribeWaitStatus(status) : message;
  ++tally_.runs;
  if (killed) {
    ++tally_.overran;
    return;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    ++tally_.played;
  } else if (WIFEXITED(status) && !message.empty()) {
    ++tally_.refused;
  } else {
    ++tally_.unclear;
  }
}

void HostileReplays::Run(const std::atomic<Phase>& phase) {
  for (std::size_t i = 0; phase.load() == Phase::kRunning; ++i) {
    Play(recordings_[i % recordings_.size()], phase);
    for (auto until = Steady::now() + kPause;
         Steady::now() < until && phase.load() == Phase::kRunning;) {
      std::this_thread::sleep_for(50ms);
    }
  }
}

}  // namespace neuronmon::soak
