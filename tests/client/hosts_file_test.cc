// neuron-top's hosts file with per-host settings (`host:port [token_file=PATH] [server_name=NAME]
// [tls_ca=PATH]`): what a line may say, each mistake refused naming its line, and how a line's
// settings override the command line's for its host.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "client/cluster.h"
#include "client/endpoint_flags.h"
#include "tests/temp_dir.h"
#include "tests/tls_pki.h"

namespace neuronmon::client {
namespace {

std::string Error(const std::string& text) {
  Result<std::vector<HostsFileLine>> r = ParseHostsFile(text, "/etc/neuronmon/hosts", 16);
  return r.ok() ? "ok" : r.status().message();
}

TEST(HostsFileSettings, ALineCarriesItsOwnSettings) {
  Result<std::vector<HostsFileLine>> r = ParseHostsFile(
      "a:1 token_file=/secrets/a.token\n"
      "b:2\tserver_name=node-b.example  tls_ca=ca/cluster.pem # rack 2\n"
      "[::1]:3 server_name=::1\n",
      "/etc/neuronmon/hosts", 16);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0], (HostsFileLine{"a:1", "/secrets/a.token", "", ""}));
  // A relative path is the hosts file's directory's.
  EXPECT_EQ((*r)[1], (HostsFileLine{"b:2", "", "node-b.example", "/etc/neuronmon/ca/cluster.pem"}));
  EXPECT_EQ((*r)[2], (HostsFileLine{"[::1]:3", "", "::1", ""}));

  r = ParseHostsFile("c:1 tls_ca=ca.pem\n", "hosts", 16);  // a file in the current directory
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].tls_ca, "ca.pem");
}

TEST(HostsFileSettings, MistakesAreRefusedNamingTheLine) {
  const std::string at = "/etc/neuronmon/hosts:2: ";
  EXPECT_EQ(Error("a:1\nb:2 tls_key=/k\n"),
            at + "unknown setting \"tls_key\" (expected token_file=, server_name= or tls_ca=)");
  EXPECT_EQ(Error("a:1\nb:2 server_name=x server_name=y\n"), at + "server_name given twice");
  EXPECT_EQ(Error("a:1\nb:2 token_file=\n"), at + "token_file needs a value (token_file=...)");
  EXPECT_EQ(Error("a:1\nb:2 tls_ca\n"), at + "tls_ca needs a value (tls_ca=...)");
  EXPECT_EQ(Error("a:1\nb:2 =x\n"),
            at + "unknown setting \"\" (expected token_file=, server_name= or tls_ca=)");
  EXPECT_EQ(Error("a:1\nb:2 server_name=bad/name\n"),
            at + "server_name: \"bad/name\" is not a host name");
  EXPECT_EQ(Error("a:1\nb:2 server_name=" + std::string(254, 'a') + "\n").rfind(at, 0), 0u);
  EXPECT_EQ(Error("a:1\nb:2 token_file=/" + std::string(kMaxHostsFilePath, 'a') + "\n"),
            at + "token_file: path longer than 4096 bytes");
  EXPECT_EQ(Error("a:1\nb:2 tls_ca=/x\x1b[2J\n"), at + "tls_ca: control character in the value");
  EXPECT_EQ(Error("a:1\nb:2 noport=1\n"),
            at + "unknown setting \"noport\" (expected token_file=, server_name= or tls_ca=)");
  EXPECT_EQ(Error("a:1\nnoport server_name=x\n").rfind(at, 0), 0u);  // the address first
}

class HostsOverridesTest : public ::testing::Test {
 protected:
  std::string Token(const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = dir_.File(name);
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }
  test_util::TempDir dir_{"hosts_overrides"};
};

TEST_F(HostsOverridesTest, ALinesSettingsOverrideTheCommandLinesForItsHost) {
  test_util::TestPki pki(dir_.path());
  ASSERT_TRUE(pki.ok());
  std::vector<HostsFileLine> lines(4);
  lines[0].address = "10.0.0.1:9414";  // the command line's settings
  lines[1].address = "10.0.0.2:9414";
  lines[1].token_file = Token("b.token", "token-b\n", 0600);
  lines[2].address = "10.0.0.3:9414";
  lines[2].server_name = "node-c.example";
  lines[3].address = "10.0.0.4:9414";
  lines[3].tls_ca = pki.ca();
  Result<std::vector<ClusterTarget>> t = ResolveClusterHosts(lines, TlsClientOptions{}, "common");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->size(), 4u);
  EXPECT_EQ((*t)[0].token, "common");
  EXPECT_FALSE((*t)[0].endpoint.tls.enabled);  // plaintext, as the command line said
  EXPECT_EQ((*t)[0].endpoint.host, "10.0.0.1");
  EXPECT_EQ((*t)[1].token, "token-b");
  EXPECT_TRUE((*t)[2].endpoint.tls.enabled);  // server_name= turns TLS on
  EXPECT_EQ((*t)[2].endpoint.tls.server_name, "node-c.example");
  EXPECT_TRUE((*t)[3].endpoint.tls.enabled);  // and so does tls_ca=
  EXPECT_EQ((*t)[3].endpoint.tls.ca_file, pki.ca());

  // The command line's TLS settings are every host's defaults.
  TlsClientOptions defaults;
  defaults.enabled = true;
  defaults.ca_file = pki.wrong_ca();
  defaults.server_name = "cluster.example";
  t = ResolveClusterHosts(lines, defaults, "common");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE((*t)[0].endpoint.tls.enabled);
  EXPECT_EQ((*t)[0].endpoint.tls.ca_file, pki.wrong_ca());
  EXPECT_EQ((*t)[0].endpoint.tls.server_name, "cluster.example");
  EXPECT_EQ((*t)[2].endpoint.tls.server_name, "node-c.example");
  EXPECT_EQ((*t)[3].endpoint.tls.ca_file, pki.ca());
  EXPECT_EQ((*t)[3].endpoint.tls.server_name, "cluster.example");
}

TEST_F(HostsOverridesTest, ALinesFilesAreCheckedNamingItsHost) {
  std::vector<HostsFileLine> lines(1);
  lines[0].address = "10.0.0.2:9414";
  lines[0].token_file = Token("b.token", "token-b\n", 0644);
  Result<std::vector<ClusterTarget>> t = ResolveClusterHosts(lines, TlsClientOptions{}, "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "10.0.0.2:9414: " + lines[0].token_file +
                                      ": mode 0644 lets every user read the token; make it 0600 "
                                      "or 0640");
  lines[0].token_file.clear();
  lines[0].tls_ca = dir_.File("missing.pem");
  t = ResolveClusterHosts(lines, TlsClientOptions{}, "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message().rfind("10.0.0.2:9414: --tls-ca " + lines[0].tls_ca, 0), 0u)
      << t.status().message();
}

}  // namespace
}  // namespace neuronmon::client
