#include "client/embedded_simulator.h"

#include <memory>
#include <utility>

#include "daemon/core/archive/replay.h"
#include "daemon/server/embedded_daemon.h"

namespace neuronmon::client {
namespace {

class Embedded final : public LocalDaemon {
 public:
  explicit Embedded(std::unique_ptr<daemon::EmbeddedDaemon> daemon) : daemon_(std::move(daemon)) {}
  Result<int> Connect() override { return daemon_->Connect(); }

 private:
  std::unique_ptr<daemon::EmbeddedDaemon> daemon_;
};

class Replay final : public ReplaySource {
 public:
  explicit Replay(std::unique_ptr<daemon::Replayer> replayer, std::string path)
      : replayer_(std::move(replayer)), path_(std::move(path)) {}
  v1::Welcome Welcome() const override { return replayer_->Welcome(); }
  Status Subscribe(const std::vector<v1::Subscribe>& subscriptions) override {
    return replayer_->Subscribe(subscriptions);
  }
  bool Step(std::vector<std::optional<v1::Report>>& reports) override {
    return replayer_->Step(reports);
  }
  Status Seek(WallTime wall) override { return replayer_->Seek(wall); }
  WallTime Time() const override { return replayer_->time(); }
  WallTime Start() const override { return replayer_->start(); }
  WallTime LastChunk() const override { return replayer_->last_chunk(); }
  std::vector<v1::Event> TakeEvents() override { return replayer_->TakeEvents(); }
  std::vector<std::string> TakeNotices() override {
    std::vector<std::string> notices = replayer_->TakeNotices();
    // An incident bundle says once why it was saved.
    if (const v1::ArchiveHeader& h = replayer_->header(); h.has_incident() && !told_incident_) {
      told_incident_ = true;
      notices.insert(notices.begin(), "incident: " + h.incident().summary());
    }
    return notices;
  }
  std::string Describe() const override {
    const v1::ArchiveHeader& h = replayer_->header();
    std::string out = "recording " + path_ + " (" + h.description();
    if (!h.hostname().empty()) out += " on " + h.hostname();
    return out + ")";
  }

 private:
  std::unique_ptr<daemon::Replayer> replayer_;
  std::string path_;
  bool told_incident_ = false;
};

}  // namespace

ReplayOpener EmbeddedReplay() {
  return [](const ReplayRequest& r) -> Result<std::unique_ptr<ReplaySource>> {
    daemon::ReplayerOptions options;
    options.path = r.path;
    options.from = r.from;
    options.to = r.to;
    Result<std::unique_ptr<daemon::Replayer>> replayer = daemon::Replayer::Open(options);
    if (!replayer.ok()) return replayer.status();
    return std::unique_ptr<ReplaySource>(std::make_unique<Replay>(std::move(*replayer), r.path));
  };
}

LocalDaemonStarter EmbeddedSimulator(int log_fd) {
  return [log_fd](const SimulatorOptions& o) -> Result<std::shared_ptr<LocalDaemon>> {
    Result<std::unique_ptr<daemon::EmbeddedDaemon>> started =
        daemon::EmbeddedDaemon::Start({o, log_fd});
    if (!started.ok()) return started.status();
    return std::shared_ptr<LocalDaemon>(std::make_shared<Embedded>(std::move(*started)));
  };
}

}  // namespace neuronmon::client
