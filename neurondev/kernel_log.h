// KernelLog counts the Neuron driver's hardware error events in the kernel log, per device: the
// `NEURON_HW_ERR=<TYPE> ... nd-id=<device> ...` lines the driver prints (and AWS's node problem
// detector watches), read from /dev/kmsg. Opening it reads the records still in the kernel's ring
// buffer (since boot, as far back as it holds), then each Poll() reads the new ones without
// blocking. Reading /dev/kmsg needs CAP_SYSLOG where kernel.dmesg_restrict is set (Debian's
// default) and, under systemd, ProtectKernelLogs=no: without them unavailable() says why, and the
// counts must not be read as none. A regular file (tests, a saved log) is read the same way, line
// by line, and followed as it grows. Bounded: records per poll, bytes per record, device indices.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/common/snapshot.h"

namespace neuronmon::neurondev {

struct KernelHwError {
  // The count of HardwareErrors the event adds to: kernel_sram_uncorrectable, _nc_, _hbm_ for the
  // SRAM, NC and HBM_UNCORRECTABLE_ERROR types, kernel_dma for DMA_ERROR, else kernel_other.
  std::uint64_t HardwareErrors::*count = &HardwareErrors::kernel_other;
  std::string type;    // as logged, e.g. "SRAM_UNCORRECTABLE_ERROR" (at most 64 bytes)
  int device = -1;     // nd-id=, else the "neuron<N>:" prefix, else device=; -1: not named
  std::string action;  // action=, e.g. "TERMINATE_INSTANCE" (at most 64 bytes); may be empty
};

// The event in one kernel log record — a /dev/kmsg record ("6,1234,5678,-;neuron0: ...") or a
// dmesg line — or nothing when the record is not a NEURON_HW_ERR line. Continuation lines (which
// start with a space) are never events.
std::optional<KernelHwError> ParseKernelLogRecord(std::string_view record);

struct KernelLogOptions {
  std::string path = "/dev/kmsg";
  std::size_t max_records_per_poll = 10000;  // the rest waits for the next poll
  int max_devices = 128;                     // events naming a higher device are ignored
  std::uint32_t reopen_every = 60;           // polls between two attempts to open a failed path
  bool operator==(const KernelLogOptions&) const = default;
};

class KernelLog {
 public:
  explicit KernelLog(KernelLogOptions options);
  ~KernelLog();
  KernelLog(const KernelLog&) = delete;
  KernelLog& operator=(const KernelLog&) = delete;

  // Reads the records logged since the last poll (at most max_records_per_poll); never blocks.
  void Poll();
  // The events of `device` so far: the kernel_* counts of the result (zero for a device with
  // none; its other counts are always zero).
  HardwareErrors Counts(int device) const;
  // Sets the kernel_* counts of `errors` to the events of `device`, leaving the others.
  void SetCounts(int device, HardwareErrors& errors) const;
  // Forgets the counts: the devices were reset (the driver reloaded), so the events before no
  // longer describe them. Records read later count again.
  void Clear();
  // Non-empty: the log cannot be read, and why ("cannot read /dev/kmsg: Permission denied ...").
  const std::string& unavailable() const { return unavailable_; }
  // Events that named no device, or one beyond max_devices; and records longer than the buffer.
  std::uint64_t unattributed() const { return unattributed_; }

 private:
  void Open();
  void Count(const KernelHwError& e);

  KernelLogOptions options_;
  int fd_ = -1;
  bool regular_file_ = false;
  std::string pending_;  // a regular file's incomplete last line
  std::vector<HardwareErrors> counts_;
  std::string unavailable_;
  std::uint64_t unattributed_ = 0;
  std::uint32_t polls_since_open_ = 0;
};

}  // namespace neuronmon::neurondev
