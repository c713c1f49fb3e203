// TlsServerOptions: a listener's TLS settings (the config's listeners.tcp.tls and
// listeners.metrics.tls), with the keys and meanings of Prometheus' `tls_server_config`
// (exporter-toolkit's web-config.yml) so operators paste theirs: Go's names for versions, client
// authentication, cipher suites and curves, and their OpenSSL equivalents for the server that
// builds the context (daemon/server/tls_context.h). Checking here is by name only; whether the
// files exist and the key matches the certificate is the server's (at start, --check-config and
// SIGHUP). Plain values and pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace neuronmon::daemon {

// Prometheus' client_auth_type values, weakest first.
enum class ClientAuth {
  kNoClientCert,
  kRequestClientCert,           // asked for, not verified
  kRequireAnyClientCert,        // required, not verified
  kVerifyClientCertIfGiven,     // verified against client_ca_file when given
  kRequireAndVerifyClientCert,  // required and verified: authenticates as the token does
};

struct TlsServerOptions {
  std::string cert_file;  // "" with key_file "": TLS off
  std::string key_file;
  std::string client_auth_type = "NoClientCert";
  std::string client_ca_file;
  // A verified client certificate must carry one of these subject alternative names (DNS, email,
  // IP or URI, compared exactly); empty: any.
  std::vector<std::string> client_allowed_sans;
  std::string min_version = "TLS12";  // TLS10 and TLS11 are refused
  std::string max_version = "TLS13";
  std::vector<std::string> cipher_suites;  // Go/IANA names, TLS 1.2 only; empty: OpenSSL's
  bool prefer_server_cipher_suites = true;
  std::vector<std::string> curve_preferences;  // CurveP256, CurveP384, CurveP521, X25519

  bool enabled() const { return !cert_file.empty() || !key_file.empty(); }
  bool operator==(const TlsServerOptions&) const = default;
};

// The names Prometheus accepts for client_auth_type, in ClientAuth's order.
const std::vector<std::string>& ClientAuthNames();
std::optional<ClientAuth> ParseClientAuth(std::string_view name);
// Whether a certificate the client presents is checked against client_ca_file.
bool VerifiesClientCert(ClientAuth auth);

// "TLS10".."TLS13" as 0x0301..0x0304 (OpenSSL's and the RFC's numbers); nullopt for others.
std::optional<int> ParseTlsVersion(std::string_view name);
// The OpenSSL name of a Go/IANA TLS 1.2 cipher suite name ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
// -> "ECDHE-RSA-AES128-GCM-SHA256"); nullopt for names Go does not know or that are insecure
// (RC4, 3DES).
std::optional<std::string> OpenSslCipherName(std::string_view go_name);
// The OpenSSL group of a Go curve name ("CurveP256" -> "P-256"); nullopt for others.
std::optional<std::string> OpenSslGroupName(std::string_view go_name);

// Appends "PREFIX.key: what is wrong" for every problem of `tls` (PREFIX: "listeners.tcp.tls"):
// one of cert_file/key_file without the other, relative paths, an unknown client_auth_type or
// version, a min_version below TLS12 ("TLS 1.0 and 1.1 are deprecated"), max below min, a
// verifying client_auth_type without client_ca_file, client_allowed_sans without verification,
// unknown cipher suites or curves, and client-side keys set while TLS is off.
void CheckTlsServerOptions(const TlsServerOptions& tls, std::string_view prefix,
                           std::vector<std::string>& found);

// Whether a verified client certificate authenticates clients of a listener with these settings
// (TLS on, client_auth_type RequireAndVerifyClientCert).
bool ClientCertAuthenticates(const TlsServerOptions& tls);

}  // namespace neuronmon::daemon
