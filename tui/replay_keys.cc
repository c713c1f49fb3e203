#include "tui/replay_keys.h"

#include <cstdint>

namespace neuronmon::tui {
namespace {

// What a key does in replay mode; false when it is not a replay key (the usual keys apply).
bool ReplayKey(const Input& in, ReplayPlayer& player, Model& model,
               ReplayPlayer::Steady::time_point now, bool* prompting) {
  using std::chrono::seconds;
  switch (in.key) {
    case Key::kHome:
      player.SeekTo(model, WallTime{}, now);  // clamped to the start
      return true;
    case Key::kEnd:
      player.SeekTo(model, WallTime::max() - std::chrono::hours(24), now);
      return true;
    default:
      break;
  }
  switch (static_cast<std::int32_t>(in.key)) {
    case ' ':
      player.TogglePause(now);
      return true;
    case '.':
      player.Step(model, 1, now);
      return true;
    case ',':
      player.Step(model, -1, now);
      return true;
    case '[':
      player.SeekBy(model, seconds(-10), now);
      return true;
    case ']':
      player.SeekBy(model, seconds(10), now);
      return true;
    case '{':
      player.SeekBy(model, seconds(-60), now);
      return true;
    case '}':
      player.SeekBy(model, seconds(60), now);
      return true;
    case '<':
      player.Slower();
      return true;
    case '>':
      player.Faster();
      return true;
    case 't':
    case 'T':
      *prompting = true;
      return true;
    default:
      return false;
  }
}

// Typing a time after `t`: Enter jumps, Escape gives up. False when the prompt closed.
bool PromptKey(const Input& in, std::string& text) {
  const auto c = static_cast<std::int32_t>(in.key);
  if (in.key == Key::kEscape) return false;
  if (in.key == Key::kBackspace || c == 127 || c == 8) {
    if (!text.empty()) text.pop_back();
  } else if (c >= 0x20 && c < 0x7f && text.size() < 40) {
    text.push_back(static_cast<char>(c));
  }
  return true;
}

// A key while the prompt is open: Enter jumps to the time typed, Escape gives up.
void PromptInput(const Input& in, ReplayPlayer& player, Model& model,
                 ReplayPlayer::Steady::time_point now, ReplayPrompt& prompt) {
  if (in.key == Key::kEnter || in.key == CharKey('\n') || in.key == CharKey('\r')) {
    prompt.problem.clear();
    if (!player.SeekToText(model, prompt.text, now, &prompt.problem)) {
      prompt.problem = "t: " + prompt.problem;
    }
    prompt.open = false;
    prompt.text.clear();
  } else if (!PromptKey(in, prompt.text)) {
    prompt.open = false;
    prompt.text.clear();
  }
}

}  // namespace

bool QuitsReplay(const Input& in, const TopState& state, const ReplayPrompt& prompt) {
  return in.key == Key::kCtrlC ||
         (!prompt.open && !KeysFor(state).prompt && in.key == CharKey('q'));
}

Effect ApplyReplayInput(const Input& in, TopState& state, ReplayPlayer& player,
                        ReplayPrompt& prompt, ReplayPlayer::Steady::time_point now) {
  if (prompt.open) {
    PromptInput(in, player, state.live, now, prompt);
    return Effect::kNone;
  }
  prompt.problem.clear();
  const KeyContext keys = KeysFor(state);
  // The Processes view's prompts take every key, and its Home/End select a process.
  const bool list_key = keys.processes && (in.key == Key::kHome || in.key == Key::kEnd);
  if (!state.view.help && !keys.prompt && !list_key &&
      ReplayKey(in, player, state.live, now, &prompt.open)) {
    return Effect::kNone;
  }
  return Apply(Translate(in, keys), state);
}

std::string ReplayStatus(const ReplayPlayer& player, const ReplayPrompt& prompt) {
  std::string status = player.StatusText();
  if (prompt.open) {
    status += " | jump to (21:30, +10m, 2026-12-04T21:30:00Z): " + prompt.text + "_";
  }
  if (!prompt.problem.empty()) status += " | " + prompt.problem;
  return status;
}

}  // namespace neuronmon::tui
