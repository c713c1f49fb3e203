#include "simdev/fault_plan.h"

#include <algorithm>
#include <cmath>

#include "simdev/episode.h"
#include "simdev/rng.h"

namespace neuronmon::simdev {
namespace {

bool Active(const FaultSpec& f, Nanos t) { return t >= f.start && (!f.end || t < *f.end); }

}  // namespace

FaultPlan::FaultPlan(std::vector<FaultSpec> faults, std::uint64_t seed, int node)
    : faults_(std::move(faults)), seed_(seed), node_(node) {
  for (const FaultSpec& f : faults_) {
    if (f.type == FaultType::kDeviceReset && Here(f)) resets_.push_back(f.start);
  }
  std::sort(resets_.begin(), resets_.end());
}

bool FaultPlan::DeviceLost(int device, Nanos t) const {
  for (const FaultSpec& f : faults_) {
    if (f.type == FaultType::kDeviceLost && f.device == device && Here(f) && Active(f, t))
      return true;
  }
  return false;
}

std::optional<Nanos> FaultPlan::DeviceBackAt(int device, Nanos t) const {
  Nanos back = t;
  // Overlapping windows chain: keep extending until no window covers `back`.
  for (bool moved = true; moved;) {
    moved = false;
    for (const FaultSpec& f : faults_) {
      if (f.type != FaultType::kDeviceLost || f.device != device || !Here(f) || !Active(f, back))
        continue;
      if (!f.end) return std::nullopt;
      back = *f.end;
      moved = true;
    }
  }
  return back;
}

double FaultPlan::SlowdownOn(int node, int device, Nanos t) const {
  double factor = 1;
  for (const FaultSpec& f : faults_) {
    if (f.type == FaultType::kSlowdown && (f.device == device || f.device < 0) &&
        (f.node < 0 || f.node == node) && Active(f, t))
      factor *= f.factor;
  }
  return factor;
}

double FaultPlan::RuntimeFactor(FaultType type, const std::string& name, Nanos t) const {
  double factor = 1;
  for (const FaultSpec& f : faults_) {
    if (f.type == type && f.runtime == name && Here(f) && Active(f, t)) factor *= f.factor;
  }
  return factor;
}

bool FaultPlan::Stalled(const std::string& name, Nanos t) const {
  for (const FaultSpec& f : faults_) {
    if (f.type == FaultType::kStall && f.runtime == name && Here(f) && Active(f, t)) return true;
  }
  return false;
}

std::optional<Hang> FaultPlan::HangOf(const std::string& name, Nanos t) const {
  std::optional<Hang> hang;
  for (const FaultSpec& f : faults_) {
    if (f.type != FaultType::kHang || f.runtime != name || !Active(f, t)) continue;
    if (!hang || f.start < hang->since) hang = Hang{std::max(0, f.node), f.rank, f.start};
  }
  return hang;
}

std::uint64_t FaultPlan::Events(const FaultSpec& f, std::size_t index, Nanos t) const {
  if (t < f.start) return 0;
  const Nanos until = f.end ? std::min(t, *f.end) : t;
  const double elapsed = ToSeconds(until - f.start);
  // A fixed phase per fault so the first event is not always at the window start.
  const double phase = Uniform(seed_, kStreamFault, index);
  return static_cast<std::uint64_t>(std::floor(f.per_second * elapsed + phase));
}

EccCounters FaultPlan::Ecc(int device, Nanos t) const {
  EccCounters ecc;
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    const FaultSpec& f = faults_[i];
    if (f.type != FaultType::kEcc || f.device != device || !Here(f)) continue;
    const std::uint64_t n = Events(f, i, t);
    if (f.repairable) continue;  // HwErrors counts them
    if (f.sram) {
      (f.uncorrected ? ecc.sram_uncorrected : ecc.sram_corrected) += n;
    } else {
      (f.uncorrected ? ecc.mem_uncorrected : ecc.mem_corrected) += n;
    }
  }
  return ecc;
}

HardwareErrors FaultPlan::HwErrors(int device, Nanos t) const {
  HardwareErrors out;
  const EccCounters ecc = Ecc(device, t);
  out.mem_ecc_uncorrected = ecc.mem_uncorrected;
  out.sram_ecc_uncorrected = ecc.sram_uncorrected;
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    const FaultSpec& f = faults_[i];
    if (f.device != device || !Here(f)) continue;
    if (f.type == FaultType::kEcc && f.repairable) {
      out.mem_ecc_repairable += Events(f, i, t);
      continue;
    }
    if (f.type != FaultType::kHardwareError) continue;
    const std::uint64_t n = Events(f, i, t);
    switch (f.error) {
      case HardwareErrorKind::kNeuronCore:
        out.nc_uncorrectable += n;
        break;
      case HardwareErrorKind::kHbm:
        out.hbm_uncorrectable += n;
        break;
      case HardwareErrorKind::kDma:
        out.dma_abort += n;
        break;
      case HardwareErrorKind::kCollectives:
        out.collectives += n;
        break;
      case HardwareErrorKind::kEvent:
        break;
    }
    out.events += n;  // the driver reports each as an event too
  }
  // The driver logs a NEURON_HW_ERR line for each error its counters count with a kernel type
  // (uncorrectable errors, DMA errors).
  for (const HardwareErrorField& k : kHardwareErrorFields) {
    if (k.source != ErrorSource::kKernelLog || k.kernel_type.empty()) continue;
    for (const HardwareErrorField& f : kHardwareErrorFields) {
      if (f.source == ErrorSource::kDriver && f.kernel_type == k.kernel_type) {
        out.*k.member += out.*f.member;
      }
    }
  }
  return out;
}

double FaultPlan::MemoryGrowth(const std::string& name, Nanos t, double* limit) const {
  double bytes = 0;
  *limit = 1;
  for (const FaultSpec& f : faults_) {
    if (f.type != FaultType::kMemoryGrowth || f.runtime != name || !Here(f) || t < f.start)
      continue;
    const Nanos until = f.end ? std::min(t, *f.end) : t;
    bytes += f.per_second * ToSeconds(until - f.start);
    *limit = std::min(*limit, f.limit);
  }
  return bytes;
}

std::uint64_t FaultPlan::RuntimeEvents(FaultType type, const std::string& name, Nanos t) const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    if (faults_[i].type == type && faults_[i].runtime == name && Here(faults_[i]))
      n += Events(faults_[i], i, t);
  }
  return n;
}

std::uint64_t FaultPlan::NanErrors(const std::string& name, Nanos t) const {
  return RuntimeEvents(FaultType::kNanErrors, name, t);
}

std::uint64_t FaultPlan::Timeouts(const std::string& name, Nanos t) const {
  return RuntimeEvents(FaultType::kTimeouts, name, t);
}

std::optional<Nanos> FaultPlan::RuntimeExit(const std::string& name) const {
  std::optional<Nanos> exit;
  for (const FaultSpec& f : faults_) {
    if (f.type == FaultType::kRuntimeExit && f.runtime == name && Here(f) &&
        (!exit || f.start < *exit)) {
      exit = f.start;
    }
  }
  return exit;
}

}  // namespace neuronmon::simdev
