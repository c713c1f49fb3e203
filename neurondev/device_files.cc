#include "neurondev/device_files.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "neurondev/sysfs_attributes.h"
#include "proto/common/file_reader.h"

namespace neuronmon::neurondev {

namespace fs = std::filesystem;

bool DeviceFiles::Due(const PlannedFile& file) const {
  const std::uint32_t every = refresh_.every[static_cast<std::size_t>(file.pace)];
  return every <= 1 || !file.last || (refresh_.sample + file.phase) % every == 0;
}

void DeviceFiles::Keep(PlannedFile& file, const Result<std::string_view>& text) {
  if (refresh_.every[static_cast<std::size_t>(file.pace)] <= 1) return;
  if (text.ok() && file.last && file.last->ok()) {
    (*file.last)->assign(*text);  // the same size as a rule: no allocation
  } else {
    file.last = text.ok() ? Result<std::string>(std::string(*text)) : text.status();
  }
}

Result<std::string_view> DeviceFiles::Paced(PlannedFile& file) {
  if (!Due(file)) {
    const Result<std::string>& last = *file.last;
    return last.ok() ? Result<std::string_view>(*last) : last.status();
  }
  Result<std::string_view> text = ReadNow(file);
  Keep(file, text);
  return text;
}

std::optional<std::string_view> DeviceFiles::Text(PlannedFile& file) {
  return Deliver(file, Paced(file));
}

std::optional<std::uint64_t> DeviceFiles::Counter(PlannedFile& file) {
  std::optional<std::string_view> text = Text(file);
  if (!text) return std::nullopt;
  Result<std::uint64_t> value = ParseCounter(*text);
  if (!value.ok()) {
    out_.errors.push_back(Path(file) + ": " + value.status().message());
    return std::nullopt;
  }
  return *value;
}

std::optional<std::uint64_t> DeviceFiles::OptionalCounter(PlannedFile& file) {
  const Result<std::string_view> text = Paced(file);  // absent or unreadable: nothing recorded
  if (!text.ok()) return std::nullopt;
  Result<std::uint64_t> value = ParseCounter(*text);
  if (!value.ok()) {
    Error(Path(file) + ": " + value.status().message());
    return std::nullopt;
  }
  return *value;
}

namespace {

// Whether `now` is the tensor engine's counters started afresh rather than a torn read: other
// row groups, or every row group behind `before`.
bool Restarted(const std::vector<PeCounters>& before, const std::vector<PeCounters>& now) {
  if (before.size() != now.size()) return true;
  for (std::size_t i = 0; i < now.size(); ++i) {
    const PeCounters& a = before[i];
    const PeCounters& b = now[i];
    if (a.row_group != b.row_group) return true;
    if (b.mm_active + b.wl_active + b.idle >= a.mm_active + a.wl_active + a.idle) return false;
  }
  return !now.empty();
}

}  // namespace

std::vector<PeCounters> DeviceFiles::PeCounterRows(PlannedCore& core) {
  PlannedFile& file = core.pe_counters;
  // Between its re-reads (a driver with live busy time paces it) the rows are the last ones kept:
  // the same text, not parsed again.
  if (!Due(file) && file.last->ok() && !core.last_pe.empty()) return core.last_pe;
  std::optional<std::string_view> text = Text(file);
  std::vector<PeCounters> first;
  for (int attempt = 0; text; ++attempt) {
    Result<std::vector<PeCounters>> rows = ParsePeCounters(*text);
    if (!rows.ok()) {
      Error(Path(file) + ": " + rows.status().message());
      file.last.reset();  // read again at the next sample, not taken from the kept rows
      return {};
    }
    std::string torn = PeCountersTorn(core.last_pe, *rows);
    // Two reads that agree with each other, with other row groups or every row group behind the
    // last reading: the counters restarted (the device was reset). The reader holds across.
    if (!torn.empty() && attempt == 1 && PeCountersTorn(first, *rows).empty() &&
        Restarted(core.last_pe, *rows)) {
      torn.clear();
    }
    if (torn.empty()) {
      core.last_pe = *rows;
      return std::move(*rows);
    }
    if (attempt == 1) {
      Error(Path(file) + ": torn read twice (" + torn + "); no value this read");
      file.last.reset();
      return {};
    }
    first = std::move(*rows);
    Result<std::string_view> again = ReadNow(file);
    Keep(file, again);
    text = Deliver(file, again);
  }
  return {};
}

std::vector<NamedCounter> DeviceFiles::Counters(std::vector<PlannedCounter>& planned) {
  std::vector<NamedCounter> out;
  out.reserve(planned.size());
  for (PlannedCounter& c : planned) {
    if (std::optional<std::uint64_t> v = Counter(c.total)) out.push_back({c.name, *v});
  }
  return out;
}

std::vector<MemoryCategory> DeviceFiles::Memory(std::vector<PlannedMemory>& planned) {
  std::vector<MemoryCategory> out;
  out.reserve(planned.size());
  for (PlannedMemory& m : planned) {
    std::optional<std::uint64_t> total = Counter(m.total);
    if (!total) continue;
    if (*total > limits_.max_memory_bytes) {
      out_.errors.push_back(Path(m.total) + ": " + std::to_string(*total) +
                            " bytes is not a plausible usage (the counter wrapped)");
      continue;
    }
    std::optional<std::uint64_t> peak = Counter(m.peak);
    if (peak && *peak > limits_.max_memory_bytes) {
      // The high-water mark of a counter that once wrapped stays wrapped: unknown, not huge.
      out_.errors.push_back(Path(m.peak) + ": " + std::to_string(*peak) +
                            " bytes is not a plausible high-water mark (the counter wrapped)");
      peak.reset();
    }
    // A high-water mark re-read less often than its usage may predate it: never below it.
    if (peak && *peak < *total) peak = *total;
    out.push_back({m.name, *total, peak});
  }
  return out;
}

Result<std::string_view> DeviceFiles::ReadNow(PlannedFile& file) {
  if (file.fd.get() >= 0) {
    const ssize_t n = ReadFromStart(file.fd.get(), buffer_);
    if (n >= 0 && static_cast<std::size_t>(n) < buffer_.size()) {
      return std::string_view(buffer_.data(), static_cast<std::size_t>(n));
    }
    if (n >= 0) {
      return Status::InvalidArgument(Path(file) + ": file larger than " +
                                     FormatBytes(limits_.max_file_bytes));
    }
    // Gone or failing (ENODEV once sysfs removed it): what a read by path says now.
    file.fd.Reset();
  }
  return ReadByPath(device_, file.relative, Path(file), buffer_);
}

std::optional<std::string_view> DeviceFiles::Deliver(const PlannedFile& file,
                                                     const Result<std::string_view>& text) {
  if (text.ok()) return *text;
  if (text.status().code() == StatusCode::kNotFound) {
    out_.absent.push_back(Path(file));
  } else {
    out_.errors.push_back(text.status().message());
  }
  return std::nullopt;
}

// One reading of a planned device: its constants as discovered, every other file read now.
DeviceReading ReadPlanned(DevicePlan& d, const TreeLimits& limits, const Refresh& refresh,
                          std::string& buffer) {
  DeviceReading out = d.constants;
  DeviceFiles files(limits, refresh, d, buffer, out);
  out.host_memory = files.Memory(d.host_memory);
  out.sram_ecc_uncorrected = files.Counter(d.hardware[0]);
  out.mem_ecc_uncorrected = files.Counter(d.hardware[1]);
  out.mem_ecc_repairable_uncorrected = files.Counter(d.hardware[2]);
  if (d.has_health_status) {
    for (PlannedCounter& h : d.health) {
      if (h.name == "unhealthy_components") {
        if (std::optional<std::string_view> text = files.Text(h.total))
          out.unhealthy_components = ParseComponents(*text);
        continue;
      }
      std::optional<std::uint64_t>* field =
          h.name == "hbm_ecc_err_count"              ? &out.hbm_ecc_err_count
          : h.name == "repairable_hbm_ecc_err_count" ? &out.repairable_hbm_ecc_err_count
          : h.name == "sram_ecc_err_count"           ? &out.sram_ecc_err_count
          : h.name == "hw_error_event"               ? &out.hw_error_event
          : h.name == "mem_ecc_corrected"            ? &out.mem_ecc_corrected
          : h.name == "sram_ecc_corrected"           ? &out.sram_ecc_corrected
          : h.name == "healthcheck_heartbeat"        ? &out.healthcheck_heartbeat
                                                     : nullptr;
      if (field != nullptr) {
        *field = files.Counter(h.total);
      } else if (std::optional<std::string_view> text = files.Text(h.total)) {
        // A node of a newer driver: kept when it is a number, named in the node report either way.
        if (Result<std::uint64_t> v = ParseCounter(*text); v.ok())
          out.health_other.push_back({h.name, *v});
      }
    }
  } else if (d.health_error.empty()) {
    out.absent.push_back(d.dir.path + "/stats/hardware/health_status");  // before driver 2.28
  } else {
    files.Error(d.health_error);
  }
  for (const std::string& dir : d.missing) out.absent.push_back(d.dir.path + "/" + dir);
  out.directory_device = static_cast<std::uint64_t>(d.dir.dev);
  out.directory_inode = static_cast<std::uint64_t>(d.dir.ino);
  out.device_state = files.OptionalCounter(d.reset);
  if (std::optional<std::string_view> text = files.Text(d.power)) {
    Result<PowerReading> power = ParsePower(*text);
    if (power.ok()) {
      out.power = *power;
    } else {
      files.Error(files.Path(d.power) + ": " + power.status().message());
    }
  }
  out.cores.reserve(d.cores.size());
  for (PlannedCore& c : d.cores) {
    CoreReading& core = out.cores.emplace_back();
    core.index = c.index;
    core.outcomes = files.Counters(c.outcomes);
    core.other_info = files.Counters(c.other_info);
    core.device_memory = files.Memory(c.device_memory);
    core.pe_counters = files.PeCounterRows(c);
  }
  // core_count is readable by root only; the driver makes one directory per core.
  if (!out.core_count && !out.cores.empty() && out.cores.size() < limits.max_cores_per_device)
    out.core_count = static_cast<std::uint32_t>(out.cores.size());
  return out;
}

// /module/neuron/version: nothing when it does not exist, an error when it cannot be read.
void ReadVersion(const std::string& root, const TreeLimits& limits, TreeReading& out) {
  const std::string version_path = root + "/module/neuron/version";
  std::error_code ec;
  if (!fs::exists(version_path, ec)) return;
  Result<std::string> version = ReadRegularFile(version_path, limits.max_file_bytes);
  if (version.ok()) {
    out.driver_version = std::string(TrimNewline(*version));
  } else {
    out.errors.push_back(version.status().message());
  }
}

}  // namespace neuronmon::neurondev
