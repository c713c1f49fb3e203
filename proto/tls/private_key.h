// A PEM private key parsed from memory for OpenSSL, never asking for a passphrase (OpenSSL's
// default callback would prompt on the terminal): an encrypted key is simply not a key here.
// Used by the clients' --tls-key and the daemon's key_file. Thread-safe.
#pragma once

#include <string_view>

struct evp_pkey_st;

namespace neuronmon::tls {

// The key in `pem`, owned by the caller (EVP_PKEY_free); null when `pem` holds no unencrypted PEM
// private key (OpenSSL's error queue says why).
evp_pkey_st* ParsePrivateKey(std::string_view pem);

}  // namespace neuronmon::tls
