// Comparing a secret a peer sent (a bearer token, a stream token) with the one configured, without
// the time it takes telling the peer how much of its guess was right. Reading a secret from its
// file is ReadSecretFile (file_reader.h). Pure; thread-safe.
#pragma once

#include <string_view>

namespace neuronmon {

// Whether `a` and `b` are the same bytes, in time that depends only on their lengths, not on
// where they differ: every byte of the longer one is visited.
bool SecretsEqual(std::string_view a, std::string_view b);

}  // namespace neuronmon
