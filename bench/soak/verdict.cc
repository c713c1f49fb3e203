#include "bench/soak/verdict.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>

#include "bench/soak/client_io.h"
#include "bench/soak/figures.h"

namespace neuronmon::soak {
namespace {

constexpr double kMaxDrift = 0.05;
constexpr double kMaxLagP99Ms = 50;
constexpr double kMemoryMaxMib = 256;  // packaging/systemd/neuron-monitord.service: MemoryMax=

struct Verdict {
  std::vector<std::string> failed;
  // Prints "figure  ok|FAIL  text" and records a failure.
  void Line(const char* figure, bool ok, const std::string& text) {
    std::printf("%-18s %-4s  %s\n", figure, ok ? "ok" : "FAIL", text.c_str());
    if (!ok) failed.push_back(figure);
  }
  // Prints a figure that is not judged.
  void Info(const char* figure, const std::string& text) {
    std::printf("%-18s %-4s  %s\n", figure, "", text.c_str());
  }
};

double Drift(double start, double end) { return start > 0 ? (end - start) / start : 0; }

void PrintDaemonFigures(const Results& r, Verdict& v) {
  const Watched& w = r.watched;
  v.Line("daemon", !w.died && r.stop.clean,
         (w.died ? "died during the run: " + *w.died : "running throughout") + "; " +
             r.stop.description + Format(" (%.1f s)", r.stop.seconds));
  const double rss = Drift(w.start.rss_mib, w.end.rss_mib);
  v.Line("daemon RSS", std::abs(rss) <= kMaxDrift,
         Format("start %.1f MiB, end %.1f MiB (%+.1f%%), max %.1f MiB", w.start.rss_mib,
                w.end.rss_mib, 100 * rss, w.peak.rss_mib));
  const double fds = Drift(w.start.fds, w.end.fds);
  v.Line("daemon fds", std::abs(fds) <= kMaxDrift,
         Format("start %.0f, end %.0f (%+.1f%%), max %.0f; minus soak's open connections "
                "(below 0: not yet accepted): start %.0f, end %.0f",
                w.start.fds, w.end.fds, 100 * fds, w.peak.fds,
                w.start.fds - w.start.soak_connections, w.end.fds - w.end.soak_connections));
}

void PrintTopFigures(const TopTally& t, Verdict& v) {
  const double p99 = Percentile(t.lags_ms, 0.99);
  const auto worst = std::max_element(t.lags_ms.begin(), t.lags_ms.end());
  v.Line("top lag", !t.lags_ms.empty() && p99 <= kMaxLagP99Ms,
         Format("p50 %.1f ms, p99 %.1f ms, max %.1f ms (report %zu) over %zu live reports "
                "(not each connection's first)",
                Percentile(t.lags_ms, 0.5), p99, t.lags_ms.empty() ? 0.0 : *worst,
                static_cast<std::size_t>(worst - t.lags_ms.begin()) + 1, t.lags_ms.size()));
  v.Line("top stream", t.missing == 0 && t.out_of_order == 0 && t.errors == 0 && t.connections == 1,
         Format("%llu reports (%llu replayed), %llu gap notices, %llu missing without one, "
                "%llu out of order, %llu connection(s), %llu errors%s%s",
                static_cast<unsigned long long>(t.reports),
                static_cast<unsigned long long>(t.replayed),
                static_cast<unsigned long long>(t.gaps), static_cast<unsigned long long>(t.missing),
                static_cast<unsigned long long>(t.out_of_order),
                static_cast<unsigned long long>(t.connections),
                static_cast<unsigned long long>(t.errors),
                t.last_error.empty() ? "" : (" (" + t.last_error + ")").c_str(),
                t.shutdown_notice ? "; shutdown notice seen" : "; no shutdown notice"));
}

// How late the daemon took its samples, which the lag cannot show: a report's wall time is when
// its sample was taken, however late the sampler's timer fired. Each wall time's phase in the
// period is compared with the median phase (most samples are on time); a sample later than a whole
// period is skipped by the daemon, which shows as a longer interval between wall times.
void PrintSamplingFigures(const TopTally& t, Nanos period, Verdict& v) {
  const std::int64_t p = period.count();
  std::vector<double> phases;
  for (std::int64_t wall : t.walls_ns) phases.push_back(static_cast<double>(wall % p));
  const auto median = static_cast<std::int64_t>(Percentile(phases, 0.5));
  std::vector<double> late_ms;
  std::size_t long_intervals = 0;
  for (std::size_t i = 0; i < t.walls_ns.size(); ++i) {
    std::int64_t late = ((t.walls_ns[i] % p) - median + p + p / 2) % p - p / 2;  // [-p/2, p/2)
    late_ms.push_back(static_cast<double>(late) / 1e6);
    if (i > 0 && 2 * (t.walls_ns[i] - t.walls_ns[i - 1]) > 3 * p) ++long_intervals;
  }
  v.Info("top sampling",
         Format("samples late by p50 %.1f ms, p99 %.1f ms, max %.1f ms (against "
                "the median phase); %zu intervals over 1.5 periods",
                Percentile(late_ms, 0.5), Percentile(late_ms, 0.99),
                late_ms.empty() ? 0.0 : *std::max_element(late_ms.begin(), late_ms.end()),
                long_intervals));
}

void PrintScrapeFigures(const ScrapeTally& s, Verdict& v) {
  std::uint64_t failed = 0;
  for (const auto& [why, n] : s.failures) failed += n;
  v.Line(
      "scrapes", failed == 0 && s.ok > 0,
      Format("%llu of %llu succeeded; p50 %.1f ms, p99 %.1f ms; failures: %s",
             static_cast<unsigned long long>(s.ok), static_cast<unsigned long long>(s.ok + failed),
             Percentile(s.ms, 0.5), Percentile(s.ms, 0.99), Tallied(s.failures).c_str()));
}

std::string PerBehaviour(const StreamTally::PerBehaviour& counts) {
  std::string out;
  for (std::size_t b = 0; b < kBehaviours; ++b) {
    out += (b ? ", " : "") + std::string(kBehaviourNames[b]) + " " + std::to_string(counts[b]);
  }
  return out;
}

void PrintAbuseFigures(const StreamTally& s, const MetricsTally& m) {
  std::uint64_t started = 0, overran = 0;
  for (std::size_t b = 0; b < kBehaviours; ++b) started += s.started[b], overran += s.overran[b];
  std::printf("%-24s %llu: %s\n", "abusive connections", static_cast<unsigned long long>(started),
              PerBehaviour(s.started).c_str());
  std::printf("%-24s %s\n", "  closed by the daemon", PerBehaviour(s.closed_by_daemon).c_str());
  std::printf("%-24s %s\n", "  ended by soak", PerBehaviour(s.ended_by_soak).c_str());
  std::printf("%-24s %llu (open 10 s past the handshake or subscribe deadline, from connect)%s\n",
              "  deadline not kept", static_cast<unsigned long long>(overran),
              overran ? (": " + PerBehaviour(s.overran)).c_str() : "");
  std::printf("%-24s %s\n", "  errors received", Tallied(s.errors).c_str());
  std::printf("%-24s %s\n", "  notices received", Tallied(s.notices).c_str());
  std::printf(
      "%-24s %llu welcomes, %llu reports, %.1f MB read, %llu sends blocked, "
      "%llu undecodable frames; connect failures: %s\n",
      "  other", static_cast<unsigned long long>(s.welcomes),
      static_cast<unsigned long long>(s.reports), static_cast<double>(s.bytes_read) / 1e6,
      static_cast<unsigned long long>(s.sends_blocked),
      static_cast<unsigned long long>(s.bad_frames), Tallied(s.connect_failures).c_str());
  std::printf(
      "%-24s %llu connections, %llu closed by the daemon, %llu ended by soak (%llu past "
      "the request timeout); replies: %s; connect failures: %s\n",
      "metrics abuser", static_cast<unsigned long long>(m.connections),
      static_cast<unsigned long long>(m.closed_by_daemon),
      static_cast<unsigned long long>(m.ended_by_soak), static_cast<unsigned long long>(m.overran),
      Tallied(m.statuses).c_str(), Tallied(m.connect_failures).c_str());
}

// The daemon's own counters from the last scrape, one family a line.
void PrintDaemonCounters(const std::map<std::string, double>& counters) {
  std::map<std::string, std::string> families;
  for (const auto& [series, value] : counters) {
    if (series.starts_with("neuron_device_health{")) continue;  // judged apart (hostile host)
    const std::size_t brace = series.find('{');
    std::string& line = families[series.substr(0, brace)];
    const std::size_t quote = series.find('"');
    const std::string label = quote == std::string::npos
                                  ? std::string()
                                  : series.substr(quote + 1, series.rfind('"') - quote - 1) + " ";
    line += (line.empty() ? "" : ", ") + label + Format("%.0f", value);
  }
  for (const auto& [family, line] : families) {
    std::printf("%-24s %s\n", Shorten(family, "neuron_monitord_").c_str(), line.c_str());
  }
}

// Counts the daemon's log lines by severity, and the lines its Logger did not write (they lack its
// timestamp: a library writing to stderr past the daemon's rate limiter); shows the first of those.
void PrintDaemonLog(const std::vector<std::string>& lines) {
  std::size_t errors = 0, warnings = 0, foreign = 0;
  const std::string* first_foreign = nullptr;
  for (const std::string& l : lines) {
    errors += l.find(" error: ") != std::string::npos;
    warnings += l.find(" warn: ") != std::string::npos;
    if (!l.empty() && std::isdigit(static_cast<unsigned char>(l[0]))) continue;
    if (++foreign == 1) first_foreign = &l;
  }
  std::printf("%-24s %zu lines: %zu error, %zu warn, %zu not from its logger\n", "daemon log",
              lines.size(), errors, warnings, foreign);
  if (first_foreign) std::printf("  | %s\n", first_foreign->substr(0, 200).c_str());
}

}  // namespace

// The hostile host's criteria: no sampling tick missed, RSS under the unit's MemoryMax, and no
// device whose health a forged kernel-log line changed (every device "ok" at the last scrape).
void PrintHostileHostFigures(const Results& r, Verdict& v) {
  const auto& c = r.scrapes.daemon_counters;
  const auto missed = c.find("neuron_monitord_sampler_missed_ticks_total");
  v.Line("missed ticks", missed != c.end() && missed->second == 0,
         missed == c.end() ? "not scraped" : Format("%.0f", missed->second));
  v.Line("daemon RSS max", r.watched.peak.rss_mib < kMemoryMaxMib,
         Format("%.1f MiB (the unit's MemoryMax=%.0fM)", r.watched.peak.rss_mib, kMemoryMaxMib));
  int ok = 0, other = 0;
  for (const auto& [series, value] : c) {
    if (!series.starts_with("neuron_device_health{") || value != 1) continue;
    (series.find("state=\"ok\"") != std::string::npos ? ok : other) += 1;
  }
  v.Line("device health", ok > 0 && other == 0,
         Format("%d devices ok, %d not, after %llu forged kernel-log lines; %llu descriptors in "
                "the fabricated /proc",
                ok, other, static_cast<unsigned long long>(r.forged_lines),
                static_cast<unsigned long long>(r.host_descriptors)));
  v.Line("kubelet stand-in", r.kubelet_calls > 0,
         Format("asked %d times (answers of 400,000 ids in under 4 MiB and 1,000,000 beyond)",
                r.kubelet_calls));
  const ReplayTally& p = r.replays;
  v.Line(
      "hostile replays",
      p.runs > 0 && p.overran == 0 && p.unclear == 0 && p.peak_rss_mib < kMemoryMaxMib,
      Format("%llu runs: %llu refused, %llu played, %llu unclear, %llu overran (%llu cut short "
             "by the end); peak RSS %.1f MiB (%s)",
             static_cast<unsigned long long>(p.runs), static_cast<unsigned long long>(p.refused),
             static_cast<unsigned long long>(p.played), static_cast<unsigned long long>(p.unclear),
             static_cast<unsigned long long>(p.overran),
             static_cast<unsigned long long>(p.cut_short), p.peak_rss_mib,
             p.peak_recording.c_str()));
  for (const auto& [recording, message] : p.first_message) {
    std::printf("  %-24s %s\n", recording.c_str(), message.c_str());
  }
}

bool Report(const SoakOptions& o, const Results& r) {
  std::printf("soak: %.0f s, %d abusive clients, period %s, device %s, seed %llu%s\n",
              r.watched.seconds, o.clients, FormatDuration(o.period).c_str(), o.device.c_str(),
              static_cast<unsigned long long>(o.seed),
              r.watched.interrupted ? " (interrupted)" : "");
  Verdict v;
  PrintDaemonFigures(r, v);
  PrintTopFigures(r.top, v);
  PrintSamplingFigures(r.top, o.period, v);
  PrintScrapeFigures(r.scrapes, v);
  PrintAbuseFigures(r.stream, r.metrics);
  if (r.hostile_host) PrintHostileHostFigures(r, v);
  PrintDaemonCounters(r.scrapes.daemon_counters);
  PrintDaemonLog(r.log_lines);
  if (r.watched.interrupted) v.failed.push_back("interrupted");
  std::string failed;
  for (const std::string& f : v.failed) failed += (failed.empty() ? "" : ", ") + f;
  std::printf("verdict: %s\n", v.failed.empty() ? "PASS" : ("FAIL (" + failed + ")").c_str());
  return v.failed.empty();
}

}  // namespace neuronmon::soak
