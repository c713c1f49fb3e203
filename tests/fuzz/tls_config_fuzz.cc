// Fuzzes the TLS config loader: the input is a listener's `tls` object (Prometheus'
// tls_server_config keys), read through the settings table as listeners.metrics.tls and checked by
// its rules; when that accepts it with TLS on, the OpenSSL server context is built from it
// (TlsServerContext::Create) with the certificate, key and CA files replaced by a fixed test pair
// written once to a temp dir, so names, lists, versions, cipher suites and curves reach OpenSSL
// and no other file is read.
// Invariants: no crash, no exception escapes; a refusal by the settings comes with a problem; a
// context the settings accepted is refused only with an error naming one of its keys, and a built
// one has an SSL_CTX.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/core/config/config_file.h"
#include "daemon/server/tls_context.h"
#include "tests/fuzz/fuzz_fail.h"

namespace {

[[noreturn]] void Fail(std::string_view what) {
  neuronmon::fuzz::FuzzFail("tls_config_fuzz", what);
}

// A self-signed P-256 certificate for "fuzz" and its key: fixed, so runs are deterministic.
constexpr const char* kKey =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgN3s+Z1f4kOqDuuJU\n"
    "QrN4QBAS4l0ct5U/1EbEMo/eAhihRANCAAQc33RRU9h2WUrJ9YPX8Pw9xC6GMMme\n"
    "BHwu8XRQF0v3cqMjuN0YHEWsiIadnsL3qpE10d+Etly7phc2MwIMaVQ8\n"
    "-----END PRIVATE KEY-----\n";
constexpr const char* kCert =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBjDCCATGgAwIBAgIUJyjVXVdiIs66bEmDg+VF/Ef/2PIwCgYIKoZIzj0EAwIw\n"
    "DzENMAsGA1UEAwwEZnV6ejAgFw0yNjEyMDcwMzI1MzNaGA8yMTI2MTExMzAzMjUz\n"
    "M1owDzENMAsGA1UEAwwEZnV6ejBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABBzf\n"
    "dFFT2HZZSsn1g9fw/D3ELoYwyZ4EfC7xdFAXS/dyoyO43RgcRayIhp2ewveqkTXR\n"
    "34S2XLumFzYzAgxpVDyjaTBnMB0GA1UdDgQWBBT6St85rnXs0em3ehcfCCueQOMH\n"
    "BTAfBgNVHSMEGDAWgBT6St85rnXs0em3ehcfCCueQOMHBTAPBgNVHRMBAf8EBTAD\n"
    "AQH/MBQGA1UdEQQNMAuCCWxvY2FsaG9zdDAKBggqhkjOPQQDAgNJADBGAiEA2cP9\n"
    "96iF2xfEY4eSGD7uJu/26CXktrvgFMImD2O8Dm4CIQDY1iCrzdWYuEbrqfr7HNOw\n"
    "D6DtazY6j3Wx6TXHFP4yEA==\n"
    "-----END CERTIFICATE-----\n";

struct Files {
  std::string cert, key;
};

// Written once; never destroyed, so the exit handler that removes them can still read the paths.
const Files& FixtureFiles() {
  static const Files* files = [] {
    const std::string dir =
        std::filesystem::temp_directory_path() / ("tls_config_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto* f = new Files{dir + "/cert.pem", dir + "/key.pem"};
    std::ofstream(f->cert) << kCert;
    std::ofstream(f->key) << kKey;
    std::filesystem::permissions(
        f->key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return f;
  }();
  return *files;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string text = R"({"listeners": {"metrics": {"tls": )" + std::string(input) + "}}}";
  std::vector<std::string> problems;
  neuronmon::Result<neuronmon::daemon::DaemonConfig> config =
      neuronmon::daemon::ParseConfig(text, "fuzz.json", &problems);
  if (!config.ok()) {
    if (problems.empty()) Fail("refused without a problem");
    return 0;
  }
  neuronmon::daemon::TlsServerOptions tls = config->listeners.metrics_tls;
  if (!tls.enabled()) return 0;
  const Files& files = FixtureFiles();
  tls.cert_file = files.cert;
  tls.key_file = files.key;
  if (!tls.client_ca_file.empty()) tls.client_ca_file = files.cert;
  auto made = neuronmon::daemon::TlsServerContext::Create(tls, "listeners.metrics.tls");
  if (!made.ok()) {
    if (made.status().message().rfind("listeners.metrics.tls.", 0) != 0) {
      Fail("an error that names no key: " + made.status().message());
    }
    return 0;
  }
  if ((*made)->native() == nullptr) Fail("a context without an SSL_CTX");
  return 0;
}
