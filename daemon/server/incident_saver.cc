#include "daemon/server/incident_saver.h"

#include <vector>

#include "daemon/core/config/config_file.h"
#include "proto/common/duration.h"
#include "proto/common/terminal_text.h"

namespace neuronmon::daemon {
namespace {

// Bundles waiting for the disk; one more is refused.
constexpr std::size_t kMaxQueued = 4;

WallTime At(std::int64_t ns) { return FromUnixNanos(ns); }

}  // namespace

IncidentSaver::IncidentSaver(Post post, Logger& log, DaemonStats& stats, Announce announce)
    : post_(std::move(post)), log_(log), stats_(stats), announce_(std::move(announce)) {}

IncidentSaver::~IncidentSaver() = default;

void IncidentSaver::Configure(const IncidentsConfig& config) {
  tracker_.reset();
  stats_.incidents_enabled = false;
  if (!config.enabled) return;
  directory_ = config.directory.empty() ? DefaultIncidentDirectory() : config.directory;
  if (directory_.empty()) {
    log_.Warn(
        "not saving incidents: no incidents.directory, and neither STATE_DIRECTORY, "
        "XDG_STATE_HOME nor HOME says where");
    return;
  }
  tracker_ = std::make_unique<IncidentTracker>(config.tracker);
  limits_ = config.limits;
  after_ = config.tracker.after;
  if (writer_ == nullptr) writer_ = std::make_unique<ReadThread>(post_);
  stats_.incidents_enabled = true;
}

void IncidentSaver::Check(const DaemonCore& core, WallTime wall, const DaemonConfig& config,
                          const std::function<v1::ArchiveHeader()>& make_header) {
  if (tracker_ == nullptr) return;
  const Analysis* analysis = core.latest_analysis();
  if (analysis == nullptr) return;
  IncidentTracker::Step step = tracker_->Update(*analysis, core.history().newest_seq(), wall);
  if (step.declared) {
    // The summary names an application (its command line, on a real host): no control
    // characters reach the log.
    log_.Warn("incident: " + SanitizeForTerminal(step.declared->summary()) + "; saving it in " +
              FormatDuration(after_));
  }
  if (step.due) Save(core, std::move(*step.due), config, make_header());
}

bool IncidentSaver::Reset() { return tracker_ != nullptr && tracker_->Reset(); }

void IncidentSaver::Save(const DaemonCore& core, v1::Incident incident, const DaemonConfig& config,
                         v1::ArchiveHeader header) {
  incident.set_id(IncidentId(incident));
  if (queue_.size() >= kMaxQueued) {
    ++stats_.incident_failures;
    log_.Error("incident " + incident.id() + " not saved: " + std::to_string(kMaxQueued) +
               " bundles are already waiting for the disk");
    return;
  }
  incident.set_config(ConfigToJson(config));
  header.set_recorder("neuron-monitord incident");
  std::vector<Snapshot> snapshots = core.history().Between(At(incident.window_start_unix_ns()),
                                                           At(incident.window_end_unix_ns()));
  if (!snapshots.empty()) incident.set_window_start_unix_ns(ToUnixNanos(snapshots.front().wall));
  *header.mutable_incident() = incident;
  auto result = std::make_shared<Result<IncidentWritten>>(Status::Internal("not written"));
  auto job = [result, directory = directory_, header = std::move(header),
              snapshots = std::move(snapshots), inventory = core.inventory(),
              description = core.Describe(), limits = limits_] {
    *result = WriteIncidentBundle(directory, header, snapshots, inventory, description, limits);
  };
  auto done = [this, result, summary = incident.summary(),
               id = incident.id()](std::exception_ptr error) {
    if (error || !result->ok()) {
      ++stats_.incident_failures;
      log_.Error("incident " + id + " not saved: " +
                 (error ? std::string("write failed") : result->status().message()));
    } else {
      ++stats_.incidents_saved;
      for (const std::string& old : (*result)->deleted) log_.Info("incident removed: " + old);
      v1::Notice notice;
      notice.set_kind(v1::NOTICE_KIND_INCIDENT);
      notice.set_text("incident saved: " + (*result)->path + " (" + summary + ")");
      log_.Warn(SanitizeForTerminal(notice.text()));
      announce_(notice, IncidentEvent((*result)->path, notice.text()));
    }
    WriteNext();
  };
  queue_.emplace_back(std::move(job), std::move(done));
  WriteNext();
}

void IncidentSaver::WriteNext() {
  // One bundle at a time: the next goes when the writer's `done` has run.
  if (queue_.empty() || writer_->busy()) return;
  auto [job, done] = std::move(queue_.front());
  queue_.pop_front();
  (void)writer_->Submit(std::move(job), std::move(done));
}

}  // namespace neuronmon::daemon
