#include "daemon/core/config/tls_options.h"

#include <algorithm>
#include <array>
#include <set>
#include <utility>

namespace neuronmon::daemon {
namespace {

struct NamePair {
  std::string_view go;
  std::string_view openssl;
};

// Go's crypto/tls TLS 1.0-1.2 suites (with its aliases) that are not broken outright, and their
// OpenSSL names. Go's RC4 and 3DES suites are left out: a config naming one is an error.
constexpr std::array kCipherSuites = {
    NamePair{"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    NamePair{"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    NamePair{"TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256"},
    NamePair{"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    NamePair{"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    NamePair{"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    NamePair{"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    NamePair{"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    NamePair{"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    NamePair{"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"},
    NamePair{"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256"},
    NamePair{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    NamePair{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    NamePair{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    NamePair{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    NamePair{"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    NamePair{"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    NamePair{"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
    NamePair{"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
};

constexpr std::array kCurves = {
    NamePair{"CurveP256", "P-256"},
    NamePair{"CurveP384", "P-384"},
    NamePair{"CurveP521", "P-521"},
    NamePair{"X25519", "X25519"},
};

constexpr std::array<std::string_view, 4> kVersions = {"TLS10", "TLS11", "TLS12", "TLS13"};

std::optional<std::string> Lookup(const auto& table, std::string_view go) {
  for (const NamePair& p : table) {
    if (p.go == go) return std::string(p.openssl);
  }
  return std::nullopt;
}

std::string Key(std::string_view prefix, std::string_view key) {
  return std::string(prefix) + "." + std::string(key);
}

// Problems of a list: unknown names (by `known`), duplicates.
template <typename Known>
void CheckNames(const std::vector<std::string>& names, std::string_view key, Known known,
                const std::string& choices, std::vector<std::string>& found) {
  std::set<std::string> seen;
  for (const std::string& n : names) {
    if (!seen.insert(n).second) {
      found.push_back(std::string(key) + ": \"" + n + "\" is listed twice");
    } else if (!known(n)) {
      found.push_back(std::string(key) + ": unknown name \"" + n + "\" (" + choices + ")");
    }
  }
}

}  // namespace

const std::vector<std::string>& ClientAuthNames() {
  static const std::vector<std::string> names = {"NoClientCert", "RequestClientCert",
                                                 "RequireAnyClientCert", "VerifyClientCertIfGiven",
                                                 "RequireAndVerifyClientCert"};
  return names;
}

std::optional<ClientAuth> ParseClientAuth(std::string_view name) {
  const auto& names = ClientAuthNames();
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return static_cast<ClientAuth>(it - names.begin());
}

bool VerifiesClientCert(ClientAuth auth) {
  return auth == ClientAuth::kVerifyClientCertIfGiven ||
         auth == ClientAuth::kRequireAndVerifyClientCert;
}

std::optional<int> ParseTlsVersion(std::string_view name) {
  for (std::size_t i = 0; i < kVersions.size(); ++i) {
    if (kVersions[i] == name) return 0x0301 + static_cast<int>(i);
  }
  return std::nullopt;
}

std::optional<std::string> OpenSslCipherName(std::string_view go_name) {
  return Lookup(kCipherSuites, go_name);
}

std::optional<std::string> OpenSslGroupName(std::string_view go_name) {
  return Lookup(kCurves, go_name);
}

bool ClientCertAuthenticates(const TlsServerOptions& tls) {
  return tls.enabled() &&
         ParseClientAuth(tls.client_auth_type) == ClientAuth::kRequireAndVerifyClientCert;
}

void CheckTlsServerOptions(const TlsServerOptions& tls, std::string_view prefix,
                           std::vector<std::string>& found) {
  const auto absolute = [&](const std::string& path, std::string_view key) {
    if (!path.empty() && path.front() != '/') {
      found.push_back(Key(prefix, key) + ": must be an absolute path (got \"" + path + "\")");
    }
  };
  absolute(tls.cert_file, "cert_file");
  absolute(tls.key_file, "key_file");
  absolute(tls.client_ca_file, "client_ca_file");
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    found.push_back(Key(prefix, tls.cert_file.empty() ? "cert_file" : "key_file") +
                    ": TLS needs both cert_file and key_file");
  }

  const std::optional<int> min = ParseTlsVersion(tls.min_version);
  const std::optional<int> max = ParseTlsVersion(tls.max_version);
  if (!min) {
    found.push_back(Key(prefix, "min_version") + ": unknown version \"" + tls.min_version +
                    "\" (TLS12 or TLS13)");
  } else if (*min < 0x0303) {
    found.push_back(Key(prefix, "min_version") + ": " + tls.min_version +
                    " is refused: TLS 1.0 and 1.1 are deprecated (RFC 8996); use TLS12 or TLS13");
  }
  if (!max) {
    found.push_back(Key(prefix, "max_version") + ": unknown version \"" + tls.max_version +
                    "\" (TLS12 or TLS13)");
  } else if (min && *max < *min) {
    found.push_back(Key(prefix, "max_version") + ": " + tls.max_version + " is below min_version " +
                    tls.min_version);
  }

  const std::optional<ClientAuth> auth = ParseClientAuth(tls.client_auth_type);
  if (!auth) {
    std::string choices;
    for (const std::string& n : ClientAuthNames()) choices += (choices.empty() ? "" : ", ") + n;
    found.push_back(Key(prefix, "client_auth_type") + ": unknown value \"" + tls.client_auth_type +
                    "\" (" + choices + ")");
  } else if (VerifiesClientCert(*auth) && tls.client_ca_file.empty()) {
    found.push_back(Key(prefix, "client_ca_file") + ": client_auth_type " + tls.client_auth_type +
                    " verifies client certificates, so it needs the CA that signs them");
  }
  if (!tls.client_allowed_sans.empty() && (!auth || !VerifiesClientCert(*auth))) {
    found.push_back(Key(prefix, "client_allowed_sans") +
                    ": has effect only when client_auth_type verifies certificates "
                    "(VerifyClientCertIfGiven or RequireAndVerifyClientCert)");
  }

  CheckNames(
      tls.cipher_suites, Key(prefix, "cipher_suites"),
      [](const std::string& n) { return OpenSslCipherName(n).has_value(); },
      "Go's TLS 1.2 suite names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256; TLS 1.3's suites "
      "are not configurable, RC4 and 3DES are refused",
      found);
  CheckNames(
      tls.curve_preferences, Key(prefix, "curve_preferences"),
      [](const std::string& n) { return OpenSslGroupName(n).has_value(); },
      "CurveP256, CurveP384, CurveP521 or X25519", found);

  if (tls.enabled()) return;
  // Settings that say something only with TLS on: a half-done set-up is reported, not ignored.
  const TlsServerOptions defaults;
  const std::pair<bool, std::string_view> unused[] = {
      {tls.client_auth_type != defaults.client_auth_type, "client_auth_type"},
      {!tls.client_ca_file.empty(), "client_ca_file"},
      {!tls.cipher_suites.empty(), "cipher_suites"},
      {!tls.curve_preferences.empty(), "curve_preferences"},
  };
  for (const auto& [set, key] : unused) {
    if (set) found.push_back(Key(prefix, key) + ": set, but TLS is off (cert_file is empty)");
  }
}

}  // namespace neuronmon::daemon
