#include "exporter/monitor_app.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/recording.h"
#include "exporter/monitor_sink.h"

namespace neuronmon::exporter {
namespace {

using Clients = std::vector<std::unique_ptr<client::Client>>;

// Writes all of `text`; false when the reader is gone (EPIPE) or the write failed.
bool WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Writes what the sink made of one event; the exit status once the program should end.
std::optional<int> Emit(const MonitorOutput& output, int out_fd, int err_fd) {
  if (!output.notes.empty()) (void)WriteAll(err_fd, output.notes);
  if (!output.document.empty() && !WriteAll(out_fd, output.document)) return 0;
  if (output.done) return 0;
  return std::nullopt;
}

// One client per subscription; false (after a note) when one cannot connect.
// The subscriptions to make: the config's runtime selectors, or with --events one for the events
// alone (every one the daemon keeps first).
std::vector<v1::Subscribe> Subscriptions(const MonitorAppOptions& options) {
  if (!options.events) return MonitorSubscriptions(options.config);
  v1::Subscribe events;
  events.mutable_events()->set_only(true);
  events.mutable_events()->set_after_seq(0);
  return {events};
}

bool ConnectClients(MonitorAppOptions& options, const MonitorSink& sink, int err_fd,
                    Clients& clients) {
  for (const v1::Subscribe& sub : Subscriptions(options)) {
    client::ClientOptions co;
    // --events without --follow prints what the daemon has and ends: a lost daemon ends it too.
    co.reconnect = !options.events || options.follow;
    co.client_name = std::string("neuron-monitor/") + NEURONMON_VERSION;
    co.endpoint = options.endpoint;
    co.subscribe = sub;
    // The first subscription also brings the snapshots a --record file keeps.
    co.subscribe.set_snapshots(!options.record.empty() && clients.empty());
    co.token = options.token;
    Result<std::unique_ptr<client::Client>> c = client::Client::Connect(std::move(co));
    if (!c.ok()) {
      (void)WriteAll(err_fd, MonitorNote(c.status().message()));
      return false;
    }
    // Later clients go where the first one went: the socket it found, or its in-process daemon.
    options.endpoint = (*c)->endpoint();
    (void)WriteAll(err_fd, sink.ConnectedNote((*c)->endpoint_description()));
    clients.push_back(std::move(*c));
  }
  return true;
}

// Feeds the queued events of client `source` to the sink; the exit status once the program
// should end (the reader went away, the count was reached), else nullopt.
std::optional<int> DrainEvents(client::Client& client, std::size_t source, MonitorSink& sink,
                               int out_fd, int err_fd,
                               std::unique_ptr<client::RecordingFile>& recording) {
  while (std::optional<client::Event> e = client.Next(std::chrono::milliseconds(0))) {
    if (recording != nullptr && source == 0) {
      Status st;
      if (e->kind == client::Event::Kind::kConnected) recording->SetWelcome(e->welcome);
      if (e->kind == client::Event::Kind::kRecord) st = recording->Add(e->record);
      if (!st.ok()) {
        (void)WriteAll(
            err_fd, MonitorNote("recording to " + recording->path() + " stopped: " + st.message()));
        recording.reset();
      }
    }
    // A reader that went away ends the program quietly, as does the count.
    if (auto status = Emit(sink.Handle(*e, source), out_fd, err_fd)) return *status;
  }
  return std::nullopt;
}

// --replay: the recording's documents, one per recorded snapshot a subscription is due at.
int RunReplay(const MonitorAppOptions& options, MonitorSink& sink, int out_fd, int err_fd) {
  if (!options.open_replay) {
    (void)WriteAll(err_fd, MonitorNote("this program cannot replay recordings"));
    return 1;
  }
  Result<std::unique_ptr<client::ReplaySource>> source = options.open_replay(*options.replay);
  if (!source.ok()) {
    (void)WriteAll(err_fd, MonitorNote(source.status().message()));
    return 1;
  }
  const std::vector<v1::Subscribe> subs = MonitorSubscriptions(options.config);
  if (Status st = (*source)->Subscribe(subs); !st.ok()) {
    (void)WriteAll(err_fd, MonitorNote(st.message()));
    return 1;
  }
  client::Event event;
  event.kind = client::Event::Kind::kConnected;
  event.welcome = (*source)->Welcome();
  (void)WriteAll(err_fd, sink.ConnectedNote((*source)->Describe()));
  for (std::size_t i = 0; i < subs.size(); ++i) {
    if (auto status = Emit(sink.Handle(event, i), out_fd, err_fd)) return *status;
  }
  std::vector<std::optional<v1::Report>> reports;
  while ((*source)->Step(reports)) {
    for (const std::string& notice : (*source)->TakeNotices()) {
      (void)WriteAll(err_fd, MonitorNote(notice));
    }
    event.kind = client::Event::Kind::kEvent;
    for (v1::Event& recorded : (*source)->TakeEvents()) {
      event.event = std::move(recorded);
      if (auto status = Emit(sink.Handle(event, 0), out_fd, err_fd)) return *status;
    }
    if (options.events) continue;
    event.kind = client::Event::Kind::kReport;
    for (std::size_t i = 0; i < reports.size(); ++i) {
      if (!reports[i]) continue;
      event.report = std::move(*reports[i]);
      if (auto status = Emit(sink.Handle(event, i), out_fd, err_fd)) return *status;
    }
  }
  for (const std::string& notice : (*source)->TakeNotices()) {
    (void)WriteAll(err_fd, MonitorNote(notice));
  }
  return 0;
}

}  // namespace

int RunMonitor(MonitorAppOptions options, int out_fd, int err_fd) {
  MonitorSink sink({.verbose = options.verbose,
                    .count = options.count,
                    .extensions = options.extensions,
                    .events = options.events,
                    .follow = options.follow || options.replay.has_value()});
  if (options.replay) return RunReplay(options, sink, out_fd, err_fd);
  std::unique_ptr<client::RecordingFile> recording;
  if (!options.record.empty()) {
    auto prepared = client::RecordingFile::Prepare(options.record, "neuron-monitor --record");
    if (!prepared.ok()) {
      (void)WriteAll(err_fd, MonitorNote(prepared.status().message()));
      return 1;
    }
    recording = std::move(*prepared);
  }
  if (const std::string n = client::InsecureNotice(options.endpoint, !options.token.empty());
      !n.empty()) {
    (void)WriteAll(err_fd, MonitorNote(n));
  }
  Clients clients;
  if (!ConnectClients(options, sink, err_fd, clients)) return 1;
  std::vector<pollfd> fds;
  for (auto& c : clients) fds.push_back({c->notify_fd(), POLLIN, 0});
  // Our stdout too: a pipe whose reader went away reports POLLERR, so `| head -1` ends at once
  // instead of at the next document.
  fds.push_back({out_fd, 0, 0});
  for (;;) {
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) return 1;
    if (fds.back().revents & (POLLERR | POLLHUP)) return 0;
    for (std::size_t i = 0; i < clients.size(); ++i) {
      if (std::optional<int> status =
              DrainEvents(*clients[i], i, sink, out_fd, err_fd, recording)) {
        return *status;
      }
      if (!clients[i]->running()) {
        (void)WriteAll(err_fd, MonitorSink::GaveUpNote(clients[i]->endpoint_description()));
        return 1;
      }
    }
  }
}

}  // namespace neuronmon::exporter
