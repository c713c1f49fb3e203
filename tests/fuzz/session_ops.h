// The input format of session_fuzz, shared with the corpus generator (make_corpus.cc): the first
// byte's bits choose the transport, the server's limits and the mode; in structured mode each
// operation then starts with one byte, an Op (modulo Op::kCount), read by FuzzInput.
#pragma once

#include <cstdint>

namespace neuronmon::fuzz {

// Bits of the first byte.
inline constexpr std::uint8_t kStructured = 0x01;  // else raw: chunk size, then bytes
inline constexpr std::uint8_t kTcp = 0x02;         // loopback TCP with the token; else a socketpair
inline constexpr std::uint8_t kIntervalMask = 0x0C;      // subscribe_interval: 0, 0, 1 ms, 1 s
inline constexpr std::uint8_t kShortQueue = 0x10;        // queue_depth 2, 1 MiB byte budgets
inline constexpr std::uint8_t kFewControlFrames = 0x20;  // max_control_frames 4
inline constexpr std::uint8_t kNotReading = 0x40;        // the client starts without reading
inline constexpr std::uint8_t kShortDeadlines = 0x80;    // subscribe and idle timeouts 1 s

enum class Op : std::uint8_t {
  kHello,       // version pick, token pick, client name
  kSubscribe,   // groups, periods, tag filter, resume_after_seq pick
  kHeartbeat,   // newest_seq, wall time
  kGarbage,     // a length-prefixed run of raw bytes
  kEnvelope,    // a length-prefixed serialized Envelope of any kind
  kSample,      // DaemonCore::Sample, Broadcast, Heartbeat
  kSweep,       // StreamServer::Heartbeat at a later time pick
  kDrive,       // only drive the io_context
  kToggleRead,  // the client stops or resumes reading
  kWait,        // 2 ms of real time (at most twice per input)
  kNotice,      // NoticeAll: kind, text
  kHalfClose,   // the client shuts down its sending side; the program ends
  kCount
};

}  // namespace neuronmon::fuzz
