// FuzzFail: how a fuzz target reports a broken invariant — "<target>: <what>" on stderr, then
// abort(), which libFuzzer records as a crash with the input that caused it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace neuronmon::fuzz {

[[noreturn]] inline void FuzzFail(std::string_view target, std::string_view what) {
  std::fprintf(stderr, "%.*s: %.*s\n", static_cast<int>(target.size()), target.data(),
               static_cast<int>(what.size()), what.data());
  std::abort();
}

}  // namespace neuronmon::fuzz
