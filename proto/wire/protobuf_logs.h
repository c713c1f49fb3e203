// libprotobuf writes "[libprotobuf ERROR ...]" to stderr on its own for every message it cannot
// parse (a proto3 string with invalid UTF-8, say). Our decoders already turn those failures into
// errors of their own, so the library's line is noise — and, since a peer can send such frames
// at will, an unthrottled flood into the daemon's journal or across neuron-top's screen.
// SilenceProtobufParseLogs drops the library's messages below FATAL (FATAL still goes to stderr
// before the library aborts). Process-wide: call it once from main().
#pragma once

namespace neuronmon::wire {

void SilenceProtobufParseLogs();

}  // namespace neuronmon::wire
