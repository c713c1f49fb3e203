#include "exporter/neuron_ls_format.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "exporter/json_writer.h"
#include "exporter/monitor_json_groups.h"
#include "proto/names/names.h"
#include "proto/wire/terminal_safe.h"

namespace neuronmon::exporter {
namespace {

constexpr std::string_view kNotAvailable = "NA";
constexpr std::string_view kTitle = "Neuron Device Topology\n";
constexpr std::string_view kLegend = "\nLegend:\n\n        *––► = Wrap-around link\n";
constexpr int kTorusSide = 4;
constexpr int kTorusSize = kTorusSide * kTorusSide;

std::size_t DisplayWidth(std::string_view text) {
  // One column per code point: count every byte that is not a UTF-8 continuation byte.
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

bool IsTrainium2(const v1::Inventory& inventory) {
  return inventory.hardware_info().neuron_device_type() == "trainium2";
}

template <typename Repeated>
std::span<const std::uint32_t> AsSpan(const Repeated& field) {
  return {field.data(), static_cast<std::size_t>(field.size())};
}

// ---- Tables ------------------------------------------------------------------------------------

struct Column {
  std::string_view top;
  std::string_view bottom;
};

// A table as neuron-ls draws it: two-line headings centred (odd padding goes right), cells
// left-aligned, one space of margin, and rows grouped per device.
class TextTable {
 public:
  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

  void AddRow(std::vector<std::string> cells) { rows_.push_back({std::move(cells), false}); }
  // Marks the last row added as the end of a device's rows.
  void EndGroup() { rows_.back().ends_group = true; }

  // With `separate_groups`, a border line follows every group.
  void Render(bool separate_groups, std::string& out) const {
    const std::vector<std::size_t> widths = Widths();
    const std::string border = Border(widths);
    out += border;
    AppendHeading(widths, &Column::top, out);
    AppendHeading(widths, &Column::bottom, out);
    out += border;
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      AppendCells(widths, rows_[r].cells, out);
      if (separate_groups && rows_[r].ends_group && r + 1 < rows_.size()) out += border;
    }
    out += border;
  }

 private:
  struct Row {
    std::vector<std::string> cells;
    bool ends_group;
  };

  std::vector<std::size_t> Widths() const {
    std::vector<std::size_t> widths;
    for (const Column& column : columns_) {
      widths.push_back(std::max(DisplayWidth(column.top), DisplayWidth(column.bottom)));
    }
    for (const Row& row : rows_) {
      for (std::size_t c = 0; c < row.cells.size(); ++c) {
        widths[c] = std::max(widths[c], DisplayWidth(row.cells[c]));
      }
    }
    return widths;
  }

  static std::string Border(const std::vector<std::size_t>& widths) {
    std::string line = "+";
    for (std::size_t width : widths) line.append(width + 2, '-').push_back('+');
    return line + "\n";
  }

  void AppendHeading(const std::vector<std::size_t>& widths, std::string_view Column::*line,
                     std::string& out) const {
    out += '|';
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      const std::string_view text = columns_[c].*line;
      const std::size_t padding = widths[c] - DisplayWidth(text);
      out.append(1 + padding / 2, ' ').append(text).append(padding - padding / 2 + 1, ' ');
      out += '|';
    }
    out += '\n';
  }

  static void AppendCells(const std::vector<std::size_t>& widths,
                          const std::vector<std::string>& cells, std::string& out) {
    out += '|';
    for (std::size_t c = 0; c < widths.size(); ++c) {
      out.append(" ").append(cells[c]).append(widths[c] - DisplayWidth(cells[c]) + 1, ' ');
      out += '|';
    }
    out += '\n';
  }

  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

void AppendHeaderLines(const v1::Inventory& inventory, std::string& out) {
  out.append("instance-type: ").append(inventory.instance_info().instance_type()).append("\n");
  out.append("instance-id: ").append(inventory.instance_info().instance_id()).append("\n");
  if (IsTrainium2(inventory)) {
    out.append("logical-neuroncore-config: ")
        .append(std::to_string(inventory.hardware_info().logical_neuroncore_config()))
        .append("\n");
  }
}

// A runtime version proves a Neuron runtime, and a process the runtime datastores show has none is
// not one; else (no datastore read) a process is an application unless it is one of the tools.
bool IsListed(const v1::Process& process, bool show_all_procs) {
  if (show_all_procs || !process.runtime_version().empty()) return true;
  return !process.no_datastore() && !IsMonitoringTool(process.command());
}

// The processes neuron-ls lists for `device`, in inventory order.
std::vector<const v1::Process*> ListedProcesses(const v1::Inventory& inventory,
                                                const v1::Device& device, bool show_all_procs) {
  std::vector<const v1::Process*> listed;
  for (const v1::Process& process : inventory.processes()) {
    const auto& devices = process.device_indices();
    if (IsListed(process, show_all_procs) &&
        std::find(devices.begin(), devices.end(), device.index()) != devices.end()) {
      listed.push_back(&process);
    }
  }
  return listed;
}

// A command as one table line: control characters (tabs, newlines) become spaces.
std::string PrintableCommand(std::string command) {
  for (char& c : command) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '\x7f') c = ' ';
  }
  return command;
}

std::string RuntimeVersionText(const v1::Process& process) {
  return process.runtime_version().empty() ? std::string(kNotAvailable) : process.runtime_version();
}

enum class Layout {
  kDevices,              // no process listed, no --wide / --show-all-procs
  kDevicesAndProcesses,  // runtime processes listed: the device table plus process columns
  kProcesses,            // --wide / --show-all-procs
};

enum class Field {
  kDevice,
  kCores,
  kCoreIds,
  kMemory,
  kConnected,
  kBdf,
  kShortBdf,
  kPid,
  kCpuAffinity,
  kNumaNode,
  kCommand,
  kRuntimeVersion,
  kUser,  // --who
  kJob,
};

Layout ChooseLayout(const v1::Inventory& inventory, const LsOptions& options) {
  if (options.wide || options.show_all_procs) return Layout::kProcesses;
  const bool any_listed = std::any_of(inventory.processes().begin(), inventory.processes().end(),
                                      [](const v1::Process& p) { return IsListed(p, false); });
  return any_listed ? Layout::kDevicesAndProcesses : Layout::kDevices;
}

std::vector<Field> LayoutFields(Layout layout, bool connected_column, bool who) {
  using enum Field;
  std::vector<Field> fields = {kDevice, kCores};
  if (layout != Layout::kProcesses) fields.push_back(kCoreIds);
  fields.push_back(kMemory);
  if (connected_column) fields.push_back(kConnected);
  switch (layout) {
    case Layout::kDevices:
      fields.insert(fields.end(), {kBdf, kCpuAffinity, kNumaNode});
      break;
    case Layout::kDevicesAndProcesses:
      // As captured from neuron-ls on trn1.2xlarge: PID sits between PCI BDF and CPU AFFINITY.
      fields.insert(fields.end(), {kBdf, kPid, kCpuAffinity, kNumaNode, kCommand, kRuntimeVersion});
      break;
    case Layout::kProcesses:
      fields.insert(fields.end(), {kShortBdf, kPid, kCommand, kRuntimeVersion});
      break;
  }
  if (who && layout != Layout::kDevices) fields.insert(fields.end(), {kUser, kJob});
  return fields;
}

// Column headings, in Field order.
constexpr Column kHeadings[] = {{"NEURON", "DEVICE"},
                                {"NEURON", "CORES"},
                                {"NEURON", "CORE IDS"},
                                {"NEURON", "MEMORY"},
                                {"CONNECTED", "DEVICES"},
                                {"PCI", "BDF"},
                                {"PCI", "BDF"},
                                {"PID", ""},
                                {"CPU", "AFFINITY"},
                                {"NUMA", "NODE"},
                                {"COMMAND", ""},
                                {"RUNTIME", "VERSION"},
                                {"USER", ""},
                                {"JOB", ""}};
static_assert(std::size(kHeadings) == static_cast<std::size_t>(Field::kJob) + 1);

// One table row: a device's first row carries the device fields, later rows only a process.
struct RowSource {
  const v1::Device& device;
  const v1::Process* process;  // null: no process, the process fields read "NA"
  bool first_of_device;
  std::size_t command_width;
};

std::string ProcessCell(Field field, const RowSource& row) {
  if (row.process == nullptr) return std::string(kNotAvailable);
  switch (field) {
    case Field::kPid:
      return std::to_string(row.process->pid());
    case Field::kCommand:
      return PrintableCommand(TruncateCommand(row.process->command(), row.command_width));
    case Field::kUser: {
      const v1::Attribution& a = row.process->attribution();
      if (!a.user().empty()) return PrintableCommand(TruncateCommand(a.user(), 32));
      return a.has_uid() ? std::to_string(a.uid()) : std::string(kNotAvailable);
    }
    case Field::kJob: {
      const std::string job = JobOf(row.process->attribution());
      return job.empty() ? std::string(kNotAvailable) : PrintableCommand(TruncateCommand(job, 64));
    }
    default:
      return RuntimeVersionText(*row.process);
  }
}

std::string Cell(Field field, const RowSource& row) {
  if (field == Field::kPid || field == Field::kCommand || field == Field::kRuntimeVersion ||
      field == Field::kUser || field == Field::kJob) {
    return ProcessCell(field, row);
  }
  if (!row.first_of_device) return "";
  const v1::Device& device = row.device;
  switch (field) {
    case Field::kDevice:
      return std::to_string(device.index());
    case Field::kCores:
      return std::to_string(device.core_count());
    case Field::kCoreIds:
      return FormatCoreIds(AsSpan(device.core_ids()));
    case Field::kMemory:
      return FormatMemorySize(device.hbm_bytes());
    case Field::kConnected:
      return FormatConnectedDevices(AsSpan(device.connected_to()));
    case Field::kBdf:
      return device.pci_bdf();
    case Field::kShortBdf:
      return ShortBdf(device.pci_bdf());
    case Field::kCpuAffinity:
      return device.cpu_affinity();
    case Field::kNumaNode:
      return std::to_string(device.numa_node());
    default:
      return "";
  }
}

void AddRow(const std::vector<Field>& fields, const RowSource& row, TextTable& table) {
  std::vector<std::string> cells;
  cells.reserve(fields.size());
  for (Field field : fields) cells.push_back(Cell(field, row));
  table.AddRow(std::move(cells));
}

// Adds a device's rows; returns how many there are.
std::size_t AddDeviceRows(const v1::Inventory& inventory, const v1::Device& device, Layout layout,
                          const LsOptions& options, TextTable& table) {
  const std::vector<Field> fields = LayoutFields(layout, inventory.devices_size() > 1, options.who);
  const std::size_t width = options.wide ? kWideCommandWidth : kCommandWidth;
  std::vector<const v1::Process*> processes;
  if (layout != Layout::kDevices) {
    processes = ListedProcesses(inventory, device, options.show_all_procs);
  }
  if (processes.empty()) processes.push_back(nullptr);
  for (std::size_t i = 0; i < processes.size(); ++i) {
    AddRow(fields, {device, processes[i], i == 0, width}, table);
  }
  table.EndGroup();
  return processes.size();
}

void AppendTable(const v1::Inventory& inventory, const LsOptions& options, std::string& out) {
  const Layout layout = ChooseLayout(inventory, options);
  std::vector<Column> columns;
  for (Field field : LayoutFields(layout, inventory.devices_size() > 1, options.who)) {
    columns.push_back(kHeadings[static_cast<std::size_t>(field)]);
  }
  TextTable table(std::move(columns));
  std::size_t most_rows = 0;
  for (const v1::Device& device : inventory.devices()) {
    most_rows = std::max(most_rows, AddDeviceRows(inventory, device, layout, options, table));
  }
  // neuron-ls rules off every device once some device spans several rows.
  table.Render(most_rows > 1, out);
}

// ---- Topology ----------------------------------------------------------------------------------

enum class Shape { kSingle, kChain, kRing, kTorus };

Shape ClassifyTopology(const v1::Inventory& inventory) {
  const auto& devices = inventory.devices();
  if (devices.size() == 1) return Shape::kSingle;
  const auto has_links = [&](auto predicate) {
    return std::all_of(devices.begin(), devices.end(),
                       [&](const v1::Device& d) { return predicate(d.connected_to_size()); });
  };
  if (devices.size() % kTorusSize == 0 && has_links([](int n) { return n >= 4; })) {
    return Shape::kTorus;
  }
  if (devices.size() > 2 && has_links([](int n) { return n == 2; })) return Shape::kRing;
  return Shape::kChain;
}

// "[ 0 ]", "[15 ]": the index right-aligned in two columns.
std::string Box(std::uint32_t index) {
  const std::string number = std::to_string(index);
  return "[" + std::string(number.size() < 2 ? 1 : 0, ' ') + number + " ]";
}

// Boxes of devices [first, first + count) joined by links, in inventory order.
std::string LinkedBoxes(const v1::Inventory& inventory, int first, int count) {
  std::string line;
  for (int i = first; i < first + count; ++i) {
    if (i > first) line += "◄––►";
    line += Box(inventory.devices(i).index());
  }
  return line;
}

// A line of four vertical-link glyphs, one under the middle of each box of a torus row.
std::string TorusColumnLine(std::string_view glyph) {
  std::string line = "      ";
  for (int col = 0; col < kTorusSide; ++col) {
    line.append(glyph).append(col + 1 < kTorusSide ? "        " : "      ");
  }
  return line + "\n";
}

void AppendTorus(const v1::Inventory& inventory, int first, std::string& out) {
  out += TorusColumnLine("*") + TorusColumnLine("│") + TorusColumnLine("▼");
  for (int row = 0; row < kTorusSide; ++row) {
    out += "*––►" + LinkedBoxes(inventory, first + row * kTorusSide, kTorusSide) + "◄––*\n";
    out += TorusColumnLine("▲") + TorusColumnLine("│");
    out += TorusColumnLine(row + 1 < kTorusSide ? "▼" : "*");
  }
}

void AppendTori(const v1::Inventory& inventory, std::string& out) {
  const int nodes = inventory.devices_size() / kTorusSize;
  for (int node = 0; node < nodes; ++node) {
    const int first = node * kTorusSize;
    if (nodes > 1) {
      if (node > 0) out += "\n";
      out += "Node " + std::to_string(node) + " (devices " +
             std::to_string(inventory.devices(first).index()) + "-" +
             std::to_string(inventory.devices(first + kTorusSize - 1).index()) + ")\n";
    }
    AppendTorus(inventory, first, out);
  }
  out += kLegend;
}

// ---- JSON --------------------------------------------------------------------------------------

void WriteUintArray(std::span<const std::uint32_t> values, JsonWriter& json) {
  json.BeginArray();
  for (std::uint32_t value : values) json.Uint(value);
  json.EndArray();
}

void WriteProcesses(const v1::Inventory& inventory, const v1::Device& device,
                    const LsOptions& options, JsonWriter& json) {
  const std::size_t width = options.wide ? kWideCommandWidth : kCommandWidth;
  json.BeginArray();
  for (const v1::Process* process : ListedProcesses(inventory, device, options.show_all_procs)) {
    json.BeginObject();
    json.Key("pid");
    json.Uint(process->pid());
    json.Key("command");
    json.String(TruncateCommand(process->command(), width));
    json.Key("neuron_runtime_version");
    json.String(RuntimeVersionText(*process));
    if (options.who) {
      json.Key("attribution");
      monitor_json::WriteAttribution(json, process->attribution());
    }
    json.EndObject();
  }
  json.EndArray();
}

void WriteDevice(const v1::Inventory& inventory, const v1::Device& device, const LsOptions& options,
                 JsonWriter& json) {
  json.BeginObject();
  json.Key("neuron_device");
  json.Uint(device.index());
  json.Key("bdf");
  json.String(device.pci_bdf());
  json.Key("cpu_affinity");
  json.String(device.cpu_affinity());
  json.Key("numa_node");
  json.String(std::to_string(device.numa_node()));
  json.Key("connected_to");
  if (device.connected_to().empty()) {
    json.Null();
  } else {
    WriteUintArray(AsSpan(device.connected_to()), json);
  }
  json.Key("nc_count");
  json.Uint(device.core_count());
  if (IsTrainium2(inventory)) {
    json.Key("logical_neuroncore_config");
    json.Uint(inventory.hardware_info().logical_neuroncore_config());
  }
  json.Key("memory_size");
  json.Uint(device.hbm_bytes());
  json.Key("neuroncore_ids");
  WriteUintArray(AsSpan(device.core_ids()), json);
  json.Key("neuron_processes");
  WriteProcesses(inventory, device, options, json);
  json.EndObject();
}

}  // namespace

std::string RenderTable(const v1::Inventory& daemon_inventory, const LsOptions& options) {
  // The table goes to a terminal: strings from the daemon (and its host's processes) are
  // stripped of control characters. The JSON keeps them, escaped.
  v1::Inventory inventory = daemon_inventory;
  wire::MakeTerminalSafe(inventory);
  std::string out;
  AppendHeaderLines(inventory, out);
  AppendTable(inventory, options, out);
  return out;
}

std::string RenderTopology(const v1::Inventory& inventory) {
  const int count = inventory.devices_size();
  if (count == 0) return "";
  std::string out(kTitle);
  switch (ClassifyTopology(inventory)) {
    case Shape::kTorus:
      AppendTori(inventory, out);
      break;
    case Shape::kRing:
      // One torus row: the wrap-around markers close the ring.
      out += "*––►" + LinkedBoxes(inventory, 0, count) + "◄––*\n";
      out += kLegend;
      break;
    case Shape::kChain:
    case Shape::kSingle:
      // As neuron-ls draws inf1's chain: an empty line, then the boxes indented by two.
      out += "\n  " + LinkedBoxes(inventory, 0, count) + "\n";
      break;
  }
  return out;
}

std::string RenderJson(const v1::Inventory& inventory, const LsOptions& options) {
  std::string out;
  JsonWriter json(out, JsonWriter::Style::kIndented);
  json.BeginArray();
  for (const v1::Device& device : inventory.devices()) {
    WriteDevice(inventory, device, options, json);
  }
  json.EndArray();
  return out;
}

bool IsMonitoringTool(std::string_view command) {
  const std::string_view program = command.substr(0, command.find(' '));
  const std::string_view name = program.substr(program.rfind('/') + 1);
  return std::find(std::begin(kMonitoringTools), std::end(kMonitoringTools), name) !=
         std::end(kMonitoringTools);
}

std::string FormatCoreIds(std::span<const std::uint32_t> core_ids) {
  if (core_ids.empty()) return "";
  bool consecutive = true;
  for (std::size_t i = 1; i < core_ids.size(); ++i) {
    consecutive = consecutive && core_ids[i] == core_ids[i - 1] + 1;
  }
  if (consecutive && core_ids.size() > 1) {
    return std::to_string(core_ids.front()) + "-" + std::to_string(core_ids.back());
  }
  std::string text;
  for (std::uint32_t id : core_ids) {
    if (!text.empty()) text += ',';
    text += std::to_string(id);
  }
  return text;
}

std::string FormatMemorySize(std::uint64_t bytes) { return std::to_string(bytes >> 30) + " GB"; }

std::string FormatConnectedDevices(std::span<const std::uint32_t> devices) {
  std::string text;
  for (std::uint32_t device : devices) {
    if (!text.empty()) text += ", ";
    text += std::to_string(device);
  }
  return text;
}

std::string ShortBdf(std::string_view bdf) {
  // domain:bus:device.function; the short form drops the domain.
  if (std::count(bdf.begin(), bdf.end(), ':') < 2) return std::string(bdf);
  return std::string(bdf.substr(bdf.find(':') + 1));
}

std::string TruncateCommand(std::string_view command, std::size_t max_chars) {
  if (DisplayWidth(command) <= max_chars) return std::string(command);
  std::size_t kept = 0;
  std::size_t end = 0;
  for (; end < command.size(); ++end) {
    const bool starts_char = (static_cast<unsigned char>(command[end]) & 0xC0) != 0x80;
    if (starts_char && kept++ == max_chars - 3) break;
  }
  return std::string(command.substr(0, end)) + "...";
}

}  // namespace neuronmon::exporter
