// The daemon's TLS, tried with the tools operators use: curl and `openssl s_client` against
// /metrics and the stream port, a TLS stream client written here with OpenSSL (client
// certificates standing in for the token), the daemon binary reloading renewed certificates on
// SIGHUP while a TLS client stays connected, and what is refused — a wrong CA, an expired client
// certificate, a plaintext peer, TLS 1.0 and 1.1. Certificates come from tests/tls_pki.h (the real
// openssl command); everything runs on loopback in a temp dir.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "daemon/core/events.h"
#include "tests/integration/child_process.h"
#include "tests/integration/daemon_fixture.h"
#include "tests/integration/raw_client.h"
#include "tests/temp_dir.h"
#include "tests/tls_pki.h"

namespace neuronmon::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Body = v1::Envelope::BodyCase;
using ::testing::HasSubstr;

struct Ran {
  int status = -1;
  std::string output;  // stdout and stderr
};

// Runs a shell command, capturing what it prints.
Ran Shell(const std::string& command) {
  Ran r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

daemon::TlsServerOptions ServerTls(const test_util::TestPki& pki) {
  daemon::TlsServerOptions tls;
  tls.cert_file = pki.server_cert();
  tls.key_file = pki.server_key();
  return tls;
}

// The TCP port the daemon's stream listener bound ("tcp:127.0.0.1:PORT (TLS, ...)").
std::uint16_t StreamPort(DaemonFixture& d) {
  std::uint16_t port = 0;
  d.OnDaemon([&](daemon::Daemon& daemon) {
    for (const std::string& l : daemon.listening_on()) {
      if (l.rfind("tcp:127.0.0.1:", 0) == 0)
        port = static_cast<std::uint16_t>(std::stoi(l.substr(14)));
    }
  });
  return port;
}

// A stream client over TLS, written with OpenSSL here so the daemon's side is tested apart from
// the client library: blocking socket, reads bounded by SO_RCVTIMEO.
class TlsStreamClient {
 public:
  struct Options {
    Options(std::string ca_file, std::string cert_file = "", std::string key_file = "")
        : ca(std::move(ca_file)), cert(std::move(cert_file)), key(std::move(key_file)) {}
    std::string ca;
    std::string cert;
    std::string key;
    std::string server_name = "localhost";
    int max_version = 0;  // 0: OpenSSL's newest
  };

  TlsStreamClient(std::uint16_t port, const Options& o) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    if (o.max_version != 0) {
      SSL_CTX_set_min_proto_version(ctx_, o.max_version);
      SSL_CTX_set_max_proto_version(ctx_, o.max_version);
      SSL_CTX_set_security_level(ctx_, 0);  // let this OpenSSL offer TLS 1.0 at all
    }
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    SSL_CTX_load_verify_locations(ctx_, o.ca.c_str(), nullptr);
    if (!o.cert.empty()) {
      SSL_CTX_use_certificate_chain_file(ctx_, o.cert.c_str());
      SSL_CTX_use_PrivateKey_file(ctx_, o.key.c_str(), SSL_FILETYPE_PEM);
    }
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      error_ = "connect failed";
      return;
    }
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    SSL_set_tlsext_host_name(ssl_, o.server_name.c_str());
    SSL_set1_host(ssl_, o.server_name.c_str());
    if (SSL_connect(ssl_) != 1) {
      char buf[256];
      ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
      error_ = buf;
      return;
    }
    // TLS 1.3 sends the server's verdict on a client certificate after the handshake: a refusal
    // shows on the first read.
    connected_ = true;
  }
  ~TlsStreamClient() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (fd_ >= 0) ::close(fd_);
    SSL_CTX_free(ctx_);
  }

  bool connected() const { return connected_; }
  const std::string& error() const { return error_; }

  // False when the daemon has refused the connection (a later read says so too).
  bool Send(const v1::Envelope& e) {
    Result<std::string> frame = wire::EncodeFrame(e, wire::kDefaultInboundMaxFrame);
    return frame.ok() && SSL_write(ssl_, frame->data(), static_cast<int>(frame->size())) ==
                             static_cast<int>(frame->size());
  }
  bool Hello(const std::string& token = "") {
    v1::Envelope e;
    e.mutable_hello()->set_protocol_version(1);
    e.mutable_hello()->set_client_name("tls-test");
    e.mutable_hello()->set_token(token);
    return Send(e);
  }
  bool Subscribe() {
    v1::Envelope e;
    e.mutable_subscribe()->add_groups()->set_group(v1::GROUP_NEURONCORE_COUNTERS);
    return Send(e);
  }
  // The next frame with `body` (others skipped), or nullopt when the stream ends first.
  std::optional<v1::Envelope> ReadUntil(Body body) {
    for (;;) {
      v1::Envelope e;
      while (!pending_.empty()) {
        std::string_view in(pending_);
        const auto o = decoder_.Decode(in, e);
        pending_.erase(0, pending_.size() - in.size());
        if (o == wire::FrameDecoder::Outcome::kError) return std::nullopt;
        if (o == wire::FrameDecoder::Outcome::kNeedMore) break;
        if (e.body_case() == body) return e;
      }
      char buf[16384];
      const int n = SSL_read(ssl_, buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      pending_.append(buf, static_cast<std::size_t>(n));
    }
  }
  // The serial number of the server's certificate, in hex.
  std::string PeerSerial() const {
    X509* cert = SSL_get0_peer_certificate(ssl_);
    if (cert == nullptr) return "";
    BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
    char* hex = BN_bn2hex(bn);
    std::string out = hex;
    OPENSSL_free(hex);
    BN_free(bn);
    return out;
  }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool connected_ = false;
  std::string error_;
  wire::FrameDecoder decoder_{wire::kDefaultOutboundMaxFrame};
  std::string pending_;
};

// A loopback port nothing listens on now (bound, read back, closed); 0 when none could be bound.
std::uint16_t FreeLoopbackPort() {
  const int probe = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool bound = ::bind(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                     ::getsockname(probe, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(probe);
  return bound ? ntohs(addr.sin_port) : 0;
}

// A TLS client of a daemon process that is starting: tries for up to 5 s.
std::unique_ptr<TlsStreamClient> ConnectWhenUp(std::uint16_t port, const std::string& ca) {
  std::unique_ptr<TlsStreamClient> client;
  for (int i = 0; i < 100 && !(client && client->connected()); ++i) {
    if (i > 0) std::this_thread::sleep_for(milliseconds(50));
    client = std::make_unique<TlsStreamClient>(port, TlsStreamClient::Options{ca});
  }
  return client;
}

std::string FileSerial(const std::string& pem) {
  const Ran r = Shell("openssl x509 -noout -serial -in " + pem);
  const auto eq = r.output.find('=');
  return eq == std::string::npos ? "" : r.output.substr(eq + 1, r.output.find('\n') - eq - 1);
}

class TlsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The test's own client writes with OpenSSL's socket BIO (write(2)): a daemon that refuses it
    // mid-handshake must not end the test with SIGPIPE.
    ::signal(SIGPIPE, SIG_IGN);
    ASSERT_TRUE(pki_.ok());
  }
  test_util::TempDir dir_{"tls"};
  test_util::TestPki pki_{dir_.path()};
};

TEST_F(TlsServerTest, MetricsOverHttpsWithCurl) {
  DaemonFixture d([&](daemon::DaemonConfig& c) {
    c.listeners.metrics = daemon::ListenAddress{"127.0.0.1", 0};
    c.listeners.metrics_tls = ServerTls(pki_);
  });
  const std::string port = std::to_string(d.metrics_port().value_or(0));
  const std::string url = "https://localhost:" + port + "/metrics";
  const Ran good = Shell("curl -sS --max-time 10 --cacert " + pki_.ca() + " " + url);
  EXPECT_EQ(good.status, 0) << good.output;
  EXPECT_THAT(good.output, HasSubstr("\ninstance_info{"));
  // By IP address too: the certificate names 127.0.0.1.
  EXPECT_EQ(Shell("curl -sS -o /dev/null --max-time 10 --cacert " + pki_.ca() +
                  " https://127.0.0.1:" + port + "/metrics")
                .status,
            0);

  const Ran wrong_ca =
      Shell("curl -sS -o /dev/null --max-time 10 --cacert " + pki_.wrong_ca() + " " + url);
  EXPECT_EQ(wrong_ca.status, 60) << wrong_ca.output;  // peer certificate cannot be authenticated
  EXPECT_THAT(wrong_ca.output, HasSubstr("SSL certificate problem"));
  const Ran plaintext =
      Shell("curl -sS -o /dev/null --max-time 10 http://127.0.0.1:" + port + "/metrics");
  EXPECT_NE(plaintext.status, 0) << "a plaintext request gets no metrics: " << plaintext.output;
  const Ran s_client =
      Shell("openssl s_client -connect 127.0.0.1:" + port + " -CAfile " + pki_.ca() +
            " -verify_return_error -verify_hostname localhost " + "</dev/null");
  EXPECT_EQ(s_client.status, 0) << s_client.output;
  EXPECT_THAT(s_client.output, HasSubstr("Verify return code: 0 (ok)"));
  const Ran tls10 = Shell("curl -sS -o /dev/null --max-time 10 --cacert " + pki_.ca() +
                          " --tlsv1.0 --tls-max 1.1 --ciphers DEFAULT@SECLEVEL=0 " + url);
  EXPECT_EQ(tls10.status, 35) << tls10.output;  // SSL connect error: no protocol in common

  // A long-lived /events stream over TLS: the retained events, then one logged while it is open.
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    d.OnDaemon([](daemon::Daemon& daemon) {
      daemon.AddEvent(daemon::DaemonEvent("reloaded", "pushed over tls"));
    });
  });
  const Ran stream = Shell("curl -sSN --max-time 3 --cacert " + pki_.ca() +
                           " -H 'Accept: text/event-stream' https://localhost:" + port + "/events");
  later.join();
  EXPECT_EQ(stream.status, 28) << "the stream stays open until curl's own deadline: "
                               << stream.output;
  EXPECT_THAT(stream.output, HasSubstr("event: daemon\ndata: {\"seq\":1,"));
  EXPECT_THAT(stream.output, HasSubstr("pushed over tls"));
}

TEST_F(TlsServerTest, StreamPortWithOpensslSClient) {
  DaemonFixture d([&](daemon::DaemonConfig& c) {
    c.log_level = daemon::LogLevel::kDebug;
    c.listeners.tcp = daemon::ListenAddress{"127.0.0.1", 0};
    c.listeners.tcp_tls = ServerTls(pki_);
  });
  const std::string port = std::to_string(StreamPort(d));
  const std::string s_client = "openssl s_client -connect 127.0.0.1:" + port;
  const Ran verified = Shell(s_client + " -CAfile " + pki_.ca() +
                             " -verify_return_error -verify_hostname localhost </dev/null");
  EXPECT_EQ(verified.status, 0) << verified.output;
  EXPECT_THAT(verified.output, HasSubstr("Verify return code: 0 (ok)"));
  EXPECT_THAT(verified.output, HasSubstr("TLSv1.3"));
  const Ran wrong_ca =
      Shell(s_client + " -CAfile " + pki_.wrong_ca() + " -verify_return_error </dev/null");
  EXPECT_NE(wrong_ca.status, 0);
  EXPECT_THAT(wrong_ca.output, HasSubstr("unable to get local issuer certificate"));
  for (const char* old : {"-tls1", "-tls1_1"}) {
    const Ran refused = Shell(s_client + " " + old + " -cipher DEFAULT@SECLEVEL=0 </dev/null");
    EXPECT_NE(refused.status, 0) << old;
    EXPECT_THAT(refused.output, HasSubstr("alert protocol version")) << old << refused.output;
  }

  // A plaintext client's Hello never reaches the protocol: the connection is closed.
  RawClient plain(RawClient::Tcp{StreamPort(d)});
  ASSERT_TRUE(plain.connected());
  plain.Hello();
  EXPECT_FALSE(plain.Read(seconds(3)).has_value());
  EXPECT_TRUE(plain.ClosedWithin(seconds(3)));
  d.Stop();
  EXPECT_THAT(Slurp(d.dir() / "daemon.log"), HasSubstr("TLS handshake failed"));
}

TEST_F(TlsServerTest, AVerifiedClientCertificateStandsInForTheToken) {
  // Loopback TCP with the unix socket's default mode requires the token (TcpRequiresToken).
  const fs::path token = dir_.File("token");
  std::ofstream(token) << "s3cret\n";
  fs::permissions(token, fs::perms::owner_read | fs::perms::owner_write);
  DaemonFixture d([&](daemon::DaemonConfig& c) {
    c.log_level = daemon::LogLevel::kDebug;
    c.auth_token_file = token.string();
    c.listeners.tcp = daemon::ListenAddress{"127.0.0.1", 0};
    c.listeners.tcp_tls = ServerTls(pki_);
    c.listeners.tcp_tls.client_auth_type = "VerifyClientCertIfGiven";
    c.listeners.tcp_tls.client_ca_file = pki_.ca();
  });
  const std::uint16_t port = StreamPort(d);
  {
    // A certificate the CA signed, and no token: welcomed, and reports flow.
    TlsStreamClient c(port, {pki_.ca(), pki_.client_cert(), pki_.client_key()});
    ASSERT_TRUE(c.connected()) << c.error();
    c.Hello();
    ASSERT_TRUE(c.ReadUntil(Body::kWelcome).has_value());
    c.Subscribe();
    EXPECT_TRUE(c.ReadUntil(Body::kReport).has_value());
  }
  {
    // No certificate: the token is still required.
    TlsStreamClient bare(port, {pki_.ca()});
    ASSERT_TRUE(bare.connected()) << bare.error();
    bare.Hello();
    const auto refused = bare.ReadUntil(Body::kError);
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->error().code(), v1::ERROR_CODE_UNAUTHENTICATED);
    TlsStreamClient with_token(port, {pki_.ca()});
    with_token.Hello("s3cret");
    EXPECT_TRUE(with_token.ReadUntil(Body::kWelcome).has_value());
  }
  {
    // A certificate from another CA, and an expired one: the handshake fails.
    TlsStreamClient foreign(port, {pki_.ca(), pki_.wrong_server_cert(), pki_.wrong_server_key()});
    if (foreign.connected()) foreign.Hello();
    EXPECT_FALSE(foreign.connected() && foreign.ReadUntil(Body::kWelcome).has_value());
    TlsStreamClient expired(port, {pki_.ca(), pki_.expired_cert(), pki_.expired_key()});
    if (expired.connected()) expired.Hello();
    EXPECT_FALSE(expired.connected() && expired.ReadUntil(Body::kWelcome).has_value());
  }
  d.Stop();  // the daemon logs a refusal after the client saw it: read the log once it stopped
  const std::string log = Slurp(d.dir() / "daemon.log");
  EXPECT_THAT(log, HasSubstr("authenticated by its certificate"));
  EXPECT_THAT(log, HasSubstr("certificate has expired"));
}

// The real pair: neuron-ls (the client library) against the daemon's TLS stream listener, with
// the token, then with a client certificate in its place, and refused with the wrong CA.
TEST_F(TlsServerTest, NeuronLsOverTls) {
  const fs::path token = dir_.File("token");
  std::ofstream(token) << "s3cret\n";
  fs::permissions(token, fs::perms::owner_read | fs::perms::owner_write);
  DaemonFixture d([&](daemon::DaemonConfig& c) {
    c.auth_token_file = token.string();
    c.listeners.tcp = daemon::ListenAddress{"127.0.0.1", 0};
    c.listeners.tcp_tls = ServerTls(pki_);
    c.listeners.tcp_tls.client_auth_type = "VerifyClientCertIfGiven";
    c.listeners.tcp_tls.client_ca_file = pki_.ca();
  });
  const std::string ls = std::string(NEURONMON_LS_BINARY) +
                         " --json-output --connect localhost:" + std::to_string(StreamPort(d));
  const Ran with_token = Shell(ls + " --tls-ca " + pki_.ca() + " --token-file " + token.string());
  EXPECT_EQ(with_token.status, 0) << with_token.output;
  EXPECT_THAT(with_token.output, HasSubstr("\"neuron_device\""));
  const Ran with_cert = Shell(ls + " --tls-ca " + pki_.ca() + " --tls-cert " + pki_.client_cert() +
                              " --tls-key " + pki_.client_key());
  EXPECT_EQ(with_cert.status, 0) << with_cert.output;
  const Ran neither = Shell(ls + " --tls-ca " + pki_.ca());
  EXPECT_NE(neither.status, 0);
  EXPECT_THAT(neither.output, HasSubstr("missing or wrong auth token"));
  const Ran wrong_ca =
      Shell(ls + " --tls-ca " + pki_.wrong_ca() + " --token-file " + token.string());
  EXPECT_NE(wrong_ca.status, 0);
  EXPECT_THAT(wrong_ca.output, HasSubstr("certificate verify failed"));
  const Ran plaintext = Shell(ls + " --token-file " + token.string());
  EXPECT_NE(plaintext.status, 0);
  EXPECT_THAT(plaintext.output, HasSubstr("plaintext"));
}

TEST_F(TlsServerTest, RequireAndVerifyRefusesClientsWithoutAllowedCertificates) {
  DaemonFixture d([&](daemon::DaemonConfig& c) {
    c.listeners.tcp = daemon::ListenAddress{"127.0.0.1", 0};
    c.listeners.tcp_tls = ServerTls(pki_);
    c.listeners.tcp_tls.client_auth_type = "RequireAndVerifyClientCert";
    c.listeners.tcp_tls.client_ca_file = pki_.ca();
    c.listeners.tcp_tls.client_allowed_sans = {"ops@example.com"};
  });
  const std::uint16_t port = StreamPort(d);
  TlsStreamClient none(port, {pki_.ca()});
  if (none.connected()) none.Hello();
  EXPECT_FALSE(none.connected() && none.ReadUntil(Body::kWelcome).has_value());
  TlsStreamClient allowed(port, {pki_.ca(), pki_.client_cert(), pki_.client_key()});
  ASSERT_TRUE(allowed.connected()) << allowed.error();
  allowed.Hello();
  EXPECT_TRUE(allowed.ReadUntil(Body::kWelcome).has_value());
  // The same CA signed other.pem, but it does not carry an allowed name.
  TlsStreamClient other(port, {pki_.ca(), pki_.other_name_cert(), pki_.other_name_key()});
  if (other.connected()) other.Hello();
  EXPECT_FALSE(other.connected() && other.ReadUntil(Body::kWelcome).has_value());
}

// The daemon binary, its certificate renewed on disk and SIGHUP: a connected TLS client keeps its
// stream (it gets the reload notice), a new one sees the renewed certificate.
TEST_F(TlsServerTest, SighupReloadsCertificatesWithoutDroppingClients) {
  const fs::path cert = dir_.File("live.pem");
  const fs::path key = dir_.File("live.key");
  fs::copy_file(pki_.server_cert(), cert);
  fs::copy_file(pki_.server_key(), key);
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
  const std::uint16_t port = FreeLoopbackPort();
  ASSERT_NE(port, 0);
  const fs::path config = dir_.File("d.json");
  std::ofstream(config) << R"({"device": "sim:trn1.2xlarge", "period": "100ms",
    "listeners": {"unix": {"mode": "0666", "path": ")"
                        << dir_.File("d.sock") << R"("},
      "tcp": {"address": "127.0.0.1:)"
                        << port << R"(", "tls": {"cert_file": ")" << cert.string()
                        << R"(", "key_file": ")" << key.string() << R"("}},
      "metrics": {"address": ""}},
    "recorder": {"enabled": false}, "incidents": {"enabled": false}})";
  Process daemon({NEURONMON_DAEMON_BINARY, "--config", config.string()}, {},
                 dir_.File("daemon.log"));
  ASSERT_GT(daemon.pid(), 0);
  std::unique_ptr<TlsStreamClient> first = ConnectWhenUp(port, pki_.ca());
  ASSERT_TRUE(first->connected()) << first->error() << Slurp(dir_.File("daemon.log"));
  EXPECT_EQ(first->PeerSerial(), FileSerial(pki_.server_cert()));
  first->Hello();
  ASSERT_TRUE(first->ReadUntil(Body::kWelcome).has_value());
  first->Subscribe();
  ASSERT_TRUE(first->ReadUntil(Body::kReport).has_value());

  fs::copy_file(pki_.renewed_cert(), cert, fs::copy_options::overwrite_existing);
  fs::copy_file(pki_.renewed_key(), key, fs::copy_options::overwrite_existing);
  daemon.Signal(SIGHUP);
  const auto reloaded = first->ReadUntil(Body::kNotice);
  ASSERT_TRUE(reloaded.has_value()) << Slurp(dir_.File("daemon.log"));
  EXPECT_EQ(reloaded->notice().kind(), v1::NOTICE_KIND_RELOADED);
  EXPECT_TRUE(first->ReadUntil(Body::kReport).has_value()) << "the old session goes on";
  TlsStreamClient second(port, {pki_.ca()});
  ASSERT_TRUE(second.connected()) << second.error();
  EXPECT_EQ(second.PeerSerial(), FileSerial(pki_.renewed_cert()));
  EXPECT_NE(FileSerial(pki_.renewed_cert()), FileSerial(pki_.server_cert()));

  // A broken key on the next SIGHUP: the reload is refused, and the listener keeps serving.
  std::ofstream(key, std::ios::trunc) << "not a key\n";
  daemon.Signal(SIGHUP);
  TlsStreamClient third(port, {pki_.ca()});
  EXPECT_TRUE(third.connected()) << third.error();
  daemon.Signal(SIGTERM);
  EXPECT_TRUE(daemon.Wait(seconds(10)).has_value());
  const std::string log = Slurp(dir_.File("daemon.log"));
  EXPECT_THAT(log, HasSubstr("TLS certificates and keys read again"));
  EXPECT_THAT(log,
              HasSubstr("configuration not reloaded: listeners.tcp.tls.key_file: cannot load"));
}

// A TCP socket systemd passes (systemd-socket-activate stands in for it) speaks the configured
// TLS, though the config names no address.
TEST_F(TlsServerTest, ASocketActivatedTcpListenerSpeaksTls) {
  if (::access("/usr/bin/systemd-socket-activate", X_OK) != 0) GTEST_SKIP() << "no systemd";
  const std::uint16_t port = FreeLoopbackPort();
  ASSERT_NE(port, 0);
  const fs::path config = dir_.File("d.json");
  std::ofstream(config)
      << R"({"device": "sim:trn1.2xlarge", "listeners": {"unix": {"mode": "0666",
      "path": ")"
      << dir_.File("d.sock") << R"("}, "metrics": {"address": ""}, "tcp": {"tls":
      {"cert_file": ")"
      << pki_.server_cert() << R"(", "key_file": ")" << pki_.server_key()
      << R"("}}}, "recorder": {"enabled": false}, "incidents": {"enabled": false}})";
  Process activate({"/usr/bin/systemd-socket-activate", "-l", "127.0.0.1:" + std::to_string(port),
                    NEURONMON_DAEMON_BINARY, "--config", config.string()},
                   {}, dir_.File("daemon.log"));
  ASSERT_GT(activate.pid(), 0);
  std::unique_ptr<TlsStreamClient> client = ConnectWhenUp(port, pki_.ca());
  ASSERT_TRUE(client->connected()) << client->error() << Slurp(dir_.File("daemon.log"));
  client->Hello();
  EXPECT_TRUE(client->ReadUntil(Body::kWelcome).has_value()) << Slurp(dir_.File("daemon.log"));
  EXPECT_THAT(Slurp(dir_.File("daemon.log")), HasSubstr("(socket activation, TLS, certificate"));
}

TEST_F(TlsServerTest, StartAndCheckConfigRefuseBadFiles) {
  const auto check = [&](const std::string& tls) {
    const fs::path config = dir_.File("check.json");
    std::ofstream(config, std::ios::trunc)
        << R"({"listeners": {"metrics": {"tls": {)" << tls << "}}}}";
    return Shell(std::string(NEURONMON_DAEMON_BINARY) + " --config " + config.string() +
                 " --check-config");
  };
  const std::string cert = "\"cert_file\": \"" + pki_.server_cert() + "\"";
  const Ran good = check(cert + ", \"key_file\": \"" + pki_.server_key() + "\"");
  EXPECT_EQ(good.status, 0) << good.output;
  const Ran mismatch = check(cert + ", \"key_file\": \"" + pki_.client_key() + "\"");
  EXPECT_EQ(mismatch.status, 1);
  EXPECT_THAT(mismatch.output, HasSubstr("listeners.metrics.tls.key_file: " + pki_.client_key() +
                                         " does not match cert_file"));
  const Ran missing =
      check("\"cert_file\": \"/nonexistent.pem\", \"key_file\": \"" + pki_.server_key() + "\"");
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.output,
              HasSubstr("listeners.metrics.tls.cert_file: cannot load /nonexistent.pem"));
  fs::permissions(pki_.server_key(), fs::perms::others_read, fs::perm_options::add);
  const Ran readable = check(cert + ", \"key_file\": \"" + pki_.server_key() + "\"");
  EXPECT_EQ(readable.status, 1);
  EXPECT_THAT(readable.output, HasSubstr("lets every user read the private key"));
  const Ran tls10 = check(cert + ", \"key_file\": \"/k\", \"min_version\": \"TLS10\"");
  EXPECT_EQ(tls10.status, 1);
  EXPECT_THAT(tls10.output, HasSubstr("listeners.metrics.tls.min_version: TLS10 is refused"));
}

}  // namespace
}  // namespace neuronmon::testing
