// Every string field of a protobuf message, at every depth, made safe for a terminal with
// SanitizeForTerminal (proto/common/terminal_text.h): what a client shows on a screen or stderr
// from a daemon's Welcome or Report goes through here first — tags, command lines, model names,
// instance ids, error and finding texts, and any string field added later — while JSON output,
// which its writer escapes, keeps the original. Pure over the message; thread-compatible.
#pragma once

#include <google/protobuf/message.h>

namespace neuronmon::wire {

// Sanitizes `message`'s string fields in place (bytes fields are left alone).
void MakeTerminalSafe(google::protobuf::Message& message);

}  // namespace neuronmon::wire
