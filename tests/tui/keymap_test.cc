// Terminal keys to neuron-top actions.
#include "tui/keymap.h"

#include <gtest/gtest.h>

namespace neuronmon::tui {
namespace {

TEST(Keymap, AwsKeysAndOurs) {
  auto act = [](Key k) { return Translate({k}, false).action; };
  EXPECT_EQ(act(CharKey('q')), Action::kQuit);
  EXPECT_EQ(act(Key::kCtrlC), Action::kQuit);
  EXPECT_EQ(act(Key::kUp), Action::kUp);
  EXPECT_EQ(act(Key::kEnter), Action::kToggleItem);
  EXPECT_EQ(act(CharKey('x')), Action::kToggleTree);
  EXPECT_EQ(act(CharKey('a')), Action::kPrevTab);
  EXPECT_EQ(act(CharKey('d')), Action::kNextTab);
  EXPECT_EQ(act(CharKey('f')), Action::kToggleFlops);
  EXPECT_EQ(act(CharKey('F')), Action::kToggleFlops);
  EXPECT_EQ(act(CharKey('h')), Action::kHelp);
  EXPECT_EQ(act(CharKey('?')), Action::kHelp);
  EXPECT_EQ(act(Key::kF1), Action::kHelp);
  EXPECT_EQ(act(CharKey('+')), Action::kSlower);
  EXPECT_EQ(act(CharKey('-')), Action::kFaster);
  EXPECT_EQ(act(CharKey(' ')), Action::kPause);
  EXPECT_EQ(act(CharKey('g')), Action::kNextGraph);
  EXPECT_EQ(act(Key::kCtrlL), Action::kRepaint);
  EXPECT_EQ(act(Key::kResize), Action::kResize);
  const Command tab = Translate({CharKey('3')}, false);
  EXPECT_EQ(tab.action, Action::kSelectTab);
  EXPECT_EQ(tab.tab, 3);
  const Command click = Translate({Key::kMouseClick, 7, 9}, false);
  EXPECT_EQ(click.action, Action::kClick);
  EXPECT_EQ(click.x, 7);
  EXPECT_EQ(click.y, 9);
  // While help is open any key closes it, but quit still quits.
  EXPECT_EQ(Translate({CharKey('f')}, true).action, Action::kCloseOverlay);
  EXPECT_EQ(Translate({CharKey('q')}, true).action, Action::kQuit);
  EXPECT_EQ(act(CharKey('z')), Action::kNone);
  EXPECT_EQ(act(CharKey('p')), Action::kProcesses);
  EXPECT_EQ(act(Key::kHome), Action::kHome);
  EXPECT_EQ(act(Key::kEnd), Action::kEnd);
  EXPECT_EQ(act(CharKey('e')), Action::kEvents);
  EXPECT_EQ(act(CharKey('E')), Action::kEvents);
}

TEST(Keymap, TheProcessesViewsKeys) {
  KeyContext procs;
  procs.processes = true;
  auto act = [&](Key k) { return Translate({k}, procs).action; };
  EXPECT_EQ(act(CharKey('k')), Action::kSignal);  // htop's: no longer up
  EXPECT_EQ(act(Key::kF9), Action::kSignal);
  EXPECT_EQ(act(CharKey('s')), Action::kSortMenu);
  EXPECT_EQ(act(Key::kF6), Action::kSortMenu);
  EXPECT_EQ(act(CharKey('r')), Action::kReverseSort);
  EXPECT_EQ(act(CharKey('/')), Action::kFilter);
  EXPECT_EQ(act(CharKey('e')), Action::kTreeByJob);
  EXPECT_EQ(act(CharKey('E')), Action::kEvents);
  EXPECT_EQ(act(Key::kF5), Action::kTreeByJob);
  EXPECT_EQ(act(Key::kEscape), Action::kBack);
  EXPECT_EQ(act(CharKey('p')), Action::kProcesses);
  EXPECT_EQ(act(CharKey('j')), Action::kDown);
  EXPECT_EQ(act(Key::kUp), Action::kUp);
  EXPECT_EQ(act(Key::kEnter), Action::kToggleItem);
  EXPECT_EQ(act(CharKey('q')), Action::kQuit);
  // With a prompt open every key is the prompt's, q and Escape included; Ctrl-C still quits.
  procs.prompt = true;
  const Command typed = Translate({CharKey('q')}, procs);
  EXPECT_EQ(typed.action, Action::kPromptKey);
  EXPECT_EQ(typed.key, CharKey('q'));
  EXPECT_EQ(act(Key::kEscape), Action::kPromptKey);
  EXPECT_EQ(act(Key::kBackspace), Action::kPromptKey);
  EXPECT_EQ(act(Key::kCtrlC), Action::kQuit);
  EXPECT_EQ(act(Key::kResize), Action::kResize);
  // Help over the view: any key closes it.
  procs.help_open = true;
  EXPECT_EQ(act(CharKey('k')), Action::kCloseOverlay);
}

}  // namespace
}  // namespace neuronmon::tui
