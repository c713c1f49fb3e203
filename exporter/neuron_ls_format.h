// neuron-ls output, rendered from a v1::Inventory as AWS's neuron-ls prints it
// (reference/neuron-tools.md §3.3): the device table, the process view (--wide /
// --show-all-procs), the --topology drawing and the --json-output array. Pure functions, no I/O;
// every result is a new string and the inventory is only read. Thread-safe.
//
// Which table RenderTable draws (the device table is NEURON DEVICE | NEURON CORES |
// NEURON CORE IDS | NEURON MEMORY | CONNECTED DEVICES | PCI BDF | CPU AFFINITY | NUMA NODE):
//   * With --wide or --show-all-procs, the process view: NEURON DEVICE | NEURON CORES |
//     NEURON MEMORY | CONNECTED DEVICES | PCI BDF (short, "cc:00.0") | PID | COMMAND |
//     RUNTIME VERSION, as AWS's guide shows it.
//   * Otherwise, when a listed process uses a device, the device table with PID after PCI BDF and
//     COMMAND | RUNTIME VERSION at the end, as neuron-ls prints it on a trn1.2xlarge running a job.
//   * Otherwise the device table.
// Every process holding a device is listed except the monitoring tools (IsMonitoringTool), which
// only --show-all-procs adds, as AWS's neuron-ls shows "all processes including neuron-monitor,
// neuron-ls, neuron-top" with it. A process with a runtime version is always listed; one without
// (every process on a real host without AWS's neuron-monitor, which alone tells the version) shows
// RUNTIME VERSION "NA". A device without listed processes gets one row with "NA" for PID, COMMAND
// and RUNTIME VERSION; further processes of a device go on continuation rows, and once any device
// has several rows a rule separates every device.
// CONNECTED DEVICES is left out on a single-device instance. Every table starts with the lines
// `instance-type: …`, `instance-id: …` and, on trainium2 only, `logical-neuroncore-config: N`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "neuronmon/v1/inventory.pb.h"

namespace neuronmon::exporter {

// COMMAND is cut to this many characters, the last three being "...".
inline constexpr std::size_t kCommandWidth = 40;
inline constexpr std::size_t kWideCommandWidth = 80;

struct LsOptions {
  bool wide = false;            // --wide: process view, COMMAND up to kWideCommandWidth
  bool show_all_procs = false;  // --show-all-procs: process view, the monitoring tools too
  // --who: process rows also say who runs them — USER and JOB (Slurm job, namespace/pod or
  // container) columns at the end of the table (docs/attribution.md).
  bool who = false;
};

// The header lines and the table chosen as described above; every line ends in '\n'. Every string
// from the inventory is made safe for a terminal (escape sequences and control characters
// removed, tabs and line breaks in a command shown as spaces so a row stays one line).
std::string RenderTable(const v1::Inventory& inventory, const LsOptions& options);

// The --topology drawing, from "Neuron Device Topology" to the legend; every line ends in '\n'.
// neuron-ls -t prints RenderTable(), two empty lines, then this. The shape comes from the
// devices' connected_to lists: a 4x4 torus per group of 16 devices when each has four links
// (several groups, as on an UltraServer, get a "Node k" heading each), a ring when every device
// has two links, a chain otherwise, a single box for one device. Empty for no devices.
std::string RenderTopology(const v1::Inventory& inventory);

// The --json-output array, indented like Go's json.MarshalIndent(v, "", "    ") as the real
// tool prints it, with no trailing newline: the caller writes it as is. "[]" for no devices
// (neuron-ls itself exits 1 then). Keys per device, in this order:
//   neuron_device, bdf (full, "0000:cc:00.0", as captured from the real tool), cpu_affinity,
//   numa_node (a string, "-1" for none), connected_to (null when the device lists no links, as
//   on a single-device instance), nc_count, logical_neuroncore_config (trainium2 only, like the
//   header line), memory_size (bytes), neuroncore_ids, neuron_processes ([] when none; each
//   {pid, command, neuron_runtime_version}, listed and cut as in the table, "NA" when the
//   version is unknown).
std::string RenderJson(const v1::Inventory& inventory, const LsOptions& options);

// The programs neuron-ls lists only with --show-all-procs: AWS's neuron-monitor, neuron-ls and
// neuron-top, and neuronmon's daemon, which is a monitor as much as neuron-monitor is (it opens the
// devices only write-only, for queries, and is then no holder at all).
inline constexpr std::string_view kMonitoringTools[] = {"neuron-monitor", "neuron-ls", "neuron-top",
                                                        "neuron-monitord"};

// Whether `command` (a process's command line, arguments joined by spaces) runs one of
// kMonitoringTools: the basename of its first word, exactly ("/opt/aws/neuron/bin/neuron-ls -a"
// does, "python3 neuron-monitor-prometheus.py" does not).
bool IsMonitoringTool(std::string_view command);

// "0-3" for ascending consecutive ids, else "0,2,5"; "" for none.
std::string FormatCoreIds(std::span<const std::uint32_t> core_ids);

// Whole GiB, as neuron-ls labels them: 103079215104 -> "96 GB", 34359738368 -> "32 GB".
std::string FormatMemorySize(std::uint64_t bytes);

// "12, 3, 4, 1".
std::string FormatConnectedDevices(std::span<const std::uint32_t> devices);

// "0000:cc:00.0" -> "cc:00.0"; a BDF without a PCI domain is returned unchanged.
std::string ShortBdf(std::string_view bdf);

// `command` when it has at most `max_chars` characters (UTF-8 code points), else its first
// max_chars - 3 characters and "...". REQUIRES: max_chars >= 3.
std::string TruncateCommand(std::string_view command, std::size_t max_chars);

}  // namespace neuronmon::exporter
