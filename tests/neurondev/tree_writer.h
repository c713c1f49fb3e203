// Fabricated Neuron driver sysfs trees for tests: a temporary root with files written as the driver
// prints them (counters "%llu\n", core_count without a newline, ...), removed on destruction.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace neuronmon::neurondev::testing {

class FakeTree {
 public:
  FakeTree();
  ~FakeTree();
  FakeTree(const FakeTree&) = delete;
  FakeTree& operator=(const FakeTree&) = delete;

  const std::string& root() const { return root_; }
  // Writes `contents` to `relative` (under the root), creating directories.
  void Write(const std::string& relative, const std::string& contents) const;
  void Remove(const std::string& relative) const;
  // `devices/virtual/neuron_device/neuron<N>/` + `relative`.
  std::string Device(int n, const std::string& relative = "") const;

  // A Trainium2 device as driver 2.28 shows it, every file the driver makes: 8 physical cores,
  // connected to `n±1`, 8 host and 11 device memory categories, ECC and health counters, power,
  // the 24 execution outcomes, 6 other_info counters and pe_cntrs per core, values derived from
  // `n`.
  void WriteTrn2Device(int n) const;
  void WriteDriverVersion(const std::string& version) const;

 private:
  std::string root_;
};

}  // namespace neuronmon::neurondev::testing
