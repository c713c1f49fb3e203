// Client: a connection to neuron-monitord (or to a daemon embedded in this process) that does the
// handshake, subscribes, and turns the stream into events. A background thread owns the socket:
// it reads, decodes, answers nothing the caller must wait for, and after losing the daemon it
// reconnects with capped, jittered exponential backoff and resumes after the last report it
// delivered, so within the daemon's retention nothing is lost (anything older arrives as a gap
// event). Callers take events with Next() from any one thread, or wait on notify_fd() in their own
// poll loop. A hostile daemon cannot make it hold much: frames are bounded in size and in the
// number of fields they hold before they are parsed, the inventory is checked, the event queue is
// bounded (the reader stops reading when it is full), connects and silent streams time out, and
// over a unix socket the daemon must run as root, the user or neuron-monitor (SO_PEERCRED) before
// it gets the token; over TCP the token goes only to a daemon whose TLS certificate and name were
// verified (or to any with TlsClientOptions::insecure). Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "neuronmon/v1/envelope.pb.h"
#include "proto/common/clock.h"
#include "proto/common/simulator_options.h"
#include "proto/common/status.h"

namespace neuronmon::client {

// What an in-process daemon simulates (--standalone with --device, --scenario, --seed, --speed).
using SimulatorOptions = neuronmon::SimulatorOptions;

// A daemon inside this process (--standalone, and the fallback when no daemon socket exists),
// served over a socketpair exactly as a unix-socket client is. The client library does not start
// one itself — it depends on no daemon code: programs inject a LocalDaemonStarter
// (client/embedded_simulator.h gives the simulator's). Thread-safe: Connect from any thread.
class LocalDaemon {
 public:
  virtual ~LocalDaemon() = default;
  // A new connected stream socket served by the daemon; the caller owns the fd.
  virtual Result<int> Connect() = 0;
};
using LocalDaemonStarter =
    std::function<Result<std::shared_ptr<LocalDaemon>>(const SimulatorOptions& options)>;

// TLS to a TCP daemon (its listeners.tcp.tls): --tls, --tls-ca, --tls-cert/--tls-key,
// --tls-server-name and --insecure, or a hosts-file line's server_name= and tls_ca=.
struct TlsClientOptions {
  bool enabled = false;   // TLS at all (the flags set it when any of the files or names is given)
  std::string ca_file;    // PEM CAs that may sign the daemon's certificate; "": the system's store
  std::string cert_file;  // PEM client certificate (chain) for mutual TLS, with `key_file`
  std::string key_file;   // its private key: a file other users cannot read, not encrypted
  std::string server_name;  // the name the certificate must hold; "": the endpoint's host
  // With TLS: the certificate and name are not verified. Without: the token may be sent over
  // plaintext TCP. Either way the program says so on stderr (InsecureNotice).
  bool insecure = false;
};

struct Endpoint {
  enum class Kind {
    kAuto,        // the daemon's socket if one exists, else an embedded daemon (with a notice)
    kUnix,        // `path`
    kTcp,         // `host`:`port`
    kStandalone,  // always an embedded daemon
  };
  Kind kind = Kind::kAuto;
  std::string path;
  std::string host;
  std::uint16_t port = 0;
  TlsClientOptions tls;         // kTcp only
  SimulatorOptions standalone;  // what an in-process daemon simulates
  // Starts the in-process daemon for kStandalone, and for kAuto when no socket exists. Unset:
  // those fail with an error (the program has no simulator).
  LocalDaemonStarter start_local;
  // An in-process daemon already running, used instead of starting one: several clients of one
  // program share it (Client::local_daemon()).
  std::shared_ptr<LocalDaemon> local;
};

// Where a program told no endpoint finds its daemon (Endpoint::kAuto): the first of the usual
// socket paths that is a socket in a directory that is safely ours; nullopt when there is none,
// with `*looked` naming where it looked (and the sockets it ignored, and why).
std::optional<std::string> FindDaemonSocket(std::string* looked);

// Parses "--connect HOST:PORT" ("[::1]:9414" for IPv6).
Result<Endpoint> TcpEndpoint(std::string_view host_port);

struct ClientOptions {
  std::string client_name = "neuronmon-client";
  Endpoint endpoint;
  v1::Subscribe subscribe;  // sent after every (re)connect; resume_after_seq is managed here
  // For TCP listeners that require it. Over TCP it is sent only after a verified TLS handshake,
  // or with endpoint.tls.insecure: Connect refuses plaintext TCP with a token otherwise.
  std::string token;
  bool reconnect = true;
  Nanos initial_backoff = std::chrono::milliseconds(100);
  Nanos max_backoff = std::chrono::seconds(5);
  Nanos connect_timeout = std::chrono::seconds(5);
  Nanos handshake_timeout = std::chrono::seconds(5);
  // Nothing at all from the daemon for this long (it heartbeats every few seconds when idle): the
  // connection is treated as lost, and re-established.
  Nanos stall_timeout = std::chrono::seconds(20);
  // Events waiting for Next(): when this many are queued the client stops reading the socket, so
  // the daemon, not this process, holds (and drops, with gap notices) what the caller cannot take.
  // At least 4 (Connect itself queues two before its caller can take any).
  std::size_t max_queued_events = 1024;
  // And at most this many bytes of reports (serialized size; a 64-device report is ~150 KB):
  // 1,024 of those would otherwise be held in memory while the caller is stalled.
  std::size_t max_queued_bytes = 32 << 20;
  // Sent once, after the first Subscribe (neuron-report --start/--stop): the daemon answers with
  // a NOTICE_KIND_JOB_MARKED notice or an ERROR_CODE_REFUSED error.
  std::optional<v1::JobMark> job_mark;
};

struct Event {
  enum class Kind {
    kConnected,  // handshake done: `welcome` (also after each reconnect)
    kReport,     // `report`
    kGap,        // reports `notice.first_seq`..`last_seq` will never arrive
    kNotice,     // any other daemon notice (subscribed, reloaded, shutdown)
    kError,      // the daemon refused something: `error` (fatal ones are followed by kDisconnected)
    kDisconnected,  // lost the daemon: `text`; reconnecting unless reconnect is off
    kInfo,    // something the user should know (`text`), e.g. running the simulator in-process
    kRecord,  // `record`: a snapshot record (Subscribe.snapshots), for a --record file
    // `event` (Subscribe.events): what changed (docs/events.md). After a reconnect the client
    // resumes after the last one delivered; after a daemon restart, from the new daemon's first.
    kEvent,
  };
  Kind kind = Kind::kInfo;
  v1::Welcome welcome;
  v1::Report report;
  v1::Notice notice;
  v1::Error error;
  v1::ArchiveRecord record;
  v1::Event event;
  std::string text;
};

class Client {
 public:
  // Resolves the endpoint and connects once, synchronously: returns an error when the first
  // connection or handshake fails (e.g. no daemon at an explicit path; over TLS, a certificate or
  // name that does not verify, a peer that does not speak TLS — each named in the message), or
  // before connecting at all when a token would go over plaintext TCP without tls.insecure, or
  // when the TLS files cannot be loaded. connect_timeout bounds connect(2) and the TLS handshake
  // each. Later losses reconnect.
  static Result<std::unique_ptr<Client>> Connect(ClientOptions options);
  ~Client();

  // The next event, waiting up to `timeout`; nullopt on timeout, or once the client has stopped
  // (reconnect off and disconnected) and every event was taken.
  std::optional<Event> Next(Nanos timeout);
  // Readable while events are queued (level-triggered); for poll()-based loops.
  int notify_fd() const;
  // Replaces the subscription (sent now, and after reconnects).
  void Resubscribe(const v1::Subscribe& subscribe);
  // The Welcome of the current connection.
  v1::Welcome welcome() const;
  // "unix:/run/neuron-monitor/neuron-monitord.sock", "tcp:host:port" or "embedded simulator".
  std::string endpoint_description() const;
  bool standalone() const;
  // The in-process daemon this client talks to (null over a socket), to share with other clients.
  std::shared_ptr<LocalDaemon> local_daemon() const;
  // Where this client connected, resolved: kAuto became kUnix with the socket it found or
  // kStandalone with `local` set. Another client given it reaches the same daemon.
  Endpoint endpoint() const;
  // Events waiting for Next() (never more than max_queued_events).
  std::size_t queued_events() const;
  // False once the client gave up (reconnect off, or the embedded daemon ended).
  bool running() const;
  // While reconnecting: when the next attempt is due.
  std::optional<std::chrono::steady_clock::time_point> next_retry() const;

 private:
  struct State;
  explicit Client(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// The delay before a reconnect attempt: `backoff` scaled into [50 %, 100 %] by `unit_random` (in
// [0, 1)), so that clients that lost the same daemon do not all come back at the same instant.
Nanos JitteredBackoff(Nanos backoff, double unit_random);

// Whether an inventory is one a real daemon could send: at most 4,096 devices, 256 NeuronCores per
// device (in the hardware info and in each device's list), 4,096 connections per device and
// 65,536 processes; errors (kInvalidArgument) say which count is out of bounds.
Status CheckInventory(const v1::Inventory& inventory);

// Connects (sending `token`, under Client::Connect's rules), takes the Welcome and disconnects:
// the inventory for neuron-ls.
Result<v1::Welcome> FetchWelcome(const Endpoint& endpoint, const std::string& client_name,
                                 std::string* description, std::string* notice,
                                 const std::string& token = "");

// Ok unless `token` would go over plaintext TCP to `endpoint` without tls.insecure; then
// kFailedPrecondition, "refusing to send the token to HOST:PORT over plaintext TCP: pass --tls-ca
// (the daemon's listeners.tcp.tls) or --insecure". Client::Connect checks it before connecting.
Status CheckTokenTransport(const Endpoint& endpoint, const std::string& token);

// What --insecure leaves unverified for `endpoint` (a TCP one with tls.insecure), as the one line
// a program prints on stderr after its name: "--insecure: the token goes to HOST:PORT without
// verifying who serves it"; "" when nothing is unverified.
std::string InsecureNotice(const Endpoint& endpoint, bool sends_token);

}  // namespace neuronmon::client
