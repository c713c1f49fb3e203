// Cluster: comparing many hosts of one or more multi-node jobs, from what each host's daemon says
// about itself (its light subscription: Report.host_summary and the instance verdict). Hosts
// running the same command line form a job; within a job of three or more reporting hosts whose
// median host spends much time in collectives (it waits there), a host whose NeuronCore
// utilization stands well above the job's median — or well below it while it spends little time
// in collectives itself — is the job's straggler; a host whose verdict is
// `hang` makes the job hang, and the host whose verdict names the rank that stopped joining is
// the culprit (read from the verdict's structure, Finding.straggler and Finding.hang — never from
// its summary). Also: the hosts file of `neuron-top --hosts`. Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "neuronmon/v1/report.pb.h"
#include "proto/common/status.h"

namespace neuronmon::client {

enum class HostState {
  kConnecting,  // never connected yet
  kUp,          // streaming
  kDown,        // lost or unreachable; retried with backoff
};

// What the cluster view knows of one host.
struct ClusterHost {
  std::string address;  // "host:port" as the user gave it
  HostState state = HostState::kConnecting;
  std::string error;             // why it is down (terminal-safe)
  double retry_in_seconds = -1;  // while down: when the next attempt is due (-1: unknown)
  std::string name;              // the instance's name, else its id, else the address
  std::string instance_type;     // from the Welcome
  std::uint32_t devices = 0;
  bool has_summary = false;  // a report with a host summary arrived
  v1::HostSummary summary;
  v1::Finding verdict;  // the host's own instance verdict (kind UNSPECIFIED: none yet)
  std::uint64_t reports = 0;
  std::uint64_t bytes = 0;  // serialized report bytes received
};

struct ClusterThresholds {
  double straggler_gap_points = 12;  // utilization apart from the job's median
  double peer_share = 0.15;          // the job's median share of time in collectives
  double own_share_ratio = 0.6;  // a less busy straggler's share below this fraction of the median
  std::size_t min_hosts = 3;     // reporting hosts a job needs to be compared
};

// One job: the hosts running the same command line (hosts without applications share job "").
struct ClusterJob {
  std::string command;
  std::vector<std::size_t> hosts;  // indices into the host list, in list order
  double median_utilization = 0;
  double median_collective_share = 0;
};

struct ClusterAnalysis {
  std::vector<ClusterJob> jobs;
  // Per host (same order as the input): the verdict the cluster view shows — the host's own, or
  // `straggler` when the comparison singles it out, or `hang` for every host of a hung job.
  std::vector<v1::Finding> host_verdicts;
  // The cluster's verdict: the worst of all, naming the node ("node ip-10-0-3-17: ...").
  v1::Finding verdict;
};

ClusterAnalysis AnalyzeCluster(const std::vector<ClusterHost>& hosts,
                               const ClusterThresholds& thresholds = {});

// One host of a hosts file, with the settings its line gives ("" where it gives none: the
// command line's then apply).
struct HostsFileLine {
  std::string address;      // "host:port" as written ("[::1]:9414" for IPv6)
  std::string token_file;   // token_file=PATH: this host's token instead of --token-file's
  std::string server_name;  // server_name=NAME: TLS, the certificate naming NAME
  std::string tls_ca;       // tls_ca=PATH: TLS, the daemon's certificate signed by a CA in PATH
  bool operator==(const HostsFileLine&) const = default;
};

// The most bytes of a path, and of a server name, a hosts file line may give.
inline constexpr std::size_t kMaxHostsFilePath = 4096;
inline constexpr std::size_t kMaxServerName = 253;

// Parses a hosts file: one `HOST:PORT [token_file=PATH] [server_name=NAME] [tls_ca=PATH]` per
// line, fields separated by blanks, each setting at most once; blank lines and `#` comments
// ignored; at most `max_hosts`. A relative PATH is taken from the directory of `source` (the
// file's path). Errors name the line ("hosts:3: ..."): a bad address, an unknown setting, one
// given twice, one without `=VALUE`, a path longer than kMaxHostsFilePath, a server name longer
// than kMaxServerName or with characters no host name has, control characters.
Result<std::vector<HostsFileLine>> ParseHostsFile(std::string_view text, const std::string& source,
                                                  std::size_t max_hosts);
// Splits "--connect h1:p,h2:p" into addresses (empty items are errors).
Result<std::vector<std::string>> SplitHostList(std::string_view list, std::size_t max_hosts);

}  // namespace neuronmon::client
