// The replay screen's part of the controller: what a key does in neuron-top --replay. Space
// pauses, `.` and `,` step one sample, `[` `]` seek 10 s and `{` `}` a minute, Home/End go to the
// ends, `<` `>` halve and double the speed, and `t` opens a prompt for a time to jump to (Enter
// jumps, Escape gives up); any other key, and every key in the help or a Processes-view prompt,
// is the usual keys' (Apply). The prompt, and why the last jump failed, show in the title's replay
// state. Pure apart from the player's recording; not thread-safe (the UI loop owns it all).
#pragma once

#include <string>

#include "tui/controller.h"
#include "tui/keymap.h"
#include "tui/replay_player.h"
#include "tui/top_state.h"

namespace neuronmon::tui {

// The `t` prompt, and why the last jump failed.
struct ReplayPrompt {
  bool open = false;
  std::string text;     // the time typed so far
  std::string problem;  // "t: ...": shown until the next key
};

// Ctrl-C, or q where q is not typed into a prompt: the loop stops reading keys and quits.
bool QuitsReplay(const Input& in, const TopState& state, const ReplayPrompt& prompt);

// Any other key: the prompt's, a replay key (both Effect::kNone), or the usual keys (Apply's
// effect, for the loop to perform).
Effect ApplyReplayInput(const Input& in, TopState& state, ReplayPlayer& player,
                        ReplayPrompt& prompt, ReplayPlayer::Steady::time_point now);

// The title's replay state: the player's, then the open prompt and the last jump's problem.
std::string ReplayStatus(const ReplayPlayer& player, const ReplayPrompt& prompt);

}  // namespace neuronmon::tui
