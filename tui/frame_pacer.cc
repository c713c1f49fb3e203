#include "tui/frame_pacer.h"

#include <algorithm>
#include <cstdint>

namespace neuronmon::tui {

FramePacer::Time FramePacer::Due(double refresh_seconds) const {
  return last_draw_ +
         std::chrono::duration_cast<Time::duration>(std::chrono::duration<double>(refresh_seconds));
}

int FramePacer::WaitMillis(const Pending& pending, double refresh_seconds, Time now) const {
  if (pending.input) return 0;
  if (!pending.changed && !pending.periodic) return static_cast<int>(max_wait_.count());
  const auto until_due =
      std::chrono::duration_cast<std::chrono::milliseconds>(Due(refresh_seconds) - now);
  return static_cast<int>(std::clamp<std::int64_t>(until_due.count(), 0, max_wait_.count()));
}

bool FramePacer::ShouldDraw(const Pending& pending, double refresh_seconds, Time now) const {
  return pending.input || ((pending.changed || pending.periodic) && now >= Due(refresh_seconds));
}

}  // namespace neuronmon::tui
