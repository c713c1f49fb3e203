#include "daemon/core/archive/incident.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

#include "daemon/core/archive/recorder.h"
#include "proto/archive/archive.h"
#include "proto/common/duration.h"
#include "proto/names/names.h"

namespace neuronmon::daemon {
namespace {

bool IsIncidentKind(v1::FindingKind kind) {
  return kind != v1::FINDING_KIND_UNSPECIFIED && kind != v1::FINDING_KIND_HEALTHY;
}

// Which of several kinds declared at once names the bundle: a hang, then errors, then the rest in
// FindingKind order.
// Every verdict: the instance summary first, then each runtime's (by pid).
void CopyFindings(const Analysis& analysis, google::protobuf::RepeatedPtrField<v1::Finding>& out) {
  out.Clear();
  *out.Add() = analysis.instance;
  for (const auto& [pid, findings] : analysis.runtimes) {
    for (const v1::Finding& f : findings) *out.Add() = f;
  }
}

}  // namespace

Nanos IncidentTracker::HoldOf(v1::FindingKind kind) const {
  return kind == v1::FINDING_KIND_ERRORS || kind == v1::FINDING_KIND_HANG ? options_.hold_errors
                                                                          : options_.hold;
}

IncidentTracker::Step IncidentTracker::Update(const Analysis& analysis, std::uint64_t seq,
                                              WallTime wall) {
  Step step;
  const std::int64_t now_ns = ToUnixNanos(wall);
  // The kinds present now, each with its earliest runtime verdict (the one held longest). An
  // episode is timed from the snapshot it was first seen at (the verdicts' own `since`, after a
  // reset, may predate it).
  std::map<int, const v1::Finding*> present;
  for (const auto& [pid, findings] : analysis.runtimes) {
    for (const v1::Finding& f : findings) {
      if (!IsIncidentKind(f.kind())) continue;
      const v1::Finding*& first = present[f.kind()];
      if (first == nullptr || f.since_unix_ns() < first->since_unix_ns()) first = &f;
    }
  }
  std::erase_if(episodes_, [&](const auto& e) { return !present.contains(e.first); });
  const v1::Finding* declare = nullptr;
  std::vector<v1::FindingKind> joined;
  for (const auto& [kind, finding] : present) {
    auto [it, added] = episodes_.try_emplace(kind);
    Episode& episode = it->second;
    if (added) episode.since_ns = now_ns;
    if (episode.declared || Nanos(now_ns - episode.since_ns) < HoldOf(finding->kind())) continue;
    episode.declared = true;
    if (pending_ ||
        (declare != nullptr && VerdictRank(declare->kind()) >= VerdictRank(finding->kind()))) {
      joined.push_back(finding->kind());
      continue;
    }
    if (declare != nullptr) joined.push_back(declare->kind());
    declare = finding;
  }
  if (declare != nullptr) {
    v1::Incident incident;
    incident.set_kind(declare->kind());
    incident.set_subject(declare->subject());
    incident.set_pid(declare->pid());
    const std::int64_t since = episodes_[declare->kind()].since_ns;
    incident.set_since_unix_ns(since);
    incident.set_declared_unix_ns(now_ns);
    incident.set_declared_seq(seq);
    incident.set_window_start_unix_ns(now_ns - options_.before.count());
    incident.set_summary(std::string(FindingKindName(declare->kind())) + " for " +
                         FormatDuration(std::chrono::seconds((now_ns - since) / 1'000'000'000)) +
                         " on " + declare->subject() + " (pid " + std::to_string(declare->pid()) +
                         "): " + declare->summary());
    CopyFindings(analysis, *incident.mutable_findings());
    pending_ = incident;
    step.declared = std::move(incident);
  }
  for (v1::FindingKind kind : joined) pending_->add_also(kind);
  if (pending_ && now_ns >= pending_->declared_unix_ns() + options_.after.count()) {
    pending_->set_window_end_unix_ns(now_ns);
    CopyFindings(analysis, *pending_->mutable_findings_after());
    step.due = std::move(pending_);
    pending_.reset();
  }
  return step;
}

bool IncidentTracker::Reset() {
  episodes_.clear();
  const bool was = pending_.has_value();
  pending_.reset();
  return was;
}

std::string IncidentId(const v1::Incident& incident) {
  const WallTime declared = FromUnixNanos(incident.declared_unix_ns());
  std::string name = archive::FileNameFor(declared, 0);
  name = name.substr(0, name.find('-'));  // "20261205T051500Z"
  return name + "-" + FindingKindName(incident.kind());
}

namespace {

// Leaves findings out until the header fits: findings_after first, then runtimes' findings other
// than the declared one's.
void FitHeader(v1::ArchiveHeader& header, std::size_t max_bytes) {
  v1::Incident& incident = *header.mutable_incident();
  if (header.ByteSizeLong() > max_bytes) incident.clear_findings_after();
  auto& findings = *incident.mutable_findings();
  for (int i = findings.size() - 1; i >= 1 && header.ByteSizeLong() > max_bytes; --i) {
    if (findings[i].pid() == incident.pid() && findings[i].kind() == incident.kind()) continue;
    findings.DeleteSubrange(i, 1);
  }
  if (header.ByteSizeLong() > max_bytes) incident.clear_config();
}

// Renames `aside` to `stem` + kFileSuffix, or `stem`-2, -3, ... when that name is taken, never
// replacing a file (renameat2's RENAME_NOREPLACE; link(2), which never replaces either, where the
// file system lacks it). The name it got.
Result<std::string> PlaceWithoutReplacing(const std::string& aside, const std::string& stem) {
  for (int n = 1; n < 1000; ++n) {
    const std::string path =
        stem + (n == 1 ? std::string() : "-" + std::to_string(n)) + archive::kFileSuffix;
    int rc = ::renameat2(AT_FDCWD, aside.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && errno == EINVAL) {
      rc = ::link(aside.c_str(), path.c_str());
      if (rc == 0) ::unlink(aside.c_str());
    }
    if (rc == 0) return path;
    if (errno != EEXIST) {
      return Status::IoError("cannot rename " + aside + " to " + path + ": " +
                             std::strerror(errno));
    }
  }
  return Status::IoError("cannot find a free name for " + stem + archive::kFileSuffix);
}

// A bundle's name, as WriteIncidentBundle makes it: IncidentId ("20261205T051500Z-hang"), perhaps
// "-N", and the suffix — the tag a finding kind's name (lower case and '_'), then digits.
bool IsIncidentFile(const std::string& path) {
  const std::optional<std::string> tag = archive::FileNameTag(path);
  if (!tag || tag->empty() || !std::islower(static_cast<unsigned char>(tag->front()))) return false;
  const std::size_t dash = tag->find('-');
  const std::string kind = tag->substr(0, dash);
  const std::string serial = dash == std::string::npos ? "1" : tag->substr(dash + 1);
  const auto is = [](const std::string& s, auto pred) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
      return pred(static_cast<unsigned char>(c)) != 0;
    });
  };
  return is(kind, [](int c) { return std::islower(c) || c == '_'; }) &&
         is(serial, [](int c) { return std::isdigit(c); });
}

std::uint64_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

}  // namespace

Result<IncidentWritten> WriteIncidentBundle(const std::string& directory, v1::ArchiveHeader header,
                                            const std::vector<Snapshot>& snapshots,
                                            const v1::Inventory& inventory,
                                            const std::string& description,
                                            const IncidentLimits& limits) {
  if (Status st = MakeDirectories(directory); !st.ok()) return st;
  FitHeader(header, limits.max_header_bytes);
  const std::string id = header.incident().id();
  if (id.empty() || id.find('/') != std::string::npos || id.front() == '.') {
    return Status::InvalidArgument("bad incident id \"" + id + "\"");
  }
  const std::string aside = directory + "/." + id + ".tmp";
  ::unlink(aside.c_str());  // a crashed write's
  {
    auto writer = archive::ArchiveWriter::Create(aside, header);
    if (!writer.ok()) return writer.status();
    Status st = Status::Ok();
    for (const Snapshot& s : snapshots) {
      st = (*writer)->Append(s, inventory, description);
      if (!st.ok()) break;
    }
    if (st.ok()) st = (*writer)->Close();
    if (!st.ok()) {
      ::unlink(aside.c_str());
      return st;
    }
  }
  Result<std::string> placed = PlaceWithoutReplacing(aside, directory + "/" + id);
  if (!placed.ok()) {
    ::unlink(aside.c_str());
    return placed.status();
  }
  const std::string& path = *placed;
  IncidentWritten written;
  written.path = path;
  written.bytes = FileSize(path);
  Result<std::vector<std::string>> all = archive::ListArchive(directory);
  if (!all.ok()) return written;
  std::uint64_t total = 0;
  std::vector<std::pair<std::string, std::uint64_t>> files;
  for (const std::string& f : *all) {
    if (!IsIncidentFile(f)) continue;  // the recorder's, or anyone else's: not ours to prune
    files.emplace_back(f, FileSize(f));
    total += files.back().second;
  }
  std::size_t count = files.size();
  for (const auto& [f, bytes] : files) {
    if (count <= limits.max_count && total <= limits.max_bytes) break;
    if (f == path) continue;
    if (::unlink(f.c_str()) == 0) {
      written.deleted.push_back(f);
      --count;
      total -= bytes;
    }
  }
  return written;
}

}  // namespace neuronmon::daemon
