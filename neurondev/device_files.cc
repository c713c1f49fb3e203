#include "neurondev/device_files.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "neurondev/sysfs_attributes.h"
#include "proto/common/file_reader.h"

namespace neuronmon::neurondev {

namespace fs = std::filesystem;

std::optional<std::string_view> DeviceFiles::Text(PlannedFile& file) {
  const std::uint32_t every = refresh_.every[static_cast<std::size_t>(file.pace)];
  const bool rotating = every > 1;
  if (rotating && file.last && (refresh_.sample + file.phase) % every != 0) {
    const Result<std::string>& last = *file.last;
    return Deliver(file, last.ok() ? Result<std::string_view>(*last) : last.status());
  }
  Result<std::string_view> text = ReadNow(file);
  if (rotating) file.last = text.ok() ? Result<std::string>(std::string(*text)) : text.status();
  return Deliver(file, text);
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
    out.hbm_ecc_err_count = files.Counter(d.health[0]);
    out.repairable_hbm_ecc_err_count = files.Counter(d.health[1]);
    out.sram_ecc_err_count = files.Counter(d.health[2]);
    out.hw_error_event = files.Counter(d.health[3]);
  } else if (d.health_error.empty()) {
    out.absent.push_back(d.dir.path + "/stats/hardware/health_status");  // before driver 2.28
  } else {
    files.Error(d.health_error);
  }
  for (const std::string& dir : d.missing) out.absent.push_back(d.dir.path + "/" + dir);
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
    if (std::optional<std::string_view> pe = files.Text(c.pe_counters)) {
      Result<std::vector<PeCounters>> rows = ParsePeCounters(*pe);
      if (rows.ok()) {
        core.pe_counters = std::move(*rows);
      } else {
        files.Error(files.Path(c.pe_counters) + ": " + rows.status().message());
      }
    }
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
