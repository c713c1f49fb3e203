// TestPki: a throw-away public-key infrastructure for TLS tests, made with the real `openssl`
// command (Debian's openssl package) in a directory the caller owns — a CA, a server certificate
// for localhost/127.0.0.1/::1 signed by it, a client certificate (SAN DNS:client.example,
// email:ops@example.com), a second CA with a server certificate of its own (the "wrong CA"), an
// expired server certificate from the right CA, and a server certificate for another name
// (other.example); the expired one serves as a server or a client certificate. Keys are EC
// P-256 (fast to make), mode 0600 (the daemon refuses a key others may read). Each test makes its
// own; nothing is shared between test processes. Header-only; not thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace neuronmon::test_util {

class TestPki {
 public:
  // Makes everything under `dir` (which must exist); ok() says whether openssl did it all.
  explicit TestPki(std::string dir) : dir_(std::move(dir)) { ok_ = Make(); }

  bool ok() const { return ok_; }
  const std::string& dir() const { return dir_; }
  std::string File(const std::string& name) const { return dir_ + "/" + name; }

  std::string ca() const { return File("ca.pem"); }
  std::string server_cert() const { return File("server.pem"); }
  std::string server_key() const { return File("server.key"); }
  std::string client_cert() const { return File("client.pem"); }
  std::string client_key() const { return File("client.key"); }
  std::string wrong_ca() const { return File("wrong-ca.pem"); }
  std::string wrong_server_cert() const { return File("wrong-server.pem"); }
  std::string wrong_server_key() const { return File("wrong-server.key"); }
  std::string expired_cert() const { return File("expired.pem"); }
  std::string expired_key() const { return File("expired.key"); }
  std::string other_name_cert() const { return File("other.pem"); }
  std::string other_name_key() const { return File("other.key"); }
  // A second server certificate for localhost from the same CA (a renewed certificate, for reload
  // tests): its serial differs from server.pem's.
  std::string renewed_cert() const { return File("renewed.pem"); }
  std::string renewed_key() const { return File("renewed.key"); }

  // Runs `command` in the PKI's directory, its output going to openssl.log; true on exit 0.
  bool Run(const std::string& command) const {
    const std::string line = "cd '" + dir_ + "' && (" + command + ") >>openssl.log 2>&1";
    const bool ok = std::system(line.c_str()) == 0;
    EXPECT_TRUE(ok) << command << " failed; see " << dir_ << "/openssl.log";
    return ok;
  }

 private:
  static constexpr const char* kKey =
      "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256";

  bool WriteFile(const std::string& name, const std::string& text) const {
    std::ofstream out(File(name));
    out << text;
    return static_cast<bool>(out);
  }

  // A CA named `name` (name.pem, name.key).
  bool MakeCa(const std::string& name) const {
    return Run(std::string(kKey) + " -out " + name + ".key") &&
           Run("openssl req -x509 -new -key " + name + ".key -out " + name +
               ".pem -days 30 -subj '/CN=neuronmon test " + name +
               "' -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,"
               "cRLSign");
  }

  // A leaf `name` signed by CA `ca`, with extensions file `ext` ([v3] section), valid `dates`
  // ("-days 30", or openssl ca's start and end dates).
  bool MakeLeaf(const std::string& name, const std::string& ca, const std::string& cn,
                const std::string& san, const std::string& usage) const {
    return WriteFile(name + ".ext", "[v3]\nbasicConstraints=CA:FALSE\nsubjectAltName=" + san +
                                        "\nextendedKeyUsage=" + usage + "\n") &&
           Run(std::string(kKey) + " -out " + name + ".key") &&
           Run("openssl req -new -key " + name + ".key -out " + name + ".csr -subj '/CN=" + cn +
               "'") &&
           Run("openssl x509 -req -in " + name + ".csr -CA " + ca + ".pem -CAkey " + ca +
               ".key -CAcreateserial -out " + name + ".pem -days 30 -extfile " + name +
               ".ext -extensions v3");
  }

  // A certificate whose validity ended in 2021, through `openssl ca` (x509 -req cannot back-date).
  bool MakeExpired() const {
    const std::string conf =
        "[ca]\ndefault_ca=test\n[test]\ndir=.\ndatabase=index.txt\nnew_certs_dir=.\n"
        "certificate=ca.pem\nprivate_key=ca.key\nserial=serial.txt\ndefault_md=sha256\n"
        "policy=any\nunique_subject=no\ncopy_extensions=none\n[any]\ncommonName=supplied\n"
        "[v3]\nbasicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\n"
        "extendedKeyUsage=serverAuth,clientAuth\n";
    return WriteFile("ca.conf", conf) && WriteFile("index.txt", "") &&
           WriteFile("serial.txt", "1000\n") && Run(std::string(kKey) + " -out expired.key") &&
           Run("openssl req -new -key expired.key -out expired.csr -subj '/CN=localhost'") &&
           Run("openssl ca -batch -config ca.conf -extensions v3 -startdate 20200101000000Z "
               "-enddate 20210101000000Z -in expired.csr -out expired.pem -notext");
  }

  bool Make() {
    const std::string server_san = "DNS:localhost,IP:127.0.0.1,IP:::1";
    return MakeCa("ca") && MakeCa("wrong-ca") &&
           MakeLeaf("server", "ca", "localhost", server_san, "serverAuth") &&
           MakeLeaf("renewed", "ca", "localhost", server_san, "serverAuth") &&
           MakeLeaf("client", "ca", "neuron-client", "DNS:client.example,email:ops@example.com",
                    "clientAuth") &&
           MakeLeaf("wrong-server", "wrong-ca", "localhost", server_san, "serverAuth") &&
           MakeLeaf("other", "ca", "other.example", "DNS:other.example", "serverAuth") &&
           MakeExpired() && Run("chmod 600 *.key");
  }

  std::string dir_;
  bool ok_ = false;
};

}  // namespace neuronmon::test_util
