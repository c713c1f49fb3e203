// The datastore decoder against the driver's layout. The expected offsets are not the decoder's
// constants: they are the driver's macros (share/neuron_driver_shared.h) written out here as the
// header spells them, and counters are placed where get_neuroncore_counter_value (neuron_ds.c)
// looks for them — so a misreading shared by the decoder and the simulator's writer fails here.
#include "neurondev/datastore.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "neurondev/datastores.h"
#include "neurondev/driver_datastores.h"
#include "tests/neurondev/tree_writer.h"

namespace neuronmon::datastore {
namespace {

// ---- the driver's macros, evaluated by hand from the header ----
// NDS_ND_COUNTER_COUNT = NDS_ND_COUNTER_DEVICE_CLUSTER_ID (12) + NDS_ND_COUNTER_RESERVED (18) + 1
constexpr std::size_t kNdCount = 12 + 18 + 1;
// NDS_NC_COUNTER_COUNT = NDS_NC_COUNTER_OOB (30) + NDS_NC_COUNTER_RESERVED (0) + 1
constexpr std::size_t kNcCount = 30 + 0 + 1;
// NDS_EXT_NC_COUNTER_COUNT = NDS_EXT_NC_COUNTER_LAST (41) - NDS_NC_COUNTER_COUNT + 54
constexpr std::size_t kExtCount = 41 - kNcCount + 54;
constexpr std::size_t kTotal = kNcCount + kExtCount;  // NDS_TOTAL_NC_COUNTER_COUNT
constexpr std::size_t Align64(std::size_t v) { return v + (-v & 63); }  // NDS_ALIGN
// NDS_HEADER_SIZE = sizeof(nds_header_t) = char[4] + int
constexpr std::size_t kNdStart = 0 + 4 + 4;
constexpr std::size_t kNcStart = kNdStart + kNdCount * 8;
// NDS_EXT_OFFSET = NDS_ALIGN(44588 + 65 * 4 * 8 + 96 * 12 * 8)
constexpr std::size_t kExtStart = Align64(44588 + 65 * 4 * 8 + 96 * 12 * 8);
constexpr std::size_t kNcDataStart = Align64(kExtStart + kExtCount * 4 * 8);
constexpr std::size_t kNcDataCount = kTotal + 1;  // + NDS_EXT_NEURONCORE_NC_DATA_PADDING

// get_neuroncore_counter_value: where the driver reads counter k of core nc.
std::size_t DriverOffset(std::size_t nc, std::size_t k) {
  if (nc < 4) {
    if (k < kNcCount) return kNcStart + (nc * kNcCount + k) * 8;  // NDS_NEURONCORE_COUNTERS
    return kExtStart + (nc * kExtCount + (k - kNcCount)) * 8;     // NDS_EXT_NEURONCORE_COUNTERS
  }
  return kNcDataStart + ((nc - 4) * kNcDataCount + k) * 8;  // NDS_EXT_NEURONCORE_NC_DATA
}

std::vector<std::byte> Image(int version = 3) {
  std::vector<std::byte> image(256 * 1024);
  std::memcpy(image.data(), "nds", 4);
  std::memcpy(image.data() + 4, &version, sizeof version);
  return image;
}

void Put(std::vector<std::byte>& image, std::size_t offset, std::uint64_t v) {
  std::memcpy(image.data() + offset, &v, sizeof v);
}

TEST(DatastoreLayout, TheDecodersSectionsAreTheDriversMacros) {
  EXPECT_EQ(kNdCount, kDeviceCounterCount);
  EXPECT_EQ(kNcCount, kCoreCounterCount);
  EXPECT_EQ(kExtCount, kExtCounterCount);
  EXPECT_EQ(kTotal, 95u);  // the header's own comment: 31 original + 64 extended
  EXPECT_EQ(kExtStart, 55936u);
  EXPECT_EQ(kNcDataStart, 57984u);
  EXPECT_EQ(kHeaderSize, kNdStart);
  EXPECT_EQ(kCoreCountersStart, kNcStart);
  EXPECT_EQ(kExtCountersStart, kExtStart);
  EXPECT_EQ(kFullCoreSetsStart, kNcDataStart);
  EXPECT_EQ(kMinimumSize, kNcDataStart + 12 * kNcDataCount * 8);
}

// Every counter of every core, written where the driver reads it with a value naming the place,
// is read back from that place: the original section (cores 0-3, counters 0-30), its extension
// (cores 0-3, counters 31-94) and the full sets (cores 4-15).
TEST(DatastoreLayout, EveryCoreCounterIsReadWhereTheDriverReadsIt) {
  std::vector<std::byte> image = Image();
  for (std::size_t i = 0; i < kNdCount; ++i) Put(image, kNdStart + i * 8, 1'000'000 + i);
  for (std::size_t nc = 0; nc < 16; ++nc) {
    for (std::size_t k = 0; k < kTotal; ++k) Put(image, DriverOffset(nc, k), nc * 1000 + k + 1);
  }
  const Result<Reading> r = Decode(image, 16);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->format_version, 3);
  for (std::size_t i = 0; i < kNdCount; ++i) EXPECT_EQ(r->device[i], 1'000'000 + i) << i;
  ASSERT_EQ(r->cores.size(), 16u);
  for (std::size_t nc = 0; nc < 16; ++nc) {
    for (std::size_t k = 0; k < kTotal; ++k) {
      ASSERT_EQ(r->cores[nc][k], nc * 1000 + k + 1) << "core " << nc << " counter " << k;
    }
  }
  EXPECT_EQ(r->Core(5, kCcTime), 5 * 1000 + 21 + 1u);
  EXPECT_EQ(r->Core(2, kHwErrRepairableHbmUe), 2 * 1000 + 40 + 1u);
}

TEST(DatastoreLayout, ADeviceOfFewerCoresReadsOnlyThose) {
  std::vector<std::byte> image = Image();
  Put(image, DriverOffset(1, kTimeInUse), 42);
  const Result<Reading> r = Decode(image, 2);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->cores.size(), 2u);
  EXPECT_EQ(r->Core(1, kTimeInUse), 42u);
}

// nmetric_version_t: build in bits 0-31, minor 32-39, major 40-47.
TEST(DatastoreVersion, TheRuntimeVersionIsMajorMinorBuild) {
  std::vector<std::byte> image = Image();
  Put(image, kNdStart + 0 * 8, (std::uint64_t{2} << 40) | (std::uint64_t{22} << 32) | 14);
  const Result<Reading> r = Decode(image, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->runtime_version().Text(), "2.22.14");
  EXPECT_EQ(r->framework_version().Text(), "");  // not written: unknown, not "0.0.0"
}

TEST(DatastoreDecode, WhatIsNotADatastoreIsRefusedWithTheReason) {
  EXPECT_NE(Decode(std::vector<std::byte>(100), 2).status().message().find("shorter"),
            std::string::npos);
  std::vector<std::byte> wrong = Image();
  wrong[0] = std::byte{'x'};
  EXPECT_NE(Decode(wrong, 2).status().message().find("signature"), std::string::npos);
  EXPECT_EQ(Decode(Image(0), 2).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(Decode(Image(-7), 2).status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(Decode(Image(), 0).ok());
  EXPECT_FALSE(Decode(Image(), 17).ok());
  // The minimum is enough; more than the driver maps is never read.
  std::vector<std::byte> minimum = Image();
  minimum.resize(kMinimumSize);
  EXPECT_TRUE(Decode(minimum, 16).ok());
  std::vector<std::byte> huge = Image();
  huge.resize(4 << 20, std::byte{0xff});
  EXPECT_TRUE(Decode(huge, 16).ok());
}

TEST(DatastoreDecode, ACumulativeCounterThatFellIsNamedAndAGaugeMayFall) {
  std::vector<std::byte> image = Image();
  Put(image, DriverOffset(3, kTimeInUse), 900);
  Put(image, DriverOffset(3, kDeviceTensors), 5000);
  const Reading before = *Decode(image, 4);
  Put(image, DriverOffset(3, kDeviceTensors), 10);  // memory freed
  EXPECT_EQ(FellBack(before, *Decode(image, 4)), "");
  Put(image, DriverOffset(3, kTimeInUse), 12);
  EXPECT_EQ(FellBack(before, *Decode(image, 4)),
            "core 3 counter 0 (time in use) fell from 900 to 12");
}

void WriteImage(const std::string& path, const std::vector<std::byte>& image) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(image.data()),
             static_cast<std::streamsize>(image.size()));
}

// Image files (--datastore-root): <root>/neuron<N>/<pid>. A counter that fell and reads the same
// again is the datastore started afresh, said so the caller does not subtract across it; what is
// not a regular file, or not there, is an error with the path, never a zero.
TEST(DatastoreFiles, ReadsImagesAndSaysWhenADatastoreStartedAgain) {
  neurondev::testing::FakeTree root;
  const std::string path = root.root() + "/neuron3/4242";
  std::vector<std::byte> image = Image();
  Put(image, DriverOffset(1, kTimeInUse), 900);
  WriteImage(path, image);
  neurondev::Datastores files(std::make_unique<neurondev::DatastoreFiles>(root.root()));
  Result<neurondev::Datastores::Read> r = files.ReadDatastore(3, 4242, 2);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->reading.Core(1, kTimeInUse), 900u);
  EXPECT_EQ(r->restarted, "");
  Put(image, DriverOffset(1, kTimeInUse), 12);
  WriteImage(path, image);
  r = files.ReadDatastore(3, 4242, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reading.Core(1, kTimeInUse), 12u);
  EXPECT_EQ(r->restarted, "core 1 counter 0 (time in use) fell from 900 to 12");
  Put(image, DriverOffset(1, kTimeInUse), 20);
  WriteImage(path, image);
  EXPECT_EQ(files.ReadDatastore(3, 4242, 2)->restarted, "") << "counted on from the new start";

  EXPECT_EQ(files.ReadDatastore(3, 7, 2).status().code(), StatusCode::kNotFound);
  std::filesystem::create_directories(root.root() + "/neuron3/8");
  EXPECT_NE(files.ReadDatastore(3, 8, 2).status().message().find("not a regular file"),
            std::string::npos);
  std::filesystem::create_symlink(path, root.root() + "/neuron3/9");
  EXPECT_FALSE(files.ReadDatastore(3, 9, 2).ok()) << "a symlink is not followed";
  ::mkfifo((root.root() + "/neuron3/10").c_str(), 0600);
  EXPECT_FALSE(files.ReadDatastore(3, 10, 2).ok()) << "a FIFO is not read (nor waited on)";
  WriteImage(root.root() + "/neuron3/11", std::vector<std::byte>(1000));
  EXPECT_NE(files.ReadDatastore(3, 11, 2).status().message().find("ND3 pid 11: datastore of 1000"),
            std::string::npos);
}

// The live driver's source with the driver's two calls stood in for: the "device" is a memfd
// holding two datastore slots (offsets 0 and 256 KiB), and ACQUIRE_NEURON_DS answers from a table
// the test changes. The mapping is the real mmap, read-only.
struct FakeDriver {
  int memfd = -1;
  std::map<std::uint32_t, std::uint64_t> slots;  // pid -> mmap offset
  int refuse = 0;                                // an errno every acquire returns, when set
  int opens = 0;
  // Called after each acquire: lets a test hand a slot to another process mid-read.
  std::function<void()> after_acquire;

  neurondev::DriverCalls Calls() {
    neurondev::DriverCalls calls;
    calls.open = [this](int) -> Result<UniqueFd> {
      ++opens;
      return UniqueFd(::dup(memfd));
    };
    calls.acquire = [this](int, std::uint32_t pid, neurondev::DatastoreLocation* out) {
      if (refuse != 0) return refuse;
      const auto it = slots.find(pid);
      if (it == slots.end()) return ENOENT;
      out->mmap_offset = it->second;
      out->size = kDriverSize;
      if (after_acquire) after_acquire();
      return 0;
    };
    return calls;
  }
  void WriteSlot(std::uint64_t offset, const std::vector<std::byte>& image) const {
    ASSERT_EQ(::pwrite(memfd, image.data(), image.size(), static_cast<off_t>(offset)),
              static_cast<ssize_t>(image.size()));
  }
};

TEST(DriverDatastores, MapsEachSlotOnceReadOnlyAndNeverTakesAHandedOnSlotForTheOldPid) {
  FakeDriver driver;
  driver.memfd = ::memfd_create("datastores", MFD_CLOEXEC);
  ASSERT_GE(driver.memfd, 0);
  ASSERT_EQ(::ftruncate(driver.memfd, 2 * kDriverSize), 0);
  std::vector<std::byte> image = Image();
  Put(image, DriverOffset(1, kTimeInUse), 900);
  driver.WriteSlot(0, image);
  driver.slots[4242] = 0;
  auto source = std::make_unique<neurondev::DriverDatastores>("/dev", driver.Calls());
  neurondev::DriverDatastores& live = *source;
  neurondev::Datastores datastores(std::move(source));

  Result<neurondev::Datastores::Read> r = datastores.ReadDatastore(3, 4242, 2);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->reading.Core(1, kTimeInUse), 900u);
  // The runtime writes on; the same mapping shows it, none other is made, the device stays open.
  Put(image, DriverOffset(1, kTimeInUse), 1900);
  driver.WriteSlot(0, image);
  r = datastores.ReadDatastore(3, 4242, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reading.Core(1, kTimeInUse), 1900u);
  ASSERT_TRUE(r->previous.has_value());
  EXPECT_EQ(r->previous->Core(1, kTimeInUse), 900u);
  EXPECT_EQ(live.mappings(), 1u);
  EXPECT_EQ(driver.opens, 1);
  // Read-only: writing through the image faults (the driver would have allowed it).
  Result<std::span<const std::byte>> mapped = live.Image(3, 4242);
  ASSERT_TRUE(mapped.ok());
  EXPECT_DEATH(const_cast<std::byte&>(mapped->front()) = std::byte{1}, "");

  // A second process in the other slot: a second mapping.
  driver.WriteSlot(kDriverSize, image);
  driver.slots[5151] = kDriverSize;
  EXPECT_TRUE(datastores.ReadDatastore(3, 5151, 2).ok());
  EXPECT_EQ(live.mappings(), 2u);

  // 4242 exits while it is read and its slot goes to 6000: what was read is not 4242's.
  driver.after_acquire = [&] {
    driver.after_acquire = nullptr;
    driver.slots.erase(4242);
    driver.slots[6000] = 0;
  };
  EXPECT_EQ(datastores.ReadDatastore(3, 4242, 2).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(datastores.ReadDatastore(3, 4242, 2).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(datastores.ReadDatastore(3, 6000, 2).ok());
  EXPECT_EQ(live.mappings(), 2u) << "slot 0's mapping serves its next process";

  // A refused ioctl is an error with the reason, never a zero reading.
  driver.refuse = EPERM;
  const Status refused = datastores.ReadDatastore(3, 5151, 2).status();
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.message().find("/dev/neuron3: the driver refused the datastore of pid 5151"),
            std::string::npos)
      << refused.message();
  driver.refuse = 0;

  // The device no other process holds is let go: unmapped and closed.
  live.RetainDevices({});
  EXPECT_EQ(live.open_devices(), 0u);
  EXPECT_EQ(live.mappings(), 0u);
  EXPECT_TRUE(datastores.ReadDatastore(3, 5151, 2).ok());
  EXPECT_EQ(driver.opens, 2);
  ::close(driver.memfd);
}

// A device node that cannot be opened is not tried again at every read: its reason stands for
// kOpenRetryReads reads, then it is tried again.
TEST(DriverDatastores, AFailedOpenIsRetriedOnlyAfterAWhile) {
  int opens = 0;
  neurondev::DriverCalls calls;
  calls.open = [&](int) -> Result<UniqueFd> {
    ++opens;
    return Status::Unavailable("/dev/neuron0: Device or resource busy");
  };
  calls.acquire = [](int, std::uint32_t, neurondev::DatastoreLocation*) { return ENOENT; };
  neurondev::DriverDatastores live("/dev", std::move(calls));
  EXPECT_EQ(live.Image(0, 4242).status().message(), "/dev/neuron0: Device or resource busy");
  for (std::uint64_t read = 1; read < neurondev::DriverDatastores::kOpenRetryReads; ++read) {
    live.RetainDevices({0});
    EXPECT_FALSE(live.Image(0, 4242).ok());
  }
  EXPECT_EQ(opens, 1);
  live.RetainDevices({0});
  EXPECT_FALSE(live.Image(0, 4242).ok());
  EXPECT_EQ(opens, 2);
}

// The real calls send the ioctl to character devices only; what is missing, not a device, or a
// device that is not the driver's is named.
TEST(DriverDatastores, TheRealCallsAskOnlyACharacterDeviceAndSayWhy) {
  neurondev::testing::FakeTree root;
  root.Write("neuron1", "a regular file");
  root.Symlink("/dev/null", "neuron2");
  neurondev::Datastores datastores(std::make_unique<neurondev::DriverDatastores>(
      root.root(), neurondev::LiveDriverCalls(root.root())));
  const auto message = [&](int device) {
    return datastores.ReadDatastore(device, 4242, 2).status().message();
  };
  EXPECT_NE(message(0).find(root.root() + "/neuron0: No such file or directory"),
            std::string::npos);
  EXPECT_NE(message(1).find("/neuron1: not a character device"), std::string::npos);
  EXPECT_NE(message(2).find("/neuron2: the driver refused the datastore of pid 4242: "
                            "Inappropriate ioctl for device"),
            std::string::npos)
      << message(2);
  EXPECT_EQ(datastores.source().Name(), "the driver (" + root.root() + "/neuron<N>)");
}

}  // namespace
}  // namespace neuronmon::datastore
