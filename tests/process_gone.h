// Gone(pid): whether a process has ended — a zombie its parent has not reaped yet counts —
// waiting up to 2 s on a pidfd for a SIGKILL already sent to take effect. For tests that check
// that nothing a program started outlives it.
#pragma once

#include <poll.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>

namespace neuronmon::test_util {

inline bool Gone(pid_t pid) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return errno == ESRCH;
  pollfd ended{pidfd, POLLIN, 0};
  const bool gone = ::poll(&ended, 1, 2000) == 1;
  ::close(pidfd);
  return gone;
}

}  // namespace neuronmon::test_util
