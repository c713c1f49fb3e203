// Fabricated Neuron driver sysfs trees for tests: a temporary root with files written as the driver
// prints them (counters "%llu\n", core_count without a newline, ...), removed on destruction.
// Besides single files and single devices, FakeTree writes whole real hosts as a given driver
// version lays them out. Every value a fixture writes is derived from the fixture, the device and
// the core (tree_writer.cc says how), so that a reading showing another fixture's, device's or
// core's number is a visible mix-up. Not thread-safe; the tree belongs to the test that made it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace neuronmon::neurondev::testing {

// Where temporary trees go: /dev/shm when writable (thousands of small files; a disk with discard
// takes seconds), unless TEST_TMPDIR is set; else the temporary directory.
std::string FastTempDirectory();

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
  // Makes `relative` a symbolic link to `target`, creating directories.
  void Symlink(const std::string& target, const std::string& relative) const;
  // `devices/virtual/neuron_device/neuron<N>/` + `relative`.
  std::string Device(int n, const std::string& relative = "") const;

  // A Trainium2 device as driver 2.28 shows it, every file the driver makes: 8 physical cores,
  // connected to `n±1`, 8 host and 11 device memory categories, ECC and health counters, power,
  // the 24 execution outcomes, 6 other_info counters and pe_cntrs per core, values derived from
  // `n`.
  void WriteTrn2Device(int n) const;
  void WriteDriverVersion(const std::string& version) const;

  // Whole hosts, the version file included. Every device has its core_count (no newline),
  // connected_devices in the driver's "a, b, c\n" form, serial number, architecture strings, 8 host
  // memory categories, the stats/hardware ECC files, power utilization, and per physical core the
  // 24 outcomes, 6 other_info counters, 11 device memory categories (plus the per-core
  // host_mem/device_mem aggregates and core arch_type, which the reader skips) and pe_cntrs.
  //
  // inf2.48xlarge, driver 2.24.7.0: 12 NDv3/Inf2/Inferentia2 devices of 2 cores in a ring (n±1 mod
  // 12); no health_status; power as real inf2 readings (idle on even devices, loaded on odd ones).
  void WriteInf2_48xlarge_Driver224() const;
  // trn1.32xlarge, driver 2.26.5.0: 16 NDv2/Trn1/Trainium1 devices of 2 cores in neuron-ls's 4x4
  // torus (device i: up, left, down, right — 0 → "12, 3, 4, 1"); no health_status.
  void WriteTrn1_32xlarge_Driver226() const;
  // trn2.48xlarge, driver 2.28.4.0: 16 NDv3/Trn2/Trainium2 devices of 8 cores in the 4x4 torus,
  // health_status present. status/other_info are as the last exited processes left them.
  void WriteTrn2_48xlarge_Driver228() const;
  // The same host under driver 2.30.2.0, whose status/other_info counters move while a process
  // runs (see AdvanceTrn2Counters); its values differ from the 2.28 fixture's.
  void WriteTrn2_48xlarge_Driver230() const;
  // A trn2-like host of 3 devices, no version file, each device broken differently:
  //   neuron0: no info/ directory, no stats/power, cores 1, 3, 5 and 7 without stats/other_info;
  //   neuron1: serial_number "\n", POWER_STATUS_NO_DATA, an empty connected_devices (the driver's
  //            overflow), host_mem/dma_buffers/total wrapped to 2^64 - 24576, and
  //            neuron_core4/stats/other_info/nc_time_in_use/total reading "busy";
  //   neuron2: complete.
  void WritePartialTree() const;

  // What driver 2.30.2 does while processes run, on every neuron_core<K> of device `device` (all
  // devices when nullopt) that exists in the tree: each core was busy for `utilization` (0–1) of
  // `elapsed`, so nc_time_in_use/total grows by that many µs, flop_count by 30 MFLOP per busy µs,
  // status/success and inference_count by one per 1500 busy µs, and the pe_cntrs rows by 1400
  // cycles per µs (mm 3/4 and wl 1/4 of the busy cycles, idle the rest). Each `present` holds the
  // increment, as the driver's does. REQUIRES: those files hold numbers (a fixture wrote them).
  void AdvanceTrn2Counters(std::chrono::microseconds elapsed, double utilization,
                           std::optional<int> device = std::nullopt) const;
  // What a driver before 2.30.2 does while processes run: only the tensor engine's pe_cntrs move,
  // as AdvanceTrn2Counters moves them; status/ and other_info/ (flop_count, nc_time_in_use) stay
  // flat until a process exits.
  void AdvanceTrn2TensorEngine(std::chrono::microseconds elapsed, double utilization,
                               std::optional<int> device = std::nullopt) const;

 private:
  std::string root_;
};

}  // namespace neuronmon::neurondev::testing
