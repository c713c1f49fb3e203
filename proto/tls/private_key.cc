#include "proto/tls/private_key.h"

#include <openssl/bio.h>
#include <openssl/pem.h>

namespace neuronmon::tls {
namespace {

int NoPassphrase(char*, int, int, void*) { return -1; }

}  // namespace

evp_pkey_st* ParsePrivateKey(std::string_view pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return nullptr;
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, NoPassphrase, nullptr);
  BIO_free(bio);
  return key;
}

}  // namespace neuronmon::tls
