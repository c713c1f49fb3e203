// What soak's abusive stream clients send (bench/README.md, "Soak"): Subscribes with random,
// unknown or absurd groups and periods and ordinary, pathological or invalid tag filters; resume
// points the daemon does not hold; bytes no client should send. Each is drawn from the caller's
// Rng, so a seed repeats a run's choices; no state of their own.
#pragma once

#include <string>

#include "bench/soak/options.h"
#include "neuronmon/v1/envelope.pb.h"

namespace neuronmon::soak {

// A Subscribe with a random group set (empty: every group), periods and tag filter; one group in
// twenty is unknown or has an absurd period.
v1::Subscribe RandomSubscribe(Rng& rng);

// RandomSubscribe resuming from the start, ahead of anything (another instance's seqs), or
// anywhere; the soak's seqs stay below a thousand, so small values hit both retained and evicted
// reports.
v1::Subscribe ResumeSubscribe(Rng& rng);

// Bytes no client should send: each is answered with an Error and a close, or (a truncated frame)
// by the handshake deadline.
std::string GarbageBytes(Rng& rng);

}  // namespace neuronmon::soak
