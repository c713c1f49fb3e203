// Fuzzes the daemon's stream session state machine end to end: one long-lived DaemonCore and
// StreamServer (built once, as the daemon wires them: the simulated trn1.2xlarge, a 1 s period and
// a 20 s history) serve one connection per input, over a socketpair (the embedded transport) or
// loopback TCP that requires the auth token. The first input byte picks the transport, the
// server's limits (within what the config allows) and how the rest is read:
//   raw:        bytes written in chunks of a chosen size, the daemon driven between chunks;
//   structured: a sequence of operations — Hello (any version, right/wrong/no token), Subscribe
//               (any groups, periods, tag filters, resume_after_seq around the history), Heartbeat,
//               any other Envelope, garbage bytes, a sample (DaemonCore::Sample, then Broadcast and
//               Heartbeat as the daemon's sampling timer does), a sweep at a later time
//               (CheckStuck's deadlines), NoticeAll (a reload), the client pausing its reads or
//               half-closing.
// Whatever the daemon answers must decode as frames. Invariants, checked after the client
// closes: the server removes the session within a bounded number of io_context polls (else the
// session leaked), and every byte it queued is accounted back (queued_bytes_total() == 0).
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/core/backend.h"
#include "daemon/core/daemon_core.h"
#include "daemon/core/host_reader.h"
#include "daemon/server/asio.h"
#include "daemon/server/log.h"
#include "daemon/server/stream_server.h"
#include "proto/wire/frame_codec.h"
#include "proto/wire/protobuf_logs.h"
#include "tests/fuzz/fuzz_flags.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/session_ops.h"

namespace neuronmon::fuzz {
namespace {

namespace asio = daemon::asio;
using std::chrono::milliseconds;
using std::chrono::seconds;
using RealClock = std::chrono::steady_clock;

constexpr std::string_view kToken = "fuzz-token-6b1d0c2f9e";
constexpr Nanos kPeriod = seconds(1);
constexpr int kMaxOps = 96;
constexpr int kMaxWaits = 2;  // real-time waits (for a 1 ms subscribe_interval) per input
// The bound within which a closed client's session must be gone: generous, since it is real time
// on a loaded machine, but a session that outlives it is a leak.
constexpr int kMaxClosePolls = 4000;

// Tag filters worth trying beside the fuzzer's own: real tags, RE2 syntax errors, patterns at
// and over the memory budget, Unicode classes.
constexpr const char* kFilters[] = {
    "llama",
    "^llama3-8b-rank[0-9]+$",
    "vllm-replica1|llama3-8b-rank0",
    "(a|b)*c",
    "[",
    "\\pL{1000}",
    "(?i)RANK",
    ".*",
    "\\C",
    "x{1001}",
    "((((((((((a))))))))))",
    "^$",
    "(?P<n>rank)",
    "\\x{110000}",
    "[[:alpha:]]+",
    "a{2,1}",
    "\\b\\B",
    "(?s).{0,100}rank",
};

std::string StatText(int tick) {
  const std::uint64_t t = static_cast<std::uint64_t>(tick);
  return "cpu  " + std::to_string(5000 + 40 * t) + " 0 " + std::to_string(800 + 6 * t) + " " +
         std::to_string(90000 + 50 * t) + " 10 0 3 0 0 0\ncpu0 " + std::to_string(5000 + 40 * t) +
         " 0 " + std::to_string(800 + 6 * t) + " " + std::to_string(90000 + 50 * t) +
         " 10 0 3 0 0 0\nbtime 1767225000\n";
}

constexpr std::string_view kMeminfo =
    "MemTotal:       32330276 kB\nMemFree:        20000000 kB\nMemAvailable:   30000000 kB\n";

// The daemon, built once and kept for the fuzzer's lifetime.
struct World {
  World() {
    daemon::LoggerOptions options;
    null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    options.fd = null_fd;
    options.threshold = daemon::LogSeverity::kDebug;  // so every message is built, and fuzzed
    log = std::make_unique<daemon::Logger>(options);
    sim_now = RealClock::now();
    auto backend = daemon::MakeBackend({"sim:trn1.2xlarge", "healthy-training", 1, 1}, sim_now);
    if (!backend.ok()) Die("backend: " + backend.status().message());
    core = std::make_unique<daemon::DaemonCore>(
        daemon::CoreOptions{kPeriod, seconds(20), "fuzz", 42}, std::move(*backend),
        [this] { return daemon::HostFromText(StatText(host_tick++), kMeminfo); });
    server = std::make_unique<daemon::StreamServer>(io, *core, *log, stats, daemon::ServerLimits{},
                                                    std::string(kToken));
    if (Status s = server->ListenTcp("127.0.0.1", 0, /*requires_token=*/true); !s.ok()) {
      Die("listen: " + s.message());
    }
    const std::string where = server->listening_on().front();  // "tcp:127.0.0.1:PORT"
    tcp_port = static_cast<std::uint16_t>(std::stoi(where.substr(where.rfind(':') + 1)));
    // Well past model loading, so runtimes (and their tags) exist.
    for (int i = 0; i < 30; ++i) Sample();
  }

  static void Die(const std::string& why) {
    std::fprintf(stderr, "session_fuzz: %s\n", why.c_str());
    std::abort();
  }

  // What Daemon::OnSampleTimer does after each tick; simulated time advances one period.
  void Sample() {
    sim_now += kPeriod;
    core->Sample(sim_now, std::chrono::system_clock::now());
    server->Broadcast();
    server->Heartbeat(RealClock::now());
  }

  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  int null_fd = -1;
  std::unique_ptr<daemon::Logger> log;
  daemon::DaemonStats stats;
  std::unique_ptr<daemon::DaemonCore> core;
  std::unique_ptr<daemon::StreamServer> server;
  std::uint16_t tcp_port = 0;
  MonoTime sim_now;
  int host_tick = 0;
};

World& TheWorld() {
  static World world;
  return world;
}

struct Setup {
  bool structured, tcp, reading;
  daemon::ServerLimits limits;
};

Setup SetupOf(std::uint8_t b) {
  Setup s{(b & kStructured) != 0, (b & kTcp) != 0, (b & kNotReading) == 0, {}};
  constexpr Nanos kIntervals[] = {Nanos(0), Nanos(0), milliseconds(1), seconds(1)};
  s.limits.subscribe_interval = kIntervals[(b & kIntervalMask) >> 2];
  if (b & kShortQueue) {
    s.limits.queue_depth = 2;
    s.limits.max_queue_bytes = 1 << 20;
    s.limits.max_queued_bytes_total = 1 << 20;
  }
  if (b & kFewControlFrames) s.limits.max_control_frames = 4;
  if (b & kShortDeadlines) {
    s.limits.subscribe_timeout = seconds(1);
    s.limits.idle_timeout = seconds(1);
    s.limits.heartbeat_interval = milliseconds(100);
  }
  return s;
}

std::string Hex(std::string_view bytes) {
  std::string out;
  char hex[4];
  for (unsigned char c : bytes) {
    std::snprintf(hex, sizeof hex, "%02x ", c);
    out += hex;
  }
  return out;
}

// The client end of one connection: what it has yet to write, and a decoder for the answers.
class Client {
 public:
  Client(World& w, int fd, bool reading) : w_(w), fd_(fd), reading_(reading) {}
  ~Client() { Close(); }

  void Append(std::string_view bytes) { pending_.append(bytes); }
  void AppendFrame(const v1::Envelope& e) {
    if (auto frame = wire::EncodeFrame(e, wire::kDefaultInboundMaxFrame * 2); frame.ok()) {
      pending_ += *frame;
    }
  }
  void set_reading(bool reading) { reading_ = reading; }
  bool reading() const { return reading_; }
  void HalfClose() {
    Flush();
    ::shutdown(fd_, SHUT_WR);
    half_closed_ = true;
  }

  // Runs the daemon's ready handlers, writes and reads until nothing moves (bounded).
  void Drive() {
    for (int i = 0; i < 32; ++i) {
      const std::size_t ran = w_.io.poll();
      const bool wrote = Flush();
      const bool read = Read();
      if (ran == 0 && !wrote && !read) return;
    }
  }

  void Close() {
    if (fd_ < 0) return;
    ::close(fd_);
    fd_ = -1;
  }

 private:
  bool Flush() {
    if (pending_.empty() || half_closed_ || fd_ < 0) return false;
    const ssize_t n = ::send(fd_, pending_.data(), pending_.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n <= 0) {
      // EAGAIN: the daemon is not reading now; EPIPE/ECONNRESET: it closed. Either way the rest
      // waits (or is dropped when the connection ends).
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) pending_.clear();
      return false;
    }
    pending_.erase(0, static_cast<std::size_t>(n));
    return true;
  }

  bool Read() {
    if (!reading_ || fd_ < 0) return false;
    bool any = false;
    char buffer[64 * 1024];
    for (;;) {
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n <= 0) return any;
      any = true;
      std::string_view input(buffer, static_cast<std::size_t>(n));
      received_.append(input.substr(input.size() > 256 ? input.size() - 256 : 0));
      if (received_.size() > 256) received_.erase(0, received_.size() - 256);
      while (!input.empty()) {
        v1::Envelope e;
        const auto outcome = decoder_.Decode(input, e);
        if (outcome == wire::FrameDecoder::Outcome::kNeedMore) break;
        if (outcome == wire::FrameDecoder::Outcome::kError) {
          World::Die("the daemon sent an undecodable frame: " + decoder_.error_message() +
                     "; the bytes received last: " + Hex(received_));
        }
      }
    }
  }

  World& w_;
  int fd_;
  bool reading_;
  bool half_closed_ = false;
  std::string pending_;
  std::string received_;  // the last bytes read, for a diagnosis
  wire::FrameDecoder decoder_{wire::kDefaultOutboundMaxFrame};
};

// A connected client socket, its session admitted by the server; -1 when loopback TCP is out of
// ports or descriptors (the input is skipped).
int Connect(World& w, bool tcp) {
  const std::size_t before = w.server->session_count();
  if (!tcp) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) != 0) return -1;
    w.server->ServeConnected(fds[1], daemon::Transport::kEmbedded);
    return fds[0];
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // Closing with a reset leaves no TIME_WAIT behind, so millions of inputs do not exhaust the
  // loopback's ports; the daemon sees ECONNRESET instead of EOF, which it must handle too.
  const linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(w.tcp_port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  for (int i = 0; i < 1000 && w.server->session_count() == before; ++i) {
    if (w.io.poll() == 0) w.io.run_one_for(milliseconds(1));
  }
  if (w.server->session_count() == before) World::Die("a loopback connection was never accepted");
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  return fd;
}

std::uint64_t ResumePoint(FuzzInput& in, const daemon::History& history) {
  const std::uint64_t newest = history.newest_seq();
  const std::uint64_t oldest = history.oldest_seq();
  switch (in.Pick(10)) {
    case 0:
      return 0;
    case 1:
      return newest;
    case 2:
      return newest - 1;
    case 3:
      return newest - std::min<std::uint64_t>(newest, in.U8());
    case 4:
      return newest + 1 + in.U8();
    case 5:
      return ~std::uint64_t{0};
    case 6:
      return oldest - 1;
    case 7:
      return oldest;
    case 8:
      return oldest - std::min<std::uint64_t>(oldest, 1 + in.U8());
    default:
      return in.U64();
  }
}

v1::Envelope MakeSubscribe(FuzzInput& in, const daemon::DaemonCore& core) {
  v1::Envelope e;
  v1::Subscribe& s = *e.mutable_subscribe();
  const std::size_t groups = in.Pick(14);
  for (std::size_t i = 0; i < groups; ++i) {
    v1::GroupSubscription& g = *s.add_groups();
    const std::uint8_t which = in.U8();
    g.set_group(static_cast<v1::Group>(which < 240 ? which % 22 : static_cast<int>(in.U32())));
    constexpr std::uint64_t kDay = 86'400'000'000'000ULL;
    const std::uint64_t periods[] = {0, 1'000'000'000, 5'000'000'000, kDay, kDay + 1, 1};
    const std::size_t p = in.Pick(8);
    g.set_period_ns(p < 6 ? periods[p] : p == 6 ? in.U64() : in.U16() * 1'000'000ULL);
  }
  switch (in.Pick(5)) {
    case 0:
      break;
    case 1:
    case 2:
      s.set_tag_filter(kFilters[in.Pick(std::size(kFilters))]);
      break;
    case 3:
      s.set_tag_filter(in.String(40));
      break;
    default:
      s.set_tag_filter(in.String(300));  // over the 256-byte limit sometimes
  }
  if (in.Bool()) s.set_resume_after_seq(ResumePoint(in, core.history()));
  return e;
}

v1::Envelope MakeHello(FuzzInput& in) {
  v1::Envelope e;
  v1::Hello& h = *e.mutable_hello();
  const std::uint32_t versions[] = {1, 1, 0, 2};
  const std::size_t v = in.Pick(5);
  h.set_protocol_version(v < 4 ? versions[v] : in.U32());
  switch (in.Pick(4)) {
    case 0:
    case 1:
      h.set_token(std::string(kToken));
      break;
    case 2:
      break;
    default:
      h.set_token(in.String(64));
  }
  h.set_client_name(in.String(100));  // escape sequences, invalid UTF-8: logged when debugging
  return e;
}

// Runs the structured program; returns when the input ends or the client half-closed.
void RunStructured(FuzzInput& in, World& w, Client& client) {
  int waits = 0;
  for (int op = 0; op < kMaxOps && !in.empty(); ++op) {
    switch (static_cast<Op>(in.Pick(static_cast<std::size_t>(Op::kCount)))) {
      case Op::kHello:
        client.AppendFrame(MakeHello(in));
        break;
      case Op::kSubscribe:
        client.AppendFrame(MakeSubscribe(in, *w.core));
        break;
      case Op::kHeartbeat: {
        v1::Envelope e;
        e.mutable_heartbeat()->set_newest_seq(in.U64());
        e.mutable_heartbeat()->set_wall_time_unix_ns(static_cast<std::int64_t>(in.U64()));
        client.AppendFrame(e);
        break;
      }
      case Op::kGarbage:
        client.Append(in.String(255));
        break;
      case Op::kEnvelope: {
        // Any Envelope the bytes parse as: Welcome, Report, Error... which clients may not send.
        v1::Envelope e;
        const std::string bytes = in.String(255);
        if (e.ParseFromString(bytes)) client.AppendFrame(e);
        break;
      }
      case Op::kSample:
        w.Sample();
        break;
      case Op::kSweep: {
        const Nanos later[] = {Nanos(0), seconds(2), seconds(6), seconds(11), seconds(31)};
        w.server->Heartbeat(RealClock::now() + later[in.Pick(std::size(later))]);
        break;
      }
      case Op::kDrive:
        break;
      case Op::kToggleRead:
        client.set_reading(!client.reading());
        break;
      case Op::kWait:
        if (waits++ < kMaxWaits) w.io.run_for(milliseconds(2));
        break;
      case Op::kNotice: {
        v1::Notice notice;
        notice.set_kind(static_cast<v1::NoticeKind>(in.U8() % 7));
        // The daemon's own text (a reload names the device and scenario): valid UTF-8.
        std::string text = in.String(64);
        for (char& c : text) c = static_cast<char>(c & 0x7f);
        notice.set_text(text);
        w.server->NoticeAll(notice);
        break;
      }
      case Op::kHalfClose:
        client.HalfClose();
        client.Drive();
        return;
      case Op::kCount:
        break;
    }
    client.Drive();
  }
}

void RunRaw(FuzzInput& in, Client& client) {
  const std::size_t chunk = 1 + in.U8();
  while (!in.empty()) {
    client.Append(in.Bytes(chunk));
    client.Drive();
  }
}

// After the client closed: the session must go, and everything it queued be accounted back.
void ExpectSessionGone(World& w) {
  for (int i = 0; i < kMaxClosePolls && w.server->session_count() > 0; ++i) {
    if (w.io.poll() == 0) w.io.run_one_for(milliseconds(1));
  }
  while (w.io.poll() > 0) {
  }
  if (w.server->session_count() != 0) {
    World::Die("leak: " + std::to_string(w.server->session_count()) +
               " session(s) still open after the client closed");
  }
  if (w.server->queued_bytes_total() != 0) {
    World::Die("leak: " + std::to_string(w.server->queued_bytes_total()) +
               " queued bytes still counted with no session left");
  }
  for (std::uint64_t n : w.stats.clients) {
    if (n != 0) World::Die("stats.clients counts a client that is gone");
  }
}

}  // namespace
}  // namespace neuronmon::fuzz

// Protobuf logs each string field with invalid UTF-8 it meets; thousands a second drown the
// fuzzer's output and slow it down (the daemon's own silencing; FATAL still shows). -entropic=0: a
// session run touches ~90,000 features, and libFuzzer's entropic schedule spent 84% of the time
// updating their frequencies (154 execs/s; 700 without).
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  neuronmon::wire::SilenceProtobufParseLogs();
  static char entropic_off[] = "-entropic=0";
  neuronmon::fuzz::PrependDefaultFlags(argc, argv, {entropic_off});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neuronmon::fuzz;
  World& w = TheWorld();
  FuzzInput in(data, size);
  const Setup setup = SetupOf(in.U8());
  w.server->SetLimits(setup.limits);
  const int fd = Connect(w, setup.tcp);
  if (fd < 0) return 0;
  {
    Client client(w, fd, setup.reading);
    client.Drive();
    setup.structured ? RunStructured(in, w, client) : RunRaw(in, client);
    client.Close();
  }
  ExpectSessionGone(w);
  return 0;
}
