// TLS on the command line: which flags turn TLS on, which combinations are refused, how the TLS
// files are checked before anything connects (a key other users may read, a key that does not
// match its certificate), what --insecure says, and the token never going over plaintext TCP
// without --insecure.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "client/client.h"
#include "client/endpoint_flags.h"
#include "tests/temp_dir.h"
#include "tests/tls_pki.h"

namespace neuronmon::client {
namespace {

class TlsFlagsTest : public ::testing::Test {
 protected:
  // One PKI for the file: making it runs openssl a few dozen times.
  static void SetUpTestSuite() {
    dir_ = new test_util::TempDir("tls_flags");
    pki_ = new test_util::TestPki(dir_->path());
  }
  static void TearDownTestSuite() {
    delete pki_;
    delete dir_;
  }

  // The endpoint `args` resolve to, or the error.
  static Result<Endpoint> Resolve(const std::string& args) {
    CLI::App app{"test"};
    EndpointFlags flags;
    AddEndpointOptions(app, flags);
    app.parse(args);
    std::string token;
    return ResolveEndpoint(flags, &token);
  }
  static std::string Error(const std::string& args) {
    Result<Endpoint> ep = Resolve(args);
    return ep.ok() ? "ok" : ep.status().message();
  }

  static test_util::TempDir* dir_;
  static test_util::TestPki* pki_;
};

test_util::TempDir* TlsFlagsTest::dir_ = nullptr;
test_util::TestPki* TlsFlagsTest::pki_ = nullptr;

TEST_F(TlsFlagsTest, EachTlsFlagTurnsTlsOn) {
  ASSERT_TRUE(pki_->ok());
  Result<Endpoint> plain = Resolve("--connect 127.0.0.1:9414");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->tls.enabled);

  Result<Endpoint> system = Resolve("--connect 127.0.0.1:9414 --tls");
  ASSERT_TRUE(system.ok()) << system.status().message();
  EXPECT_TRUE(system->tls.enabled);
  EXPECT_TRUE(system->tls.ca_file.empty());  // the system's CAs

  Result<Endpoint> ca = Resolve("--connect host.example:9414 --tls-ca " + pki_->ca());
  ASSERT_TRUE(ca.ok()) << ca.status().message();
  EXPECT_TRUE(ca->tls.enabled);
  EXPECT_EQ(ca->tls.ca_file, pki_->ca());
  EXPECT_FALSE(ca->tls.insecure);

  Result<Endpoint> named = Resolve("--connect 10.0.0.1:9414 --tls-server-name node1.example");
  ASSERT_TRUE(named.ok()) << named.status().message();
  EXPECT_TRUE(named->tls.enabled);
  EXPECT_EQ(named->tls.server_name, "node1.example");

  Result<Endpoint> mutual =
      Resolve("--connect 127.0.0.1:9414 --tls-ca " + pki_->ca() + " --tls-cert " +
              pki_->client_cert() + " --tls-key " + pki_->client_key());
  ASSERT_TRUE(mutual.ok()) << mutual.status().message();
  EXPECT_TRUE(mutual->tls.enabled);
  EXPECT_EQ(mutual->tls.cert_file, pki_->client_cert());
  EXPECT_EQ(mutual->tls.key_file, pki_->client_key());
}

TEST_F(TlsFlagsTest, ACertificateNeedsItsKey) {
  const std::string expected = "--tls-cert and --tls-key go together (mutual TLS)";
  EXPECT_EQ(Error("--connect a:1 --tls-cert " + pki_->client_cert()), expected);
  EXPECT_EQ(Error("--connect a:1 --tls-key " + pki_->client_key()), expected);
}

TEST_F(TlsFlagsTest, TlsFlagsAreForTcpOnly) {
  const std::string expected =
      "--tls, --tls-ca, --tls-cert, --tls-key, --tls-server-name and --insecure are for a TCP "
      "daemon (--connect), not with --socket, --standalone or the default socket";
  EXPECT_EQ(Error("--socket /run/x.sock --tls"), expected);
  EXPECT_EQ(Error("--socket /run/x.sock --tls-ca " + pki_->ca()), expected);
  EXPECT_EQ(Error("--standalone --tls-server-name x"), expected);
  EXPECT_EQ(Error("--insecure"), expected);
  EXPECT_EQ(Error("--socket /run/x.sock --insecure"), expected);
}

TEST_F(TlsFlagsTest, InsecureAloneKeepsPlaintextAndSaysWhatIsUnverified) {
  Result<Endpoint> ep = Resolve("--connect 127.0.0.1:9414 --insecure");
  ASSERT_TRUE(ep.ok()) << ep.status().message();
  EXPECT_FALSE(ep->tls.enabled);
  EXPECT_TRUE(ep->tls.insecure);
  EXPECT_EQ(InsecureNotice(*ep, true),
            "--insecure: the token goes to 127.0.0.1:9414 without verifying who serves it");
  EXPECT_EQ(InsecureNotice(*ep, false), "");  // plaintext without a token: nothing to hide

  Result<Endpoint> tls = Resolve("--connect [::1]:9414 --tls --insecure");
  ASSERT_TRUE(tls.ok()) << tls.status().message();
  EXPECT_EQ(InsecureNotice(*tls, false),
            "--insecure: the certificate of [::1]:9414 is not verified");
  EXPECT_EQ(InsecureNotice(*Resolve("--connect 127.0.0.1:9414 --tls"), true), "");
}

TEST_F(TlsFlagsTest, TlsFilesAreCheckedBeforeConnecting) {
  const std::string missing = dir_->File("missing.pem");
  const std::string error = Error("--connect a:1 --tls-ca " + missing);
  EXPECT_EQ(error.rfind("--tls-ca " + missing + ": cannot open", 0), 0u) << error;

  const std::string not_pem = dir_->File("openssl.log");  // TestPki's log: text, no PEM
  EXPECT_EQ(Error("--connect a:1 --tls-ca " + not_pem),
            "--tls-ca " + not_pem + ": no PEM certificate");

  EXPECT_EQ(Error("--connect a:1 --tls-ca " + pki_->ca() + " --tls-cert " + pki_->client_cert() +
                  " --tls-key " + pki_->server_key()),
            "--tls-key " + pki_->server_key() + " does not match the certificate in --tls-cert");
}

TEST_F(TlsFlagsTest, AKeyEveryUserCanReadIsRefused) {
  test_util::TempDir dir("tls_key");
  const std::string key = dir.File("client.key");
  ASSERT_TRUE(std::filesystem::copy_file(pki_->client_key(), key));
  ::chmod(key.c_str(), 0644);
  EXPECT_EQ(Error("--connect a:1 --tls-ca " + pki_->ca() + " --tls-cert " + pki_->client_cert() +
                  " --tls-key " + key),
            "--tls-key " + key +
                ": mode 0644 lets every user read the private key; make it 0600 or 0640");
  ::chmod(key.c_str(), 0640);
  EXPECT_EQ(Error("--connect a:1 --tls-ca " + pki_->ca() + " --tls-cert " + pki_->client_cert() +
                  " --tls-key " + key),
            "ok");
}

// The refusal comes before connect(2): nothing listens on port 1, and the message is not
// "cannot connect".
TEST(TokenOverTcp, PlaintextWithATokenIsRefusedUnlessInsecure) {
  ClientOptions o;
  o.endpoint.kind = Endpoint::Kind::kTcp;
  o.endpoint.host = "127.0.0.1";
  o.endpoint.port = 1;
  o.token = "s3cret";
  o.reconnect = false;
  Result<std::unique_ptr<Client>> c = Client::Connect(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "refusing to send the token to 127.0.0.1:1 over plaintext TCP: pass --tls-ca (the "
            "daemon's listeners.tcp.tls) or --insecure");

  o.endpoint.tls.insecure = true;  // now it tries, and finds nobody
  c = Client::Connect(o);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("cannot connect to 127.0.0.1:1"), std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace neuronmon::client
