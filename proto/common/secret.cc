#include "proto/common/secret.h"

#include <algorithm>
#include <cstddef>

namespace neuronmon {

bool SecretsEqual(std::string_view a, std::string_view b) {
  // Every byte of the longer one is visited, so the time says nothing about where they differ.
  const std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  // volatile: keep the compiler from turning the loop into an early-exit comparison.
  volatile unsigned char result = diff;
  return result == 0;
}

}  // namespace neuronmon
