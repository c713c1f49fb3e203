// MonitorSink: what neuron-monitor prints for each client event — the documents on stdout (the
// same bytes AppendMonitorJson renders), the notes on stderr at each verbosity (sanitized), the
// --count limit, and reports of several subscriptions merged by their source index.
#include "exporter/monitor_sink.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace neuronmon::exporter {
namespace {

client::Event Connected(const std::string& instance_type) {
  client::Event e;
  e.kind = client::Event::Kind::kConnected;
  e.welcome.mutable_inventory()->mutable_instance_info()->set_instance_type(instance_type);
  e.welcome.mutable_inventory()->mutable_hardware_info()->set_neuron_device_count(1);
  return e;
}

// A report of seq `seq` listing runtime `pid` (tag `tag`) with one NeuronCore at `utilization`.
client::Event Report(std::uint64_t seq, std::uint32_t pid, const std::string& tag = "train",
                     double utilization = 50) {
  client::Event e;
  e.kind = client::Event::Kind::kReport;
  e.report.set_seq(seq);
  v1::RuntimeReport& runtime = *e.report.add_runtimes();
  runtime.set_pid(pid);
  runtime.set_tag(tag);
  v1::NeuronCoreCounters& counters = *runtime.mutable_neuroncore_counters();
  counters.set_period_ns(1'000'000'000);
  v1::CoreCounters& core = *counters.add_cores();
  core.set_index(0);
  core.set_utilization_percent(utilization);
  return e;
}

client::Event Notice(client::Event::Kind kind, v1::NoticeKind notice_kind,
                     const std::string& text) {
  client::Event e;
  e.kind = kind;
  e.notice.set_kind(notice_kind);
  e.notice.set_text(text);
  return e;
}

client::Event Gap(std::uint64_t first, std::uint64_t last, const std::string& text) {
  client::Event e = Notice(client::Event::Kind::kGap, v1::NOTICE_KIND_GAP, text);
  e.notice.set_first_seq(first);
  e.notice.set_last_seq(last);
  return e;
}

client::Event Text(client::Event::Kind kind, const std::string& text) {
  client::Event e;
  e.kind = kind;
  e.text = text;
  return e;
}

client::Event Refusal(const std::string& message) {
  client::Event e;
  e.kind = client::Event::Kind::kError;
  e.error.set_code(v1::ERROR_CODE_INVALID_SUBSCRIPTION);
  e.error.set_message(message);
  return e;
}

// The reference: the document a MonitorState fed directly renders, plus the newline.
std::string Expected(const MonitorState& state, bool extensions = true) {
  RenderOptions render;
  render.include_extensions = extensions;
  std::string line;
  AppendMonitorJson(state, render, line);
  return line + "\n";
}

// Only notes, no document, not done.
void ExpectOnlyNotes(const MonitorOutput& output, const std::string& notes) {
  EXPECT_EQ(output.notes, notes);
  EXPECT_EQ(output.document, "");
  EXPECT_FALSE(output.done);
}

TEST(MonitorSink, EachReportIsTheMergedStateRenderedAsOneLine) {
  MonitorSink sink({});
  MonitorState reference;
  const client::Event connected = Connected("trn1.2xlarge");
  ExpectOnlyNotes(sink.Handle(connected, 0), "");
  reference.SetInventory(connected.welcome.inventory());
  for (const client::Event& e : {Report(1, 7), Report(2, 7, "train", 75.5), Report(3, 9)}) {
    reference.Apply(e.report, 0);
    const MonitorOutput& output = sink.Handle(e, 0);
    EXPECT_EQ(output.document, Expected(reference)) << "seq " << e.report.seq();
    EXPECT_EQ(output.notes, "");
    EXPECT_FALSE(output.done);
  }
  EXPECT_EQ(sink.documents(), 3u);
  const std::string last = sink.Handle(Report(4, 9), 0).document;
  EXPECT_EQ(last.find('\n'), last.size() - 1) << "one document, one line";
  EXPECT_NE(last.find(R"("instance_type":"trn1.2xlarge")"), std::string::npos) << last;
  EXPECT_EQ(last.find(R"("pid":7)"), std::string::npos) << "pid 7 exited: " << last;
}

TEST(MonitorSink, AReconnectReplacesTheInventoryOfLaterDocuments) {
  MonitorSink sink({});
  sink.Handle(Connected("trn1.2xlarge"), 0);
  EXPECT_NE(sink.Handle(Report(1, 7), 0).document.find("trn1.2xlarge"), std::string::npos);
  ExpectOnlyNotes(sink.Handle(Connected("trn2.48xlarge"), 0), "");
  const std::string document = sink.Handle(Report(2, 7), 0).document;
  EXPECT_NE(document.find("trn2.48xlarge"), std::string::npos) << document;
  EXPECT_EQ(document.find("trn1.2xlarge"), std::string::npos) << document;
}

TEST(MonitorSink, AwsOnlyLeavesTheExtensionGroupsOut) {
  client::Event report = Report(1, 7);
  report.report.mutable_system()->mutable_hbm_stats()->add_devices();
  MonitorState reference;
  reference.Apply(report.report, 0);
  MonitorSink aws_only({.extensions = false});
  MonitorSink extended({.extensions = true});
  const std::string plain = aws_only.Handle(report, 0).document;
  EXPECT_EQ(plain, Expected(reference, false));
  EXPECT_EQ(plain.find("hbm_stats"), std::string::npos) << plain;
  const std::string full = extended.Handle(report, 0).document;
  EXPECT_EQ(full, Expected(reference, true));
  EXPECT_NE(full.find("hbm_stats"), std::string::npos) << full;
}

// Who runs a runtime is an extension key of its entry, after "error": only what is known.
TEST(MonitorSink, AttributionIsAnExtensionOfTheRuntimeEntry) {
  client::Event report = Report(1, 7);
  v1::Attribution& a = *report.report.mutable_runtimes(0)->mutable_attribution();
  a.set_uid(1000);
  a.set_user("alice");
  a.set_pod("vllm-0");
  a.set_namespace_("inference");
  a.set_slurm_job_id("4242");
  MonitorSink extended({.extensions = true});
  const std::string full = extended.Handle(report, 0).document;
  EXPECT_NE(full.find(R"("error":"","attribution":{"uid":1000,"user":"alice","pod":"vllm-0",)"
                      R"("namespace":"inference","slurm_job_id":"4242"},"report":{)"),
            std::string::npos)
      << full;
  MonitorSink aws_only({.extensions = false});
  EXPECT_EQ(aws_only.Handle(report, 0).document.find("attribution"), std::string::npos);
  // A later report without it (the process's attribution is gone) drops it.
  client::Event later = Report(2, 7);
  EXPECT_EQ(extended.Handle(later, 0).document.find("attribution"), std::string::npos);
}

TEST(MonitorSink, CountIsDoneWithTheNthDocumentAndOnlyDocumentsCount) {
  MonitorSink sink({.count = 2});
  EXPECT_FALSE(sink.Handle(Connected("trn1.2xlarge"), 0).done);
  EXPECT_FALSE(sink.Handle(Report(1, 7), 0).done);
  EXPECT_FALSE(sink.Handle(Gap(2, 3, "slow client"), 0).done);
  EXPECT_FALSE(sink.Handle(Text(client::Event::Kind::kInfo, "hello"), 0).done);
  const MonitorOutput& second = sink.Handle(Report(4, 7), 0);
  EXPECT_TRUE(second.done);
  EXPECT_FALSE(second.document.empty()) << "the Nth document is printed before stopping";
  EXPECT_EQ(sink.documents(), 2u);
}

client::Event EventOf(std::uint64_t seq, const std::string& after) {
  client::Event e;
  e.kind = client::Event::Kind::kEvent;
  e.event.set_seq(seq);
  e.event.set_kind(v1::EVENT_KIND_DAEMON);
  e.event.mutable_subject()->set_instance(true);
  e.event.set_after(after);
  e.event.set_summary("\x1b[2Jsaid");
  return e;
}

TEST(MonitorSink, EventsAreLinesAndWithoutFollowDoneAtTheNewestKeptAtConnect) {
  MonitorSink sink({.events = true});
  client::Event connected = Connected("trn1.2xlarge");
  connected.welcome.set_newest_event_seq(2);
  EXPECT_FALSE(sink.Handle(connected, 0).done);
  const MonitorOutput& first = sink.Handle(EventOf(1, "started"), 0);
  EXPECT_EQ(first.document,
            "{\"seq\":1,\"time\":\"1970-01-01T00:00:00.000Z\",\"sample_seq\":0,\"kind\":"
            "\"daemon\",\"subject\":{\"instance\":true},\"before\":\"\",\"after\":"
            "\"started\",\"summary\":\"\\u001b[2Jsaid\",\"evidence\":[],\"reasons\":[]}\n");
  EXPECT_FALSE(first.done);
  EXPECT_TRUE(sink.Handle(EventOf(2, "reloaded"), 0).done);
  EXPECT_EQ(sink.documents(), 2u);
  // Reports are not events' documents.
  EXPECT_EQ(sink.Handle(Report(1, 100), 0).document, "");

  MonitorSink empty({.events = true});
  EXPECT_TRUE(empty.Handle(Connected("trn1.2xlarge"), 0).done) << "nothing kept: nothing to wait";

  MonitorSink follow({.events = true, .follow = true});
  EXPECT_FALSE(follow.Handle(connected, 0).done);
  EXPECT_FALSE(follow.Handle(EventOf(2, "reloaded"), 0).done);

  MonitorSink gap({.events = true});
  (void)gap.Handle(connected, 0);
  client::Event lost;
  lost.kind = client::Event::Kind::kNotice;
  lost.notice.set_kind(v1::NOTICE_KIND_EVENTS_GAP);
  lost.notice.set_first_seq(1);
  lost.notice.set_last_seq(2);
  lost.notice.set_text("expired");
  const MonitorOutput& told = gap.Handle(lost, 0);
  EXPECT_EQ(told.notes, "neuron-monitor: events 1-2 were not delivered (expired)\n");
  EXPECT_TRUE(told.done);

  // A daemon from before events confirms the subscription without them: said, not waited for.
  MonitorSink old({.events = true});
  client::Event subscribed;
  subscribed.kind = client::Event::Kind::kNotice;
  subscribed.notice.set_kind(v1::NOTICE_KIND_SUBSCRIBED);
  subscribed.notice.set_text("every group every 1s");
  const MonitorOutput& said = old.Handle(subscribed, 0);
  EXPECT_NE(said.notes.find("sends no events"), std::string::npos) << said.notes;
  EXPECT_TRUE(said.done);
  subscribed.notice.set_text("no reports; events");
  EXPECT_EQ(old.Handle(subscribed, 0).notes, "");
}

TEST(MonitorSink, CountZeroIsNeverDone) {
  MonitorSink sink({.count = 0});
  for (std::uint64_t seq = 1; seq <= 50; ++seq) {
    ASSERT_FALSE(sink.Handle(Report(seq, 7), 0).done) << "seq " << seq;
  }
  EXPECT_EQ(sink.documents(), 50u);
}

TEST(MonitorSink, GapsRefusalsDisconnectsAndInfoAreAlwaysNoted) {
  MonitorSink sink({.verbose = 0});
  ExpectOnlyNotes(sink.Handle(Gap(5, 9, "dropped: slow client"), 0),
                  "neuron-monitor: reports 5-9 were not delivered (dropped: slow client)\n");
  ExpectOnlyNotes(sink.Handle(Refusal("bad tag_filter regex"), 0),
                  "neuron-monitor: the daemon refused: bad tag_filter regex\n");
  ExpectOnlyNotes(sink.Handle(Text(client::Event::Kind::kDisconnected, "lost neuron-monitord"), 0),
                  "neuron-monitor: lost neuron-monitord; reconnecting\n");
  ExpectOnlyNotes(sink.Handle(Text(client::Event::Kind::kInfo, "running the simulator"), 0),
                  "neuron-monitor: running the simulator\n");
  EXPECT_EQ(sink.documents(), 0u);
}

TEST(MonitorSink, ShutdownAndIncidentNoticesAlwaysOtherNoticesFromVerboseOne) {
  const client::Event shutdown =
      Notice(client::Event::Kind::kNotice, v1::NOTICE_KIND_SHUTDOWN, "neuron-monitord stopping");
  std::vector<client::Event> progress;
  for (v1::NoticeKind kind : {v1::NOTICE_KIND_SUBSCRIBED, v1::NOTICE_KIND_RELOADED,
                              v1::NOTICE_KIND_HEALTH, v1::NOTICE_KIND_UNSPECIFIED}) {
    progress.push_back(Notice(client::Event::Kind::kNotice, kind, "progress"));
  }
  MonitorSink quiet({.verbose = 0});
  ExpectOnlyNotes(quiet.Handle(shutdown, 0), "neuron-monitor: neuron-monitord stopping\n");
  ExpectOnlyNotes(
      quiet.Handle(Notice(client::Event::Kind::kNotice, v1::NOTICE_KIND_INCIDENT,
                          "incident saved: /x/20261205T051500Z-hang.nmrec (hang for 10s ...)"),
                   0),
      "neuron-monitor: incident saved: /x/20261205T051500Z-hang.nmrec (hang for 10s ...)\n");
  for (const client::Event& e : progress) ExpectOnlyNotes(quiet.Handle(e, 0), "");
  MonitorSink verbose({.verbose = 1});
  ExpectOnlyNotes(verbose.Handle(shutdown, 0), "neuron-monitor: neuron-monitord stopping\n");
  for (const client::Event& e : progress) {
    ExpectOnlyNotes(verbose.Handle(e, 0), "neuron-monitor: progress\n");
  }
}

TEST(MonitorSink, EachReportSeqIsNotedFromVerboseTwo) {
  for (int verbose : {0, 1}) {
    MonitorSink sink({.verbose = verbose});
    EXPECT_EQ(sink.Handle(Report(7, 1), 0).notes, "") << "verbose " << verbose;
  }
  for (int verbose : {2, 4}) {
    MonitorSink sink({.verbose = verbose});
    const MonitorOutput& output = sink.Handle(Report(7, 1), 0);
    EXPECT_EQ(output.notes, "neuron-monitor: report 7\n") << "verbose " << verbose;
    EXPECT_FALSE(output.document.empty());
  }
}

TEST(MonitorSink, ConnectedNoteFromVerboseOneAndGaveUpNoteAlways) {
  EXPECT_EQ(MonitorSink({.verbose = 0}).ConnectedNote("unix:/run/x.sock"), "");
  EXPECT_EQ(MonitorSink({.verbose = 1}).ConnectedNote("unix:/run/x.sock"),
            "neuron-monitor: connected to unix:/run/x.sock\n");
  EXPECT_EQ(MonitorSink::GaveUpNote("embedded simulator"),
            "neuron-monitor: gave up on embedded simulator\n");
  EXPECT_EQ(MonitorNote("no daemon at /run/x.sock"), "neuron-monitor: no daemon at /run/x.sock\n");
}

TEST(MonitorSink, DaemonTextIsSanitizedOnStderrButNotInTheDocument) {
  MonitorSink sink({.verbose = 1});
  ExpectOnlyNotes(sink.Handle(Refusal("\x1b]0;pwned\x07no\x1b[2J\nway"), 0),
                  "neuron-monitor: the daemon refused: no way\n");
  ExpectOnlyNotes(sink.Handle(Gap(1, 2, "a\x1b[31mred\x1b[0m\tb"), 0),
                  "neuron-monitor: reports 1-2 were not delivered (ared b)\n");
  ExpectOnlyNotes(sink.Handle(Text(client::Event::Kind::kDisconnected, "x\x07y\xff"), 0),
                  "neuron-monitor: xy\xEF\xBF\xBD; reconnecting\n");
  ExpectOnlyNotes(sink.Handle(Notice(client::Event::Kind::kNotice, v1::NOTICE_KIND_HEALTH,
                                     "\x1b"
                                     "cdevice 0"),
                              0),
                  "neuron-monitor: device 0\n");
  EXPECT_EQ(sink.ConnectedNote("unix:/tmp/\x1b[Hs.sock"),
            "neuron-monitor: connected to unix:/tmp/s.sock\n");
  const client::Event report = Report(1, 7, "job\x1b[31m\nx");
  MonitorState reference;
  reference.Apply(report.report, 0);
  const std::string document = sink.Handle(report, 0).document;
  EXPECT_EQ(document, Expected(reference));
  EXPECT_NE(document.find(R"("neuron_runtime_tag":"job\u001b[31m\nx")"), std::string::npos)
      << document;
}

TEST(MonitorSink, ReportsOfSeveralSubscriptionsAreMergedBySource) {
  MonitorSink sink({});
  MonitorState reference;
  // Subscription 0 selects pid 1, subscription 1 pid 2: neither's report drops the other's.
  const std::vector<std::pair<client::Event, std::size_t>> events = {
      {Report(1, 1, "train"), 0}, {Report(1, 2, "serve"), 1}, {Report(2, 1, "train"), 0},
      {Report(2, 2, "serve"), 1}, {Report(3, 1, "train"), 0}, {Report(1, 3, "eval"), 63}};
  for (const auto& [event, source] : events) {
    reference.Apply(event.report, source);
    const std::string document = sink.Handle(event, source).document;
    EXPECT_EQ(document, Expected(reference)) << "source " << source;
    EXPECT_NE(document.find(R"("pid":1,)"), std::string::npos) << document;
  }
  const std::string last = sink.Handle(Report(4, 1, "train"), 0).document;
  for (const char* pid : {R"("pid":1,)", R"("pid":2,)", R"("pid":3,)"}) {
    EXPECT_NE(last.find(pid), std::string::npos) << pid << " in " << last;
  }
  EXPECT_EQ(Expected(sink.state()), last) << "state() is what was rendered";
}

TEST(MonitorSink, EachResultReplacesThePreviousOne) {
  MonitorSink sink({.verbose = 2, .count = 1});
  const MonitorOutput& first = sink.Handle(Report(1, 7), 0);
  EXPECT_TRUE(first.done);
  const MonitorOutput& second = sink.Handle(Gap(2, 3, "slow client"), 0);
  EXPECT_EQ(second.notes, "neuron-monitor: reports 2-3 were not delivered (slow client)\n");
  EXPECT_EQ(second.document, "");
  EXPECT_FALSE(second.done) << "a gap after the last document is not another document";
}

}  // namespace
}  // namespace neuronmon::exporter
