// KernelLog counts the Neuron driver's hardware error events in the kernel log, per device: the
// `NEURON_HW_ERR=<TYPE> key=value ...` lines the runtime prints through the driver's
// NEURON_IOCTL_PRINTK (and AWS's node problem detector watches), read from /dev/kmsg. Only a
// record of the kernel facility at level err whose message *starts* with that grammar counts:
// text a user process gets into the log (its name in a segfault line, a write to /dev/kmsg, which
// the kernel files under the user facility) never does. Any process that can open a Neuron device
// can still print a well-formed line, so an event is a claim, not a fact: device health gives it
// weight only where the driver's counters agree (docs/health.md). An event is the device's whose
// `info/serial_number` its serial-num= names (SetDevices); nd-id= is the runtime's own index —
// relative to the devices a container was given — and names the device only when the serial is
// missing or matches none. Opening it reads the records still in the kernel's ring buffer (since
// boot, as far back as it holds), then each Poll() reads the new ones without blocking. Reading
// /dev/kmsg needs CAP_SYSLOG where kernel.dmesg_restrict is set (Debian's default) and, under
// systemd, ProtectKernelLogs=no: without them unavailable() says why, and the counts must not be
// read as none. A regular file (tests, a saved log) is read the same way, line by line, and
// followed as it grows. Bounded: records per poll, bytes per record, device indices. Not
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "proto/common/snapshot.h"

namespace neuronmon::neurondev {

// One NEURON_HW_ERR event: the message's type and the keys the monitor uses (others, such as
// instance-id= and hostname=, are checked against the grammar and ignored).
struct KernelHwError {
  // The count of HardwareErrors the event adds to: kernel_sram_uncorrectable, _nc_, _hbm_ for the
  // SRAM, NC and HBM_UNCORRECTABLE_ERROR types, kernel_dma for DMA_ERROR, else kernel_other.
  std::uint64_t HardwareErrors::*count = &HardwareErrors::kernel_other;
  std::string type;    // e.g. "SRAM_UNCORRECTABLE_ERROR"
  int device = -1;     // nd-id= (the runtime's device index, container-relative); -1: not named
  int core = -1;       // nc-id=; -1: not named
  std::string serial;  // serial-num= (the device's info/serial_number, in hex); may be empty
  std::string action;  // action=, e.g. "TERMINATE_INSTANCE"; may be empty
};

// The grammar of the message, one rule: `NEURON_HW_ERR=<TYPE>` first, then space-separated
// `key=value` tokens, nothing else. TYPE is [A-Z0-9_], a key [a-z0-9-] starting with a letter, a
// value printable ASCII without '=' (each at most 64 bytes, at most 32 tokens, each key once).
// Nothing when `message` is anything else, free text around such words included.
std::optional<KernelHwError> ParseHwErrorMessage(std::string_view message);

// A kernel log record's syslog facility and level, and its message (the first line).
struct KernelLogRecord {
  int facility = -1;  // 0: the kernel's own; user space writes to /dev/kmsg as 1 (user) or more
  int level = -1;     // 3: err
  std::string_view message;
};
inline constexpr int kKernelFacility = 0;
inline constexpr int kLevelErr = 3;

// A /dev/kmsg record ("<prefix>,<seq>,<us>,<flags>[,...];<message>\n[ KEY=value\n...]") or a
// `dmesg --raw` line ("<prefix>[<time>] <message>" or "<prefix><message>"), where prefix is
// facility * 8 + level. Nothing for any other line (plain dmesg lines carry no level).
std::optional<KernelLogRecord> SplitKernelLogRecord(std::string_view record);

// The event in one kernel log record, or nothing unless it is of the kernel facility at level err
// and its message is a NEURON_HW_ERR message.
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

  // The devices' serial numbers, `info/serial_number` as read ("%016llx"), by index N: the events
  // Poll reads from now on are attributed with them. Serials compare as hexadecimal numbers
  // (case and leading zeros do not matter); a device whose serial is empty, not hexadecimal or
  // shared with another device is matched by nd-id= alone. Once set, an nd-id= must be one of
  // these indices to name a device; before, any below max_devices does.
  void SetDevices(const std::map<int, std::string>& serials);
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
  // Events whose serial matched no device and whose nd-id named none (or one beyond max_devices);
  // and records longer than the buffer.
  std::uint64_t unattributed() const { return unattributed_; }
  // Records that carried the NEURON_HW_ERR word but were not events: another facility or level,
  // the word inside free text, or a message outside the grammar (what a forger writes).
  std::uint64_t refused() const { return refused_; }

 private:
  void Open();
  void Take(std::string_view record);
  void Count(const KernelHwError& e);
  // The device index `e` is of, or -1.
  int DeviceOf(const KernelHwError& e) const;

  KernelLogOptions options_;
  int fd_ = -1;
  bool regular_file_ = false;
  std::string pending_;  // a regular file's incomplete last line
  std::vector<HardwareErrors> counts_;
  std::map<std::string, int> by_serial_;  // normalised serial -> index (SetDevices)
  std::optional<std::set<int>> indices_;  // the indices SetDevices gave; nullopt before
  std::string unavailable_;
  std::uint64_t unattributed_ = 0;
  std::uint64_t refused_ = 0;
  std::uint32_t polls_since_open_ = 0;
};

}  // namespace neuronmon::neurondev
