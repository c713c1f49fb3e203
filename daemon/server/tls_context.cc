#include "daemon/server/tls_context.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <vector>

#include "daemon/core/config/config.h"
#include "proto/common/file_reader.h"
#include "proto/tls/private_key.h"

namespace neuronmon::daemon {
namespace {

// The SSL_CTX's list of allowed client SANs, owned by the SSL_CTX (freed with it), so a handshake
// still running on a connection accepted before a reload reads a list that is still there.
void FreeSans(void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*) {
  delete static_cast<std::vector<std::string>*>(ptr);
}

int SansIndex() {
  static const int index =
      SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, &FreeSans);  // NOLINT
  return index;
}

// The certificate's subject alternative names as text: DNS names, emails, URIs and IP addresses
// (inet_ntop's form: "10.0.0.7", "fd00::7").
std::vector<std::string> SubjectAltNames(X509* cert) {
  std::vector<std::string> out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type == GEN_DNS || name->type == GEN_EMAIL || name->type == GEN_URI) {
      const ASN1_STRING* s = name->d.ia5;
      out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                       static_cast<std::size_t>(ASN1_STRING_length(s)));
    } else if (name->type == GEN_IPADD) {
      const int length = ASN1_STRING_length(name->d.ip);
      char text[INET6_ADDRSTRLEN] = "";
      if ((length == 4 || length == 16) &&
          ::inet_ntop(length == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(name->d.ip), text,
                      sizeof text) != nullptr) {
        out.emplace_back(text);
      }
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

// Verification of a client certificate: OpenSSL's chain check, then (for the client's own
// certificate) the allowed names.
int VerifyClient(int preverify_ok, X509_STORE_CTX* store) {
  if (preverify_ok != 1 || X509_STORE_CTX_get_error_depth(store) != 0) return preverify_ok;
  auto* ssl =
      static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  const auto* allowed = static_cast<const std::vector<std::string>*>(
      SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), SansIndex()));
  if (allowed == nullptr || allowed->empty()) return 1;
  for (const std::string& san : SubjectAltNames(X509_STORE_CTX_get_current_cert(store))) {
    if (std::find(allowed->begin(), allowed->end(), san) != allowed->end()) return 1;
  }
  X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
  return 0;
}

// A private key is at most this large (an RSA 16384-bit PEM is about 12 KiB).
constexpr std::size_t kMaxKeyBytes = 64 << 10;

// RequestClientCert and RequireAnyClientCert take any certificate, unverified.
int AcceptAny(int, X509_STORE_CTX*) { return 1; }

std::string Key(std::string_view prefix, std::string_view key) {
  return std::string(prefix) + "." + std::string(key);
}

// "TLS, certificate CN=host, valid until 2027-01-05".
std::string Describe(SSL_CTX* ctx) {
  X509* cert = SSL_CTX_get0_certificate(ctx);
  if (cert == nullptr) return "TLS";
  char cn[256] = "";
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
  std::tm until{};
  std::string text = std::string("TLS, certificate CN=") + cn;
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &until) == 1) {
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d", &until);
    text += std::string(", valid until ") + date;
  }
  return text;
}

}  // namespace

std::string TakeOpenSslErrors(std::string_view fallback) {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? std::string(fallback) : out;
}

Result<std::shared_ptr<const TlsServerContext>> TlsServerContext::Create(
    const TlsServerOptions& options, std::string_view prefix) {
  std::vector<std::string> found;
  CheckTlsServerOptions(options, prefix, found);
  if (!found.empty()) return Status::InvalidArgument(found.front());
  if (!options.enabled()) return Status::InvalidArgument(Key(prefix, "cert_file") + ": not set");
  ERR_clear_error();
  std::shared_ptr<TlsServerContext> made(new TlsServerContext());
  made->ctx_ = SSL_CTX_new(TLS_server_method());
  SSL_CTX* ctx = made->ctx_;
  if (ctx == nullptr) return Status::Internal("SSL_CTX_new: " + TakeOpenSslErrors("failed"));
  const auto fail = [&](std::string_view key, const std::string& what) {
    return Status::InvalidArgument(Key(prefix, key) + ": " + what);
  };

  // The key as the token is read: a bounded regular file other users cannot read.
  Result<std::string> key_pem = ReadPrivateFile(options.key_file, kMaxKeyBytes, "private key");
  if (!key_pem.ok()) return fail("key_file", key_pem.status().message());
  if (SSL_CTX_use_certificate_chain_file(ctx, options.cert_file.c_str()) != 1) {
    return fail("cert_file",
                "cannot load " + options.cert_file + ": " + TakeOpenSslErrors("not a PEM file"));
  }
  // An encrypted key is an error, not a passphrase question on the daemon's terminal.
  EVP_PKEY* key = tls::ParsePrivateKey(*key_pem);
  const int used = key == nullptr ? 0 : SSL_CTX_use_PrivateKey(ctx, key);
  EVP_PKEY_free(key);
  if (used != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      ERR_clear_error();
      return fail("key_file", options.key_file + " does not match cert_file " + options.cert_file);
    }
    return fail("key_file", "cannot load " + options.key_file + ": " +
                                TakeOpenSslErrors("not a PEM private key"));
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return fail("key_file", options.key_file + " does not match cert_file " + options.cert_file);
  }

  SSL_CTX_set_min_proto_version(ctx, *ParseTlsVersion(options.min_version));
  SSL_CTX_set_max_proto_version(ctx, *ParseTlsVersion(options.max_version));
  // Renegotiation lets a client make the server redo expensive work on demand; compression
  // leaks secrets (CRIME).
  std::uint64_t flags = SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION;
  if (options.prefer_server_cipher_suites) flags |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  SSL_CTX_set_options(ctx, flags);

  // Go's names, already checked, as OpenSSL's list ("ECDHE-RSA-AES128-GCM-SHA256:...").
  const auto openssl_list = [](const std::vector<std::string>& names, auto to_openssl) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ":") + *to_openssl(n);
    return list;
  };
  if (!options.cipher_suites.empty()) {
    const std::string list = openssl_list(options.cipher_suites, OpenSslCipherName);
    if (SSL_CTX_set_cipher_list(ctx, list.c_str()) != 1) {
      return fail("cipher_suites", "OpenSSL supports none of them: " + TakeOpenSslErrors(list));
    }
  }
  if (!options.curve_preferences.empty()) {
    const std::string list = openssl_list(options.curve_preferences, OpenSslGroupName);
    if (SSL_CTX_set1_groups_list(ctx, list.c_str()) != 1) {
      return fail("curve_preferences", "OpenSSL supports none of them: " + TakeOpenSslErrors(list));
    }
  }

  const ClientAuth auth = *ParseClientAuth(options.client_auth_type);
  static constexpr unsigned char kSessionContext[] = "neuron-monitord";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  switch (auth) {
    case ClientAuth::kNoClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
      break;
    case ClientAuth::kRequestClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, &AcceptAny);
      break;
    case ClientAuth::kRequireAnyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, &AcceptAny);
      break;
    case ClientAuth::kVerifyClientCertIfGiven:
    case ClientAuth::kRequireAndVerifyClientCert: {
      if (SSL_CTX_load_verify_locations(ctx, options.client_ca_file.c_str(), nullptr) != 1) {
        return fail("client_ca_file", "cannot load " + options.client_ca_file + ": " +
                                          TakeOpenSslErrors("not a PEM file"));
      }
      // The CAs named to clients, so they pick a certificate those signed.
      if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options.client_ca_file.c_str())) {
        SSL_CTX_set_client_CA_list(ctx, names);
      }
      SSL_CTX_set_ex_data(ctx, SansIndex(),
                          new std::vector<std::string>(options.client_allowed_sans));
      const int mode = auth == ClientAuth::kRequireAndVerifyClientCert
                           ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                           : SSL_VERIFY_PEER;
      SSL_CTX_set_verify(ctx, mode, &VerifyClient);
      made->verifies_clients_ = true;
      break;
    }
  }
  made->description_ = Describe(ctx);
  ERR_clear_error();
  return std::shared_ptr<const TlsServerContext>(std::move(made));
}

TlsServerContext::~TlsServerContext() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

void KeepRecordBuffers(ssl_st* ssl) { SSL_clear_mode(ssl, SSL_MODE_RELEASE_BUFFERS); }

Result<ListenerTls> MakeListenerTls(const DaemonConfig& config) {
  ListenerTls made;
  const ListenersConfig& l = config.listeners;
  // The stream's even without an address: systemd may pass the listening socket.
  if (l.tcp_tls.enabled()) {
    auto tcp = TlsServerContext::Create(l.tcp_tls, "listeners.tcp.tls");
    if (!tcp.ok()) return tcp.status();
    made.tcp = *tcp;
  }
  if (l.metrics && l.metrics_tls.enabled()) {
    auto metrics = TlsServerContext::Create(l.metrics_tls, "listeners.metrics.tls");
    if (!metrics.ok()) return metrics.status();
    made.metrics = *metrics;
  }
  return made;
}

bool TlsServerContext::PeerAuthenticated(ssl_st* ssl) const {
  if (!verifies_clients_ || ssl == nullptr) return false;
  return SSL_get0_peer_certificate(ssl) != nullptr && SSL_get_verify_result(ssl) == X509_V_OK;
}

}  // namespace neuronmon::daemon
