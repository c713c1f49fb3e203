// FramePacer: when one of neuron-top's screens (one host, the cluster view, a replay) draws its
// next frame, and how long its loop may wait for input meanwhile. A frame is due one refresh
// interval (--delay, halved and doubled by - and +) after the last one drawn; the user's input is
// answered at once; a change of data, or a screen that moves by itself, waits for the due frame,
// so a busy stream redraws at most once per interval. The loop passes the time in (it reads the
// steady clock), so tests need no sleeps. Not thread-safe: the UI loop owns it.
#pragma once

#include <chrono>

namespace neuronmon::tui {

class FramePacer {
 public:
  using Time = std::chrono::steady_clock::time_point;

  // What the screen has to show that the last frame does not.
  struct Pending {
    bool input = false;     // the user acted: draw at once
    bool changed = false;   // data changed: draw when the frame is due
    bool periodic = false;  // the screen moves by itself (a table of hosts, a playing replay):
                            // draw whenever a frame is due
  };

  // `max_wait`: the longest one wait for input lasts, whatever is pending.
  explicit FramePacer(std::chrono::milliseconds max_wait) : max_wait_(max_wait) {}

  // One interval of `refresh_seconds` after the last frame drawn. Before the first frame, one
  // interval after the clock's epoch (the steady clock's is the boot): normally long past.
  Time Due(double refresh_seconds) const;

  // How long to wait for input, in milliseconds: 0 with input pending; until the frame is due
  // (0 when it is, at most max_wait) with a change or a periodic screen; else max_wait.
  int WaitMillis(const Pending& pending, double refresh_seconds, Time now) const;

  // Whether to draw at `now`: with input pending, or a change or a periodic screen once the
  // frame is due.
  bool ShouldDraw(const Pending& pending, double refresh_seconds, Time now) const;

  // Records that a frame was drawn at `now`: the next is due an interval later.
  void Drew(Time now) { last_draw_ = now; }

 private:
  std::chrono::milliseconds max_wait_;
  Time last_draw_{};
};

}  // namespace neuronmon::tui
