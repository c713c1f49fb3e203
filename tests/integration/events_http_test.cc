// /events over real loopback TCP: the daemon's own "started" event first, NDJSON by default and
// Server-Sent Events on request, resumable with ?after= and Last-Event-ID, a bad resume point
// refused; and on a simulated device whose HBM starts failing, the health change, the new
// hardware errors and the verdict change arrive as events with their evidence.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
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
  const auto sse = Fetch(port, "/events", "Accept: text/event-stream\r\n");
  ASSERT_TRUE(sse.has_value());
  EXPECT_EQ(sse->Header("content-type"), "text/event-stream; charset=utf-8");
  EXPECT_EQ(sse->body.find("retry: 1000\n\nid: 1\nevent: daemon\ndata: {\"seq\":1,"), 0u)
      << sse->body;
  const auto resumed = Fetch(port, "/events", "Last-Event-ID: 1\r\n");
  ASSERT_TRUE(resumed.has_value());
  EXPECT_EQ(resumed->body.find("\"seq\":1,"), std::string::npos);
  const auto bad = Fetch(port, "/events?after=-3");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, 400);
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
