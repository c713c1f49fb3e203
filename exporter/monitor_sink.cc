#include "exporter/monitor_sink.h"

#include <string>

#include "proto/common/terminal_text.h"
#include "proto/names/event_json.h"

namespace neuronmon::exporter {

std::string MonitorNote(std::string_view text) {
  return "neuron-monitor: " + SanitizeForTerminal(text) + "\n";
}

MonitorSink::MonitorSink(const MonitorSinkOptions& options) : options_(options) {
  render_.include_extensions = options.extensions;
}

const MonitorOutput& MonitorSink::Handle(const client::Event& event, std::size_t source) {
  output_.notes.clear();
  output_.document.clear();
  output_.done = false;
  switch (event.kind) {
    case client::Event::Kind::kConnected:
      state_.SetInventory(event.welcome.inventory());
      if (options_.events && !options_.follow && !events_until_) {
        events_until_ = event.welcome.newest_event_seq();
        output_.done = *events_until_ == 0;
      }
      break;
    case client::Event::Kind::kReport:
      if (!options_.events) RenderReport(event.report, source);
      break;
    case client::Event::Kind::kGap:
      AddNote("reports " + std::to_string(event.notice.first_seq()) + "-" +
              std::to_string(event.notice.last_seq()) + " were not delivered (" +
              event.notice.text() + ")");
      break;
    case client::Event::Kind::kEvent:
      RenderEvent(event.event);
      break;
    case client::Event::Kind::kNotice:
      if (options_.events && event.notice.kind() == v1::NOTICE_KIND_SUBSCRIBED &&
          !event.notice.text().ends_with("events")) {
        AddNote("this neuron-monitord sends no events (it predates them): nothing to print");
        output_.done = !options_.follow;
        break;
      }
      if (event.notice.kind() == v1::NOTICE_KIND_EVENTS_GAP) {
        AddNote("events " + std::to_string(event.notice.first_seq()) + "-" +
                std::to_string(event.notice.last_seq()) + " were not delivered (" +
                event.notice.text() + ")");
        output_.done = events_until_ && event.notice.last_seq() >= *events_until_;
        break;
      }
      // The daemon going away and a saved incident matter at any verbosity; subscribed,
      // reloaded and health are progress.
      if (event.notice.kind() == v1::NOTICE_KIND_SHUTDOWN ||
          event.notice.kind() == v1::NOTICE_KIND_INCIDENT || options_.verbose >= 1) {
        AddNote(event.notice.text());
      }
      break;
    case client::Event::Kind::kError:
      AddNote("the daemon refused: " + event.error.message());
      break;
    case client::Event::Kind::kDisconnected:
      AddNote(event.text + "; reconnecting");
      break;
    case client::Event::Kind::kInfo:
      AddNote(event.text);
      break;
    case client::Event::Kind::kRecord:
      break;  // for --record (monitor_app.cc)
  }
  return output_;
}

std::string MonitorSink::ConnectedNote(std::string_view endpoint_description) const {
  if (options_.verbose < 1) return {};
  return MonitorNote("connected to " + std::string(endpoint_description));
}

std::string MonitorSink::GaveUpNote(std::string_view endpoint_description) {
  return MonitorNote("gave up on " + std::string(endpoint_description));
}

void MonitorSink::RenderReport(const v1::Report& report, std::size_t source) {
  state_.Apply(report, source);
  if (options_.verbose >= 2) AddNote("report " + std::to_string(report.seq()));
  AppendMonitorJson(state_, render_, output_.document);
  output_.document.push_back('\n');
  ++documents_;
  output_.done = options_.count != 0 && documents_ >= options_.count;
}

void MonitorSink::RenderEvent(const v1::Event& event) {
  if (!options_.events) return;
  output_.document = EventJson(event);
  output_.document.push_back('\n');
  ++documents_;
  output_.done = (options_.count != 0 && documents_ >= options_.count) ||
                 (events_until_ && event.seq() >= *events_until_);
}

void MonitorSink::AddNote(std::string_view text) { output_.notes += MonitorNote(text); }

}  // namespace neuronmon::exporter
