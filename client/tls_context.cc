#include "client/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "proto/common/file_reader.h"
#include "proto/tls/private_key.h"

namespace neuronmon::client {
namespace {

// PEM files of a few certificates; a CA bundle (the system's is ~200 KB) fits easily.
constexpr std::size_t kMaxPemBytes = 4 << 20;
constexpr std::size_t kMaxKeyBytes = 64 << 10;

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

BioPtr MemoryBio(const std::string& bytes) {
  return BioPtr(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
}

// Never asks for a passphrase (OpenSSL's default would prompt on the terminal).
int NoPassphrase(char*, int, int, void*) { return -1; }

// `path`'s PEM certificates added to the store the daemon's certificate is verified against.
Status LoadCaFile(SSL_CTX* ctx, const std::string& path) {
  Result<std::string> pem = ReadRegularFile(path, kMaxPemBytes);
  if (!pem.ok()) return Status::InvalidArgument("--tls-ca " + pem.status().message());
  BioPtr bio = MemoryBio(*pem);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr)) {
    if (X509_STORE_add_cert(store, cert) == 1) ++added;
    X509_free(cert);
  }
  ERR_clear_error();  // the end of the file reads as an error
  if (added == 0) return Status::InvalidArgument("--tls-ca " + path + ": no PEM certificate");
  return Status::Ok();
}

// The client certificate, then any intermediate CAs after it in the same file.
Status LoadCertificateChain(SSL_CTX* ctx, const std::string& path) {
  Result<std::string> pem = ReadRegularFile(path, kMaxPemBytes);
  if (!pem.ok()) return Status::InvalidArgument("--tls-cert " + pem.status().message());
  BioPtr bio = MemoryBio(*pem);
  X509* leaf = PEM_read_bio_X509_AUX(bio.get(), nullptr, NoPassphrase, nullptr);
  if (leaf == nullptr || SSL_CTX_use_certificate(ctx, leaf) != 1) {
    X509_free(leaf);
    return Status::InvalidArgument("--tls-cert " + path + ": no usable PEM certificate (" +
                                   TakeOpenSslError() + ")");
  }
  X509_free(leaf);
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx, ca) != 1) X509_free(ca);  // add0 owns it on success
  }
  ERR_clear_error();
  return Status::Ok();
}

// The key is a secret like the token: refused when every user may read it (ReadPrivateFile).
Status LoadPrivateKey(SSL_CTX* ctx, const std::string& path) {
  Result<std::string> pem = ReadPrivateFile(path, kMaxKeyBytes, "private key");
  if (!pem.ok()) return Status::InvalidArgument("--tls-key " + pem.status().message());
  EVP_PKEY* key = tls::ParsePrivateKey(*pem);
  if (key == nullptr) {
    return Status::InvalidArgument("--tls-key " + path + ": no unencrypted PEM private key (" +
                                   TakeOpenSslError() + ")");
  }
  const int used = SSL_CTX_use_PrivateKey(ctx, key);
  EVP_PKEY_free(key);
  if (used != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("--tls-key " + path + " does not match the certificate in " +
                                   "--tls-cert");
  }
  return Status::Ok();
}

Status Configure(SSL_CTX* ctx, const TlsClientOptions& o) {
  if (o.cert_file.empty() != o.key_file.empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together (mutual TLS)");
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // Writes wait for the socket with poll and retry with the same bytes (Transport::Write).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_verify(ctx, o.insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, nullptr);
  if (!o.ca_file.empty()) {
    if (Status s = LoadCaFile(ctx, o.ca_file); !s.ok()) return s;
  } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
    return Status::Unavailable("cannot load the system's CA certificates (" + TakeOpenSslError() +
                               "); pass --tls-ca");
  }
  if (!o.cert_file.empty()) {
    if (Status s = LoadCertificateChain(ctx, o.cert_file); !s.ok()) return s;
    if (Status s = LoadPrivateKey(ctx, o.key_file); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

std::string TakeOpenSslError() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "";
  const char* reason = ERR_reason_error_string(e);
  if (reason != nullptr) return reason;
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

TlsContext::TlsContext(SSL_CTX* ctx, TlsClientOptions options)
    : ctx_(ctx), options_(std::move(options)) {}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

Result<std::unique_ptr<TlsContext>> TlsContext::Create(const TlsClientOptions& options) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return Status::Internal("TLS: " + TakeOpenSslError());
  std::unique_ptr<TlsContext> context(new TlsContext(ctx, options));
  if (Status s = Configure(ctx, options); !s.ok()) return s;
  return context;
}

}  // namespace neuronmon::client
