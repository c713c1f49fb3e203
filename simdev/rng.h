// Counter-based randomness: every random value is a pure function of (seed, stream, index), so a
// simulated reading depends only on the seed and the time asked for — never on how often or in
// what order the simulator was read. Header-only; thread-safe.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace neuronmon::simdev {

inline std::uint64_t Mix64(std::uint64_t x) {
  // SplitMix64 finaliser.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline std::uint64_t Hash(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0,
                          std::uint64_t c = 0) {
  return Mix64(Mix64(Mix64(seed ^ Mix64(a)) ^ b) ^ (c * 0x632be59bd9b4e019ULL));
}

// Uniform in [0, 1).
inline double Uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0,
                      std::uint64_t c = 0) {
  return static_cast<double>(Hash(seed, a, b, c) >> 11) * 0x1.0p-53;
}

// Standard normal (Box-Muller on two independent uniforms).
inline double Normal(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0,
                     std::uint64_t c = 0) {
  const double u1 = 1.0 - Uniform(seed, a, b, c * 2 + 1);
  const double u2 = Uniform(seed, a, b, c * 2 + 2);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// Cheap bell-shaped noise with zero mean and unit standard deviation (a triangular distribution
// on [-sqrt(6), sqrt(6)] from one hash), for per-core jitter on hot paths.
inline double Triangular(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0,
                         std::uint64_t c = 0) {
  const std::uint64_t h = Hash(seed, a, b, c);
  const double u1 = static_cast<double>(h >> 32) * 0x1.0p-32;
  const double u2 = static_cast<double>(h & 0xffffffffULL) * 0x1.0p-32;
  return (u1 + u2 - 1.0) * 2.449489742783178;
}

// Poisson-distributed count with mean `mean` (inversion for small means, normal approximation
// above 30).
inline std::uint64_t Poisson(double mean, std::uint64_t seed, std::uint64_t a,
                             std::uint64_t b = 0) {
  if (mean <= 0) return 0;
  if (mean > 30) {
    const double v = mean + std::sqrt(mean) * Normal(seed, a, b, 7);
    return v <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(v));
  }
  const double u = Uniform(seed, a, b, 11);
  double p = std::exp(-mean);
  double cdf = p;
  std::uint64_t k = 0;
  while (u > cdf && k < 200) {
    ++k;
    p *= mean / static_cast<double>(k);
    cdf += p;
  }
  return k;
}

// Stream identifiers, so different uses of the same indices never correlate.
enum Stream : std::uint64_t {
  kStreamStep = 1,
  kStreamCore = 2,
  kStreamCollective = 3,
  kStreamInput = 4,
  kStreamArrivals = 5,
  kStreamLatency = 6,
  kStreamFault = 7,
  kStreamIdentity = 8,
  kStreamCpu = 9,
  kStreamPower = 10,
};

}  // namespace neuronmon::simdev
