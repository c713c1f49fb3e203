// Default libFuzzer flags a target sets for itself, so `./session_fuzz corpus/` runs as well by
// hand as under ctest and bench/fuzz_long.sh. Call from LLVMFuzzerInitialize, which libFuzzer
// runs before it parses its flags; the defaults go right after the program name, so any flag
// given on the command line still wins.
#pragma once

#include <vector>

namespace neuronmon::fuzz {

// REQUIRES: called once, from LLVMFuzzerInitialize(argc, argv).
inline void PrependDefaultFlags(int* argc, char*** argv, std::vector<char*> flags) {
  static std::vector<char*> args;
  args.assign(*argv, *argv + *argc);
  args.insert(args.begin() + 1, flags.begin(), flags.end());
  args.push_back(nullptr);
  *argc = static_cast<int>(args.size()) - 1;
  *argv = args.data();
}

}  // namespace neuronmon::fuzz
