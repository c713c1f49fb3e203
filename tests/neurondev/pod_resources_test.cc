// PodResourcesClient against a fake kubelet serving the PodResources API on a unix socket in a
// temporary directory: canned pods parsed and bounded, a kubelet that answers late (an error by
// the deadline, and no blocking meanwhile), one that fails, and no socket at all (not on
// Kubernetes). The fake is a real gRPC server, so a test waits for the client's answer through
// Poll's `wait`, which returns as soon as the answer is in.
#include "neurondev/pod_resources.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>

#include "tests/neurondev/fake_kubelet.h"
#include "tests/neurondev/tree_writer.h"

namespace neuronmon::neurondev {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeDevices;
using testing::FakeKubelet;
using testing::FakeTree;

const MonoTime kStart = MonoTime() + seconds(1000);

PodResourcesOptions OptionsIn(const FakeTree& dir) {
  PodResourcesOptions o;
  o.socket_path = dir.root() + "/kubelet.sock";
  o.deadline = seconds(5);
  return o;
}

// Starts a call and waits for its answer (bounded: every call ends by its deadline).
void Ask(PodResourcesClient& client, MonoTime now) {
  client.Poll(now);
  client.Poll(now, client.options().deadline + seconds(5));
}

const std::vector<FakeDevices> kPods = {
    {"train-0", "ml", "worker", "aws.amazon.com/neuron", {"0", "1"}},
    {"train-0", "ml", "worker", "nvidia.com/gpu", {"GPU-1"}},
    {"train-0", "ml", "sidecar", "example.com/nic", {"eth1"}},
    {"infer-1", "serving", "model", "aws.amazon.com/neuroncore", {"12", "13"}},
};

TEST(PodResourcesClient, ListsTheNeuronAllocationsOfEveryPod) {
  FakeTree dir;
  FakeKubelet kubelet(dir.root() + "/kubelet.sock");
  kubelet.Serve(kPods);
  PodResourcesClient client(OptionsIn(dir));
  EXPECT_EQ(client.state(), PodResourcesState::kPending);
  Ask(client, kStart);
  ASSERT_EQ(client.state(), PodResourcesState::kKnown) << client.status();
  EXPECT_EQ(client.status(), "");
  const std::vector<ContainerDeviceIds> want = {
      {"train-0", "ml", "worker", "aws.amazon.com/neuron", {"0", "1"}},
      {"infer-1", "serving", "model", "aws.amazon.com/neuroncore", {"12", "13"}},
  };
  EXPECT_EQ(client.listing().entries, want);
  EXPECT_EQ(client.listing().dropped, 0u);
  EXPECT_EQ(client.listing().clipped, 0u);
  EXPECT_EQ(kubelet.calls(), 1);
}

TEST(PodResourcesClient, AsksAgainOnlyAfterTheRefreshInterval) {
  FakeTree dir;
  FakeKubelet kubelet(dir.root() + "/kubelet.sock");
  kubelet.Serve(kPods);
  PodResourcesClient client(OptionsIn(dir));  // refresh: 10 s
  Ask(client, kStart);
  Ask(client, kStart + seconds(9));
  EXPECT_EQ(kubelet.calls(), 1);
  kubelet.Serve({{"next", "ml", "worker", "aws.amazon.com/neuron", {"5"}}});
  Ask(client, kStart + seconds(10));
  EXPECT_EQ(kubelet.calls(), 2);
  ASSERT_EQ(client.listing().entries.size(), 1u);
  EXPECT_EQ(client.listing().entries[0].pod, "next");
}

TEST(PodResourcesClient, BoundsWhatItKeeps) {
  FakeTree dir;
  FakeKubelet kubelet(dir.root() + "/kubelet.sock");
  kubelet.Serve({
      {std::string(300, 'p'), "ml", "worker", "aws.amazon.com/neuron", {"0", "1", "2"}},
      {"b", "ml", "worker", "aws.amazon.com/neuroncore", {std::string(100, '7'), "4"}},
      {"c", "ml", "worker", "aws.amazon.com/neuron", {"9"}},
  });
  PodResourcesOptions o = OptionsIn(dir);
  o.max_entries = 2;
  o.max_ids_per_entry = 2;
  PodResourcesClient client(o);
  Ask(client, kStart);
  ASSERT_EQ(client.state(), PodResourcesState::kKnown) << client.status();
  const PodResourcesListing& l = client.listing();
  ASSERT_EQ(l.entries.size(), 2u);
  EXPECT_EQ(l.entries[0].pod, std::string(253, 'p'));
  EXPECT_EQ(l.entries[0].device_ids, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(l.entries[1].device_ids, (std::vector<std::string>{"4"}));
  EXPECT_EQ(l.clipped, 1u);
  EXPECT_EQ(l.dropped, 3u);  // id "2", the 100-digit id, entry "c"
}

// Ids are bounded over the whole answer too: many entries of a few short ids each fit the message
// limit but would carry the inventory past a frame.
TEST(PodResourcesClient, BoundsTheIdsOfTheWholeAnswer) {
  FakeTree dir;
  FakeKubelet kubelet(dir.root() + "/kubelet.sock");
  kubelet.Serve({
      {"a", "ml", "worker", "aws.amazon.com/neuron", {"0", "1", "2"}},
      {"b", "ml", "worker", "aws.amazon.com/neuron", {"3", "4"}},
      {"c", "ml", "worker", "aws.amazon.com/neuron", {"5"}},
  });
  PodResourcesOptions o = OptionsIn(dir);
  o.max_device_ids = 4;
  PodResourcesClient client(o);
  Ask(client, kStart);
  ASSERT_EQ(client.state(), PodResourcesState::kKnown) << client.status();
  const PodResourcesListing& l = client.listing();
  ASSERT_EQ(l.entries.size(), 3u);
  EXPECT_EQ(l.entries[0].device_ids, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(l.entries[1].device_ids, (std::vector<std::string>{"3"}));
  EXPECT_TRUE(l.entries[2].device_ids.empty());
  EXPECT_EQ(l.device_ids, 4u);
  EXPECT_EQ(l.dropped, 2u);  // ids "4" and "5"
}

TEST(PodResourcesClient, AnAnswerLargerThanTheLimitIsAnError) {
  FakeTree dir;
  FakeKubelet kubelet(dir.root() + "/kubelet.sock");
  std::vector<FakeDevices> many;
  for (int i = 0; i < 200; ++i) {
    many.push_back({"pod-" + std::to_string(i), "ml", "w", "aws.amazon.com/neuron", {"0"}});
  }
  kubelet.Serve(many);
  PodResourcesOptions o = OptionsIn(dir);
  o.max_message_bytes = 1024;
  PodResourcesClient client(o);
  Ask(client, kStart);
  EXPECT_EQ(client.state(), PodResourcesState::kFailed);
  EXPECT_NE(client.status().find("RESOURCE_EXHAUSTED"), std::string::npos) << client.status();
  EXPECT_TRUE(client.listing().entries.empty());
}

TEST(PodResourcesClient, ASlowKubeletIsAnErrorByTheDeadlineAndNeverBlocksPoll) {
  FakeTree dir;
  FakeKubelet kubelet(dir.root() + "/kubelet.sock");
  kubelet.Serve(kPods);
  kubelet.AnswerAfter(milliseconds(60'000));
  PodResourcesOptions o = OptionsIn(dir);
  o.deadline = milliseconds(300);
  PodResourcesClient client(o);
  client.Poll(kStart);  // starts the call and returns: the kubelet has not answered
  EXPECT_EQ(client.state(), PodResourcesState::kPending);
  client.Poll(kStart);
  EXPECT_EQ(client.state(), PodResourcesState::kPending);
  const auto before = std::chrono::steady_clock::now();
  client.Poll(kStart, seconds(30));
  EXPECT_LT(std::chrono::steady_clock::now() - before, seconds(20));  // ended by the deadline
  EXPECT_EQ(client.state(), PodResourcesState::kFailed);
  EXPECT_NE(client.status().find("DEADLINE_EXCEEDED"), std::string::npos) << client.status();
  EXPECT_NE(client.status().find(o.socket_path), std::string::npos);
}

TEST(PodResourcesClient, AFailingKubeletIsAnErrorAndTheOldAnswerIsDropped) {
  FakeTree dir;
  FakeKubelet kubelet(dir.root() + "/kubelet.sock");
  kubelet.Serve(kPods);
  PodResourcesClient client(OptionsIn(dir));
  Ask(client, kStart);
  ASSERT_EQ(client.state(), PodResourcesState::kKnown);
  kubelet.FailWith("kubelet is shutting down");
  Ask(client, kStart + seconds(10));
  EXPECT_EQ(client.state(), PodResourcesState::kFailed);
  EXPECT_NE(client.status().find("UNAVAILABLE: kubelet is shutting down"), std::string::npos)
      << client.status();
  EXPECT_TRUE(client.listing().entries.empty());
}

TEST(PodResourcesClient, NoSocketIsNotKubernetesAndDialsNothing) {
  FakeTree dir;
  PodResourcesClient client(OptionsIn(dir));
  Ask(client, kStart);
  EXPECT_EQ(client.state(), PodResourcesState::kNotKubernetes);
  EXPECT_EQ(client.status(),
            "not on Kubernetes (no kubelet socket at " + dir.root() + "/kubelet.sock)");
  // A kubelet that starts later is found at the next refresh.
  FakeKubelet kubelet(dir.root() + "/kubelet.sock");
  kubelet.Serve(kPods);
  Ask(client, kStart + seconds(10));
  EXPECT_EQ(client.state(), PodResourcesState::kKnown) << client.status();
}

TEST(PodResourcesClient, AFileThatIsNotASocketIsAnError) {
  FakeTree dir;
  dir.Write("kubelet.sock", "");
  PodResourcesClient client(OptionsIn(dir));
  Ask(client, kStart);
  EXPECT_EQ(client.state(), PodResourcesState::kFailed);
  EXPECT_NE(client.status().find("not a socket"), std::string::npos) << client.status();
}

TEST(PodResourcesClient, ASocketNobodyServesIsAnError) {
  FakeTree dir;
  // A socket bound and closed: its file stays, and connecting is refused (a kubelet that died).
  const std::string path = dir.root() + "/kubelet.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  path.copy(address.sun_path, sizeof address.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  ::close(fd);
  PodResourcesClient client(OptionsIn(dir));
  Ask(client, kStart);
  EXPECT_EQ(client.state(), PodResourcesState::kFailed) << client.status();
  EXPECT_NE(client.status().find("UNAVAILABLE"), std::string::npos) << client.status();
}

}  // namespace
}  // namespace neuronmon::neurondev
