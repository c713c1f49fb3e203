#include "exporter/monitor_app.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "exporter/monitor_json.h"
#include "proto/common/terminal_text.h"

namespace neuronmon::exporter {
namespace {

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

// One line on stderr. Its text may come from the daemon: stripped of control characters.
void Note(int fd, const std::string& text) {
  (void)WriteAll(fd, "neuron-monitor: " + SanitizeForTerminal(text) + "\n");
}

}  // namespace

int RunMonitor(MonitorAppOptions options, int out_fd, int err_fd) {
  std::vector<std::unique_ptr<client::Client>> clients;
  for (const v1::Subscribe& sub : MonitorSubscriptions(options.config)) {
    client::ClientOptions co;
    co.client_name = std::string("neuron-monitor/") + NEURONMON_VERSION;
    co.endpoint = options.endpoint;
    co.subscribe = sub;
    co.token = options.token;
    Result<std::unique_ptr<client::Client>> c = client::Client::Connect(std::move(co));
    if (!c.ok()) {
      Note(err_fd, c.status().message());
      return 1;
    }
    // Later clients share the first one's endpoint (and its embedded simulator).
    if (options.endpoint.kind == client::Endpoint::Kind::kAuto) {
      options.endpoint.kind =
          (*c)->standalone() ? client::Endpoint::Kind::kStandalone : client::Endpoint::Kind::kUnix;
    }
    if (options.verbose >= 1) Note(err_fd, "connected to " + (*c)->endpoint_description());
    clients.push_back(std::move(*c));
  }
  MonitorState state;
  RenderOptions render;
  render.include_extensions = options.extensions;
  std::string line;
  std::uint64_t printed = 0;
  std::vector<pollfd> fds;
  for (auto& c : clients) fds.push_back({c->notify_fd(), POLLIN, 0});
  // Our stdout too: a pipe whose reader went away reports POLLERR, so `| head -1` ends at once
  // instead of at the next document.
  fds.push_back({out_fd, 0, 0});
  for (;;) {
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) return 1;
    if (fds.back().revents & (POLLERR | POLLHUP)) return 0;
    for (std::size_t i = 0; i < clients.size(); ++i) {
      while (std::optional<client::Event> e = clients[i]->Next(std::chrono::milliseconds(0))) {
        switch (e->kind) {
          case client::Event::Kind::kConnected:
            state.SetInventory(e->welcome.inventory());
            break;
          case client::Event::Kind::kReport:
            state.Apply(e->report, i);
            if (options.verbose >= 2) Note(err_fd, "report " + std::to_string(e->report.seq()));
            line.clear();
            AppendMonitorJson(state, render, line);
            line.push_back('\n');
            if (!WriteAll(out_fd, line)) return 0;  // the reader went away: stop quietly
            if (options.count != 0 && ++printed >= options.count) return 0;
            break;
          case client::Event::Kind::kGap:
            Note(err_fd, "reports " + std::to_string(e->notice.first_seq()) + "-" +
                             std::to_string(e->notice.last_seq()) + " were not delivered (" +
                             e->notice.text() + ")");
            break;
          case client::Event::Kind::kNotice:
            if (e->notice.kind() == v1::NOTICE_KIND_SHUTDOWN || options.verbose >= 1) {
              Note(err_fd, e->notice.text());
            }
            break;
          case client::Event::Kind::kError:
            Note(err_fd, "the daemon refused: " + e->error.message());
            break;
          case client::Event::Kind::kDisconnected:
            Note(err_fd, e->text + "; reconnecting");
            break;
          case client::Event::Kind::kInfo:
            Note(err_fd, e->text);
            break;
        }
      }
      if (!clients[i]->running()) {
        Note(err_fd, "gave up on " + clients[i]->endpoint_description());
        return 1;
      }
    }
  }
}

}  // namespace neuronmon::exporter
