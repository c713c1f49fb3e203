// FuzzInput reads a fuzzer's bytes front to back as small typed values, so a structured target
// can turn one input into a sequence of decisions (which frame, which group, how long a string).
// Reading past the end yields zeros and empty strings, never an error: every input is a valid
// program. FuzzInputWriter is its inverse, for the corpus generator (make_corpus.cc) to write
// realistic seeds in the same format. Both are plain values over caller-owned bytes; not
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace neuronmon::fuzz {

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const { return size_ == 0; }
  std::size_t remaining() const { return size_; }

  std::uint8_t U8() { return static_cast<std::uint8_t>(Uint(1)); }
  std::uint16_t U16() { return static_cast<std::uint16_t>(Uint(2)); }
  std::uint32_t U32() { return static_cast<std::uint32_t>(Uint(4)); }
  std::uint64_t U64() { return Uint(8); }
  bool Bool() { return (U8() & 1) != 0; }
  // One of `count` choices. REQUIRES: count > 0.
  std::size_t Pick(std::size_t count) { return U8() % count; }

  // A string of at most `max` bytes: a one-byte length (two bytes when max > 255), then the
  // bytes; shorter when the input runs out.
  std::string String(std::size_t max) {
    std::size_t n = max > 255 ? U16() : U8();
    if (n > max) n = n % (max + 1);
    return Bytes(n);
  }
  // The next `n` bytes (fewer when the input runs out).
  std::string Bytes(std::size_t n) {
    if (n > size_) n = size_;
    std::string out(reinterpret_cast<const char*>(data_), n);
    Skip(n);
    return out;
  }
  // Everything not read yet.
  std::string_view Rest() const { return {reinterpret_cast<const char*>(data_), size_}; }

 private:
  std::uint64_t Uint(std::size_t bytes) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < bytes && size_ > 0; ++i) {
      v |= static_cast<std::uint64_t>(data_[0]) << (8 * i);
      Skip(1);
    }
    return v;
  }
  void Skip(std::size_t n) {
    data_ += n;
    size_ -= n;
  }

  const std::uint8_t* data_;
  std::size_t size_;
};

class FuzzInputWriter {
 public:
  void U8(std::uint8_t v) { Uint(v, 1); }
  void U16(std::uint16_t v) { Uint(v, 2); }
  void U32(std::uint32_t v) { Uint(v, 4); }
  void U64(std::uint64_t v) { Uint(v, 8); }
  // As FuzzInput::String(max) reads it back. REQUIRES: s.size() <= max.
  void String(std::string_view s, std::size_t max) {
    max > 255 ? U16(static_cast<std::uint16_t>(s.size())) : U8(static_cast<std::uint8_t>(s.size()));
    out_.append(s);
  }
  void Bytes(std::string_view s) { out_.append(s); }
  const std::string& bytes() const { return out_; }

 private:
  void Uint(std::uint64_t v, std::size_t bytes) {
    for (std::size_t i = 0; i < bytes; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  std::string out_;
};

}  // namespace neuronmon::fuzz
