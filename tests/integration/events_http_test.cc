// /events over real loopback TCP: the daemon's own "started" event first, NDJSON by default and
// Server-Sent Events on request, resumable with ?after= and Last-Event-ID, a bad resume point
// refused; long-lived replies (SSE by default, NDJSON with ?follow) that push each event as it
// is logged, within their own cap and lifetime, beside scrapes that still get through; and on a
// simulated device whose HBM starts failing, the health change, the new hardware errors and the
// verdict change arrive as events with their evidence.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/integration/daemon_fixture.h"
#include "tests/integration/http_client.h"

namespace neuronmon::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::vector<nlohmann::json> Lines(const std::string& body) {
  std::vector<nlohmann::json> out;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

TEST(EventsHttp, StartedFirstNdjsonOrSseAndResumable) {
  DaemonFixture d([](daemon::DaemonConfig& c) {
    c.listeners.metrics = daemon::ListenAddress{"127.0.0.1", 0};
  });
  const std::uint16_t port = d.metrics_port().value_or(0);
  const auto all = Fetch(port, "/events");
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->status, 200);
  EXPECT_EQ(all->Header("content-type"), "application/x-ndjson");
  const std::vector<nlohmann::json> events = Lines(all->body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0]["seq"], 1);
  EXPECT_EQ(events[0]["kind"], "daemon");
  EXPECT_EQ(events[0]["after"], "started");
  EXPECT_EQ(events[0]["subject"], nlohmann::json({{"instance", true}}));
  EXPECT_EQ(events[0]["summary"].get<std::string>().find("sampling sim:trn1.2xlarge"), 0u);
  const auto after = Fetch(port, "/events?after=1");
  ASSERT_TRUE(after.has_value());
  for (const nlohmann::json& e : Lines(after->body)) EXPECT_GT(e["seq"].get<int>(), 1);
  const auto sse = Fetch(port, "/events?follow=0", "Accept: text/event-stream\r\n");
  ASSERT_TRUE(sse.has_value());
  EXPECT_EQ(sse->Header("content-type"), "text/event-stream; charset=utf-8");
  EXPECT_TRUE(std::regex_search(
      sse->body,
      std::regex("^retry: 1000\n\nid: [0-9a-f]{16}-1\nevent: daemon\ndata: \\{\"seq\":1,")))
      << sse->body;
  // The id names this daemon instance: another's resumes from this one's first event, as does a
  // seq beyond the newest (both are a restarted daemon's).
  const std::string id = sse->body.substr(sse->body.find("id: ") + 4, 16);
  const auto same = Fetch(port, "/events?follow=0", "Last-Event-ID: " + id + "-1\r\n");
  EXPECT_EQ(same->body.find("\"seq\":1,"), std::string::npos) << same->body;
  const auto other = Fetch(port, "/events?follow=0", "Last-Event-ID: 0123456789abcdef-1\r\n");
  EXPECT_NE(other->body.find("\"seq\":1,"), std::string::npos) << other->body;
  EXPECT_NE(Fetch(port, "/events?after=999999")->body.find("\"seq\":1,"), std::string::npos);
  const auto resumed = Fetch(port, "/events", "Last-Event-ID: 1\r\n");
  EXPECT_EQ(Fetch(port, "/events?follow=maybe")->status, 400);
  ASSERT_TRUE(resumed.has_value());
  EXPECT_EQ(resumed->body.find("\"seq\":1,"), std::string::npos);
  const auto bad = Fetch(port, "/events?after=-3");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, 400);
}

// What arrives on `c` until `needle` has, within 5 s (all of it, for the message on failure).
std::string ReadUntil(HttpClient& c, const std::string& needle, std::string so_far = "") {
  const auto deadline = std::chrono::steady_clock::now() + seconds(5);
  while (so_far.find(needle) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    so_far += c.ReadSome(1, milliseconds(100));  // at once when a byte is there
  }
  return so_far;
}

void Reloaded(DaemonFixture& d, const std::string& summary) {
  d.OnDaemon([summary](daemon::Daemon& daemon) {
    daemon.AddEvent(daemon::DaemonEvent("reloaded", summary));
  });
}

TEST(EventsHttp, StreamsPushEachEventAsItIsLogged) {
  DaemonFixture d([](daemon::DaemonConfig& c) {
    c.listeners.metrics = daemon::ListenAddress{"127.0.0.1", 0};
    c.metrics.handler.max_event_streams = 2;
    c.metrics.max_connections = 2;  // the streams do not count against it
  });
  const std::uint16_t port = d.metrics_port().value_or(0);
  HttpClient sse(port);
  sse.Send("GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n");
  std::string got = ReadUntil(sse, "\"after\":\"started\"");
  ASSERT_NE(got.find("\"after\":\"started\""), std::string::npos) << got;
  EXPECT_NE(got.find("Transfer-Encoding: chunked"), std::string::npos) << got;
  EXPECT_NE(got.find("Content-Type: text/event-stream; charset=utf-8"), std::string::npos) << got;
  EXPECT_NE(got.find("\nevent: daemon\ndata: {\"seq\":1,"), std::string::npos) << got;
  HttpClient ndjson(port);
  ndjson.Send("GET /events?follow=1&after=1 HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string lines = ReadUntil(ndjson, "Transfer-Encoding: chunked");
  EXPECT_EQ(lines.find("\"seq\":1,"), std::string::npos) << "after=1: " << lines;
  // A third stream is refused; a scrape still gets through beside the two.
  const auto third = Fetch(port, "/events", "Accept: text/event-stream\r\n");
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->status, 503);
  EXPECT_NE(third->body.find("too many event streams"), std::string::npos) << third->body;
  const auto scrape = Fetch(port, "/metrics");
  ASSERT_TRUE(scrape.has_value());
  EXPECT_EQ(scrape->status, 200);
  // A new event reaches both streams, without asking again.
  Reloaded(d, "pushed to every stream");
  got = ReadUntil(sse, "pushed to every stream", got);
  EXPECT_NE(got.find("event: daemon\ndata: {\"seq\":2,"), std::string::npos) << got;
  lines = ReadUntil(ndjson, "pushed to every stream", lines);
  EXPECT_NE(lines.find("{\"seq\":2,"), std::string::npos) << lines;
}

// More streams than one turn of the loop serves (64): every one still gets every event, in order,
// once, and the batches leave room for a scrape.
TEST(EventsHttp, EveryStreamGetsEachEventWhenTheyAreServedInBatches) {
  DaemonFixture d([](daemon::DaemonConfig& c) {
    c.listeners.metrics = daemon::ListenAddress{"127.0.0.1", 0};
    c.metrics.handler.max_event_streams = 200;
  });
  const std::uint16_t port = d.metrics_port().value_or(0);
  std::vector<std::unique_ptr<HttpClient>> streams;
  std::vector<std::string> got(150);
  for (std::size_t i = 0; i < got.size(); ++i) {
    streams.push_back(std::make_unique<HttpClient>(port));
    streams.back()->Send("GET /events?follow=1&after=1 HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    got[i] = ReadUntil(*streams[i], "Transfer-Encoding: chunked");
  }
  Reloaded(d, "first of two");
  Reloaded(d, "second of two");
  for (std::size_t i = 0; i < got.size(); ++i) {
    got[i] = ReadUntil(*streams[i], "second of two", got[i]);
    const std::size_t first = got[i].find("first of two");
    const std::size_t second = got[i].find("second of two");
    ASSERT_NE(second, std::string::npos) << "stream " << i << ": " << got[i];
    EXPECT_LT(first, second) << "stream " << i;
    EXPECT_EQ(got[i].find("first of two", first + 1), std::string::npos) << "twice: " << got[i];
  }
  const auto scrape = Fetch(port, "/metrics");
  ASSERT_TRUE(scrape.has_value());
  EXPECT_EQ(scrape->status, 200);
}

TEST(EventsHttp, AStreamEndsCleanlyAtItsLifetimeAndFreesItsSlot) {
  DaemonFixture d([](daemon::DaemonConfig& c) {
    c.listeners.metrics = daemon::ListenAddress{"127.0.0.1", 0};
    c.metrics.handler.max_event_streams = 1;
    c.metrics.event_stream_lifetime = seconds(1);
  });
  const std::uint16_t port = d.metrics_port().value_or(0);
  HttpClient c(port);
  c.Send("GET /events?follow HTTP/1.1\r\nHost: x\r\n\r\n");
  // The body ends with the last chunk, and the connection closes.
  const std::string got = ReadUntil(c, "\r\n0\r\n\r\n");
  EXPECT_NE(got.find("\"after\":\"started\""), std::string::npos) << got;
  EXPECT_NE(got.find("\r\n0\r\n\r\n"), std::string::npos) << got;
  EXPECT_TRUE(c.ClosedWithin(milliseconds(3000)));
  // Its slot is free again: another stream is admitted.
  HttpClient next(port);
  next.Send("GET /events?follow HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(ReadUntil(next, "HTTP/1.1 200").find("HTTP/1.1 200"), std::string::npos);
}

TEST(EventsHttp, AFailingDeviceIsToldAsEvents) {
  DaemonFixture d(
      [](daemon::DaemonConfig& c) {
        c.listeners.metrics = daemon::ListenAddress{"127.0.0.1", 0};
        c.backend.scenario = "ecc-degradation";  // uncorrectable HBM errors on ND3 from 3 min
        c.backend.speed = 60;
        c.period = milliseconds(200);  // 12 simulated seconds a sample
      },
      "sim:trn1.32xlarge");
  const std::uint16_t port = d.metrics_port().value_or(0);
  bool failed = false, counted = false;
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  std::vector<nlohmann::json> events;
  while (!(failed && counted) && std::chrono::steady_clock::now() < deadline) {
    const auto r = Fetch(port, "/events");
    ASSERT_TRUE(r.has_value()) << "no answer from /events";
    events = Lines(r->body);
    for (const nlohmann::json& e : events) {
      if (e["kind"] == "device_health" && e["after"] == "failed") {
        failed = true;
        EXPECT_EQ(e["subject"]["neuron_device_index"], 3);
        ASSERT_FALSE(e["reasons"].empty());
        EXPECT_EQ(e["reasons"][0]["code"], "mem_ecc_uncorrected") << e.dump();
      }
      if (e["kind"] == "hardware_error" &&
          e["after"].get<std::string>().find("mem_ecc_uncorrected") != std::string::npos) {
        counted = true;
        EXPECT_EQ(e["subject"]["neuron_device_index"], 3);
        EXPECT_EQ(e["evidence"][0]["name"], "mem_ecc_uncorrected") << e.dump();
        EXPECT_GE(e["evidence"][0]["value"].get<double>(), 1);
      }
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
  EXPECT_TRUE(failed) << "no device_health failed event in " << nlohmann::json(events).dump();
  EXPECT_TRUE(counted) << "no hardware_error event in " << nlohmann::json(events).dump();
  // Seqs are consecutive from 1.
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i]["seq"], i + 1);
}

}  // namespace
}  // namespace neuronmon::testing
