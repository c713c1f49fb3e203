// The client's TLS against a recording test server of its own (OpenSSL, in a thread, on
// 127.0.0.1): a verified handshake delivers the Hello with the token; a wrong CA, an expired
// certificate, a wrong name, a plaintext peer and a missing client certificate are each refused
// with a message that says which and what to change — and in each, the server never sees the
// token. --insecure reaches an unverified server (and tells it the token), a half TLS record does
// not stop the stall timeout, and plaintext TCP with a token is refused before connecting. Also
// the neuron-ls binary over TLS, end to end. Certificates: tests/tls_pki.h.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include "client/client.h"
#include "proto/wire/frame_codec.h"
#include "tests/temp_dir.h"
#include "tests/tls_pki.h"

namespace neuronmon::client {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kToken = "tls-test-token-7f3a9c";

struct ServerOptions {
  bool tls = true;
  std::string cert, key;
  std::string client_ca;        // set: require a client certificate signed by a CA in this file
  bool answer_welcome = true;   // to the first Hello (TLS, or a plaintext server)
  std::string plaintext_reply;  // a plaintext server writes this when bytes arrive, then closes
  bool half_record_after_welcome = false;  // then a TLS record header, and silence
};

// Accepts connections one at a time on 127.0.0.1 and records every byte it receives (decrypted,
// for TLS). Answers a Hello with a Welcome. Stopped and joined by its destructor.
class RecordingServer {
 public:
  explicit RecordingServer(ServerOptions options) : options_(std::move(options)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listen_fd_, 8), 0);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    if (options_.tls) ctx_ = MakeContext();
    thread_ = std::thread([this] { Serve(); });
  }

  ~RecordingServer() {
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    {
      std::lock_guard lock(mu_);
      if (conn_fd_ >= 0) ::shutdown(conn_fd_, SHUT_RDWR);
    }
    thread_.join();
    ::close(listen_fd_);
    SSL_CTX_free(ctx_);
  }

  std::uint16_t port() const { return port_; }
  int accepted() const { return accepted_; }

  // What it received, once every accepted connection has ended (at most 5 s).
  std::string Received() {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, seconds(5), [&] { return finished_ == accepted_; });
    return received_;
  }
  bool SawToken() { return Received().find(kToken) != std::string::npos; }

 private:
  SSL_CTX* MakeContext() {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    EXPECT_EQ(SSL_CTX_use_certificate_chain_file(ctx, options_.cert.c_str()), 1);
    EXPECT_EQ(SSL_CTX_use_PrivateKey_file(ctx, options_.key.c_str(), SSL_FILETYPE_PEM), 1);
    if (!options_.client_ca.empty()) {
      EXPECT_EQ(SSL_CTX_load_verify_locations(ctx, options_.client_ca.c_str(), nullptr), 1);
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
    return ctx;
  }

  void Serve() {
    while (!stop_) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      {
        std::lock_guard lock(mu_);
        conn_fd_ = fd;
        ++accepted_;
      }
      if (stop_) ::shutdown(fd, SHUT_RDWR);
      options_.tls ? ServeTls(fd) : ServePlain(fd);
      std::lock_guard lock(mu_);
      conn_fd_ = -1;
      ::close(fd);
      ++finished_;
      cv_.notify_all();
    }
  }

  void Record(const char* data, std::size_t n) {
    std::lock_guard lock(mu_);
    received_.append(data, n);
  }

  // The Welcome frame, once a Hello has arrived in `in` (fed as it comes).
  std::optional<std::string> Answer(wire::FrameDecoder& decoder, std::string_view in) {
    v1::Envelope e;
    while (!in.empty()) {
      if (decoder.Decode(in, e) != wire::FrameDecoder::Outcome::kFrame) break;
      if (!e.has_hello() || welcomed_) continue;
      welcomed_ = true;
      v1::Envelope welcome;
      welcome.mutable_welcome()->set_protocol_version(1);
      welcome.mutable_welcome()->set_daemon_version("test");
      welcome.mutable_welcome()->set_instance_id(42);
      v1::Inventory* inventory = welcome.mutable_welcome()->mutable_inventory();
      inventory->mutable_hardware_info()->set_neuron_device_count(1);
      inventory->mutable_hardware_info()->set_neuroncore_per_device_count(2);
      v1::Device* device = inventory->add_devices();
      device->set_core_count(2);
      device->add_core_ids(0);
      device->add_core_ids(1);
      device->set_pci_bdf("0000:cc:00.0");  // what neuron-ls prints, below
      return *wire::EncodeFrame(welcome);
    }
    return std::nullopt;
  }

  void ServeTls(int fd) {
    SSL* ssl = SSL_new(ctx_);
    SSL_set_fd(ssl, fd);
    welcomed_ = false;
    wire::FrameDecoder decoder(wire::kDefaultInboundMaxFrame, wire::kDefaultMaxFields);
    if (SSL_accept(ssl) == 1) {
      char buf[4096];
      for (;;) {
        const int n = SSL_read(ssl, buf, sizeof buf);
        if (n <= 0) break;
        Record(buf, static_cast<std::size_t>(n));
        if (std::optional<std::string> w = Answer(decoder, std::string_view(buf, n))) {
          SSL_write(ssl, w->data(), static_cast<int>(w->size()));
          // Half of a 16 KB application-data record: the client can decrypt nothing of it.
          if (options_.half_record_after_welcome) (void)!::write(fd, "\x17\x03\x03\x40\x00", 5);
        }
      }
    } else {
      // The client hangs up after its alert; wait for that so our close does not reset it.
      char buf[256];
      while (::recv(fd, buf, sizeof buf, 0) > 0) {
      }
    }
    ERR_clear_error();
    SSL_free(ssl);
  }

  void ServePlain(int fd) {
    welcomed_ = false;
    wire::FrameDecoder decoder(wire::kDefaultInboundMaxFrame, wire::kDefaultMaxFields);
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      Record(buf, static_cast<std::size_t>(n));
      if (!options_.plaintext_reply.empty()) {
        (void)!::send(fd, options_.plaintext_reply.data(), options_.plaintext_reply.size(),
                      MSG_NOSIGNAL);
        return;
      }
      if (!options_.answer_welcome) continue;
      if (std::optional<std::string> w = Answer(decoder, std::string_view(buf, n))) {
        (void)!::send(fd, w->data(), w->size(), MSG_NOSIGNAL);
      }
    }
  }

  ServerOptions options_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  SSL_CTX* ctx_ = nullptr;
  std::atomic<bool> stop_{false};
  bool welcomed_ = false;  // the serving thread's
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  int conn_fd_ = -1;
  int accepted_ = 0;
  int finished_ = 0;
  std::string received_;
};

class ClientTlsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(pki_.ok()); }

  ServerOptions Serving(const std::string& cert, const std::string& key) {
    ServerOptions o;
    o.cert = cert;
    o.key = key;
    return o;
  }
  ServerOptions GoodServer() { return Serving(pki_.server_cert(), pki_.server_key()); }

  // Options for 127.0.0.1:`port` with TLS verified against the test CA, and the token.
  ClientOptions Options(std::uint16_t port) {
    ClientOptions o;
    o.client_name = "client-tls-test";
    o.endpoint.kind = Endpoint::Kind::kTcp;
    o.endpoint.host = "127.0.0.1";
    o.endpoint.port = port;
    o.endpoint.tls.enabled = true;
    o.endpoint.tls.ca_file = pki_.ca();
    o.token = kToken;
    o.reconnect = false;
    o.connect_timeout = seconds(5);
    o.handshake_timeout = seconds(5);
    return o;
  }

  // Connect's error, or "connected".
  static std::string Outcome(const ClientOptions& o) {
    Result<std::unique_ptr<Client>> c = Client::Connect(o);
    return c.ok() ? "connected" : c.status().message();
  }

  static void ExpectConnected(const ClientOptions& o) {
    Result<std::unique_ptr<Client>> c = Client::Connect(o);
    ASSERT_TRUE(c.ok()) << c.status().message();
    std::optional<Event> e = (*c)->Next(seconds(5));
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->kind, Event::Kind::kConnected);
    EXPECT_EQ(e->welcome.daemon_version(), "test");
    EXPECT_EQ((*c)->endpoint_description(), "tls:127.0.0.1:" + std::to_string(o.endpoint.port));
  }

  test_util::TempDir dir_{"client_tls"};
  test_util::TestPki pki_{dir_.path()};
};

#define EXPECT_HAS(text, part)                    \
  EXPECT_NE((text).find(part), std::string::npos) \
      << "\"" << (text) << "\" lacks \"" << (part) << "\""

TEST_F(ClientTlsTest, AVerifiedHandshakeDeliversTheHelloWithTheToken) {
  RecordingServer server(GoodServer());
  ExpectConnected(Options(server.port()));
  EXPECT_TRUE(server.SawToken());
  EXPECT_HAS(server.Received(), "client-tls-test");
}

TEST_F(ClientTlsTest, AWrongCaIsRefusedBeforeTheTokenIsSent) {
  RecordingServer server(Serving(pki_.wrong_server_cert(), pki_.wrong_server_key()));
  const std::string error = Outcome(Options(server.port()));
  EXPECT_HAS(error, "certificate verify failed");
  EXPECT_HAS(error, "unable to get local issuer certificate");
  EXPECT_HAS(error, "(--tls-ca names the CA that signed the daemon's certificate)");
  EXPECT_EQ(server.accepted(), 1);
  EXPECT_FALSE(server.SawToken());
}

TEST_F(ClientTlsTest, AnExpiredCertificateIsRefused) {
  RecordingServer server(Serving(pki_.expired_cert(), pki_.expired_key()));
  const std::string error = Outcome(Options(server.port()));
  EXPECT_HAS(error, "certificate verify failed: certificate has expired");
  EXPECT_FALSE(server.SawToken());
}

TEST_F(ClientTlsTest, ACertificateForAnotherNameIsRefused) {
  RecordingServer server(Serving(pki_.other_name_cert(), pki_.other_name_key()));
  ClientOptions o = Options(server.port());
  o.endpoint.tls.server_name = "localhost";
  std::string error = Outcome(o);
  EXPECT_HAS(error, "certificate verify failed: hostname mismatch");
  EXPECT_HAS(error, "--tls-server-name");
  // Without --tls-server-name the name checked is --connect's host, here an IP address.
  error = Outcome(Options(server.port()));
  EXPECT_HAS(error, "certificate verify failed: IP address mismatch");
  EXPECT_FALSE(server.SawToken());

  o.endpoint.tls.server_name = "other.example";  // the name it holds
  ExpectConnected(o);
  EXPECT_TRUE(server.SawToken());
}

TEST_F(ClientTlsTest, APlaintextPeerIsNotTls) {
  // One that answers in its own protocol, one that hangs up.
  for (const std::string& reply : {std::string("\x05\x1a\x03\x08\x01\x10", 6), std::string()}) {
    ServerOptions plain;
    plain.tls = false;
    plain.answer_welcome = false;
    plain.plaintext_reply = reply.empty() ? std::string() : reply;
    RecordingServer server(plain);
    ClientOptions o = Options(server.port());
    o.connect_timeout = reply.empty() ? milliseconds(500) : seconds(5);
    const std::string error = Outcome(o);
    EXPECT_HAS(error, "speak TLS");
    EXPECT_HAS(error, "listeners.tcp.tls");
    EXPECT_FALSE(server.SawToken()) << "raw bytes: " << server.Received().size();
  }
}

TEST_F(ClientTlsTest, MutualTlsNeedsTheClientCertificate) {
  ServerOptions mutual = GoodServer();
  mutual.client_ca = pki_.ca();
  RecordingServer server(mutual);
  const std::string error = Outcome(Options(server.port()));
  EXPECT_HAS(error, "requires a client certificate: pass --tls-cert and --tls-key");
  EXPECT_FALSE(server.SawToken());

  ClientOptions o = Options(server.port());
  o.endpoint.tls.cert_file = pki_.client_cert();
  o.endpoint.tls.key_file = pki_.client_key();
  ExpectConnected(o);
  EXPECT_TRUE(server.SawToken());
}

TEST_F(ClientTlsTest, InsecureReachesAnUnverifiedServerWithTheToken) {
  RecordingServer server(Serving(pki_.wrong_server_cert(), pki_.wrong_server_key()));
  ClientOptions o = Options(server.port());
  o.endpoint.tls.insecure = true;
  ExpectConnected(o);
  EXPECT_TRUE(server.SawToken());
}

TEST_F(ClientTlsTest, PlaintextTcpWithATokenIsRefusedBeforeConnecting) {
  ServerOptions plain;
  plain.tls = false;
  RecordingServer server(plain);
  ClientOptions o = Options(server.port());
  o.endpoint.tls = TlsClientOptions{};
  EXPECT_EQ(Outcome(o), "refusing to send the token to 127.0.0.1:" + std::to_string(server.port()) +
                            " over plaintext TCP: pass --tls-ca (the daemon's "
                            "listeners.tcp.tls) or --insecure");
  EXPECT_EQ(server.accepted(), 0);

  o.endpoint.tls.insecure = true;  // the user's explicit choice
  Result<std::unique_ptr<Client>> c = Client::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ((*c)->endpoint_description(), "tcp:127.0.0.1:" + std::to_string(server.port()));
  c->reset();
  EXPECT_TRUE(server.SawToken());
}

// Half a TLS record is no data: the stall timeout still ends the connection.
TEST_F(ClientTlsTest, HalfARecordDoesNotHoldOffTheStallTimeout) {
  ServerOptions stalling = GoodServer();
  stalling.half_record_after_welcome = true;
  RecordingServer server(stalling);
  ClientOptions o = Options(server.port());
  o.stall_timeout = milliseconds(600);
  Result<std::unique_ptr<Client>> c = Client::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status().message();
  std::optional<Event> e;
  const auto deadline = std::chrono::steady_clock::now() + seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    e = (*c)->Next(milliseconds(200));
    if (e && e->kind == Event::Kind::kDisconnected) break;
  }
  ASSERT_TRUE(e.has_value());
  ASSERT_EQ(e->kind, Event::Kind::kDisconnected);
  EXPECT_HAS(e->text, "nothing from tls:127.0.0.1:");
}

// neuron-ls, the binary: --tls-ca and --token-file reach the server; --insecure says so.
TEST_F(ClientTlsTest, NeuronLsSpeaksTls) {
  const std::string token = dir_.File("token");
  std::ofstream(token) << kToken << "\n";
  ::chmod(token.c_str(), 0600);
  RecordingServer server(GoodServer());
  const std::string base = std::string(NEURONMON_LS_BINARY) +
                           " --connect 127.0.0.1:" + std::to_string(server.port()) +
                           " --token-file " + token;
  const auto run = [](const std::string& command, std::string& out) {
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    return WEXITSTATUS(::pclose(p));
  };
  std::string out;
  EXPECT_EQ(run(base + " --tls-ca " + pki_.ca() + " -j", out), 0) << out;
  EXPECT_HAS(out, "0000:cc:00.0");
  EXPECT_TRUE(server.SawToken());

  out.clear();
  EXPECT_EQ(run(base, out), 1) << out;  // plaintext with a token
  EXPECT_HAS(out, "refusing to send the token to 127.0.0.1:");

  out.clear();
  EXPECT_EQ(run(base + " --tls-ca " + pki_.wrong_ca(), out), 1) << out;
  EXPECT_HAS(out, "certificate verify failed");

  out.clear();
  EXPECT_EQ(run(base + " --tls --insecure -j", out), 0) << out;
  EXPECT_HAS(out, "neuron-ls: --insecure: the token goes to 127.0.0.1:" +
                      std::to_string(server.port()) + " without verifying who serves it");
}

}  // namespace
}  // namespace neuronmon::client
