// Test helper for shared NeuronCores: a backend standing in for a host where a second application
// uses the NeuronCores of another (several runtimes on one core). It wraps another backend (the
// simulator, which gives each core to one runtime) and adds to every snapshot a runtime "sharer"
// holding the first runtime's cores and no memory; the cores' counters — the cores' own activity —
// are left as they are. Header-only: the daemon's, exporter's and neuron-top's tests share it.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "daemon/core/backend.h"
#include "proto/common/snapshot.h"

namespace neuronmon::daemon::testing {

class SharedCoreBackend final : public Backend {
 public:
  explicit SharedCoreBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}

  v1::Inventory Inventory(MonoTime now) override { return inner_->Inventory(now); }
  Snapshot Read(MonoTime now) override {
    Snapshot s = inner_->Read(now);
    if (s.runtimes.empty()) return s;
    RuntimeSample sharer;
    sharer.pid = s.runtimes.back().pid + 1;  // runtimes stay in ascending pid
    sharer.tag = "sharer";
    sharer.cores = s.runtimes.front().cores;
    for (int k = 0; k < kCollectiveKinds; ++k) {
      sharer.collectives[static_cast<std::size_t>(k)].kind = static_cast<CollectiveKind>(k);
    }
    sharer.memory = std::make_shared<const RuntimeMemory>();
    s.runtimes.push_back(std::move(sharer));
    return s;
  }
  std::string Describe() const override { return inner_->Describe() + ", cores shared"; }

 private:
  std::unique_ptr<Backend> inner_;
};

// sim:`device` running `scenario` (seed 1) from `start`, its first runtime's cores shared.
inline std::unique_ptr<SharedCoreBackend> SharedCoreSim(const std::string& device,
                                                        const std::string& scenario,
                                                        MonoTime start) {
  auto backend = MakeBackend({device, scenario, 1, 1}, start);
  if (!backend.ok()) return nullptr;
  return std::make_unique<SharedCoreBackend>(std::move(*backend));
}

}  // namespace neuronmon::daemon::testing
