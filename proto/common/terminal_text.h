// Text that came from elsewhere (the daemon; on a real host, other users' processes: tags, command
// lines, model names, error messages) made safe to print on a terminal: escape sequences, control
// characters and invalid UTF-8 could otherwise move the cursor, retitle the window, rewrite what
// the user sees or hide text. JSON output needs none of this — its writer escapes — so only text
// bound for a screen or stderr goes through here. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace neuronmon {

// `text` with ESC sequences (CSI, OSC, DCS, SOS, PM, APC and two-byte ones) removed whole, other
// C0 controls, DEL and C1 controls (U+0080..U+009F) removed, tabs and line breaks turned into
// spaces, Unicode bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069) removed,
// and each invalid UTF-8 byte replaced by U+FFFD. Printable text, multi-byte characters included,
// is kept byte for byte.
std::string SanitizeForTerminal(std::string_view text);

// True when SanitizeForTerminal would return `text` unchanged (a cheap check for the common case).
bool IsTerminalSafe(std::string_view text);

}  // namespace neuronmon
