#include "neurondev/kernel_log.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/neurondev/tree_writer.h"

namespace neuronmon::neurondev {
namespace {

using testing::FakeTree;

// The line AWS's troubleshooting guide shows, as /dev/kmsg gives it.
constexpr char kAwsLine[] =
    "3,1024,5500012345,-;neuron0: NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR "
    "instance-id=i-0592464924bd45322 hostname=ip-172-31-61-252 nd-id=4 nc-id=0 "
    "serial-num=19fcda00f5ff6eb9 action=TERMINATE_INSTANCE";

TEST(KernelLog, ParsesTheDriversLineAsKmsgAndDmesgGiveIt) {
  std::optional<KernelHwError> e = ParseKernelLogRecord(kAwsLine);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->count, &HardwareErrors::kernel_sram_uncorrectable);
  EXPECT_EQ(e->type, "SRAM_UNCORRECTABLE_ERROR");
  EXPECT_EQ(e->device, 4);  // nd-id wins over the "neuron0:" prefix
  EXPECT_EQ(e->action, "TERMINATE_INSTANCE");
  // dmesg's form, with the device only in the prefix.
  e = ParseKernelLogRecord("[ 5500.012345] neuron7: NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->count, &HardwareErrors::kernel_hbm_uncorrectable);
  EXPECT_EQ(e->device, 7);
  EXPECT_EQ(e->action, "");
  // device= as some tools write it; DMA and unknown types.
  e = ParseKernelLogRecord("6,1,2,-;kernel: NEURON_HW_ERR=DMA_ERROR device=2");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->count, &HardwareErrors::kernel_dma);
  EXPECT_EQ(e->device, 2);
  e = ParseKernelLogRecord("NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR nd-id=1");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->count, &HardwareErrors::kernel_nc_uncorrectable);
  e = ParseKernelLogRecord("neuron3: NEURON_HW_ERR=SOMETHING_NEW nd-id=3");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->count, &HardwareErrors::kernel_other);
  EXPECT_EQ(e->type, "SOMETHING_NEW");
  // A line naming no device: an event of no device, never guessed.
  e = ParseKernelLogRecord(
      "kernel: NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR affecting neuron devices");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->device, -1);
}

TEST(KernelLog, OtherLinesAndHostileOnesAreNotEvents) {
  EXPECT_FALSE(ParseKernelLogRecord("6,1,2,-;neuron0: driver loaded"));
  EXPECT_FALSE(ParseKernelLogRecord(""));
  // A continuation (dictionary) line of a record.
  EXPECT_FALSE(ParseKernelLogRecord(" SUBSYSTEM=pci NEURON_HW_ERR=DMA_ERROR"));
  // The message is the record's first line only.
  EXPECT_FALSE(ParseKernelLogRecord("6,1,2,-;hello\n NEURON_HW_ERR=DMA_ERROR nd-id=0"));
  EXPECT_FALSE(ParseKernelLogRecord("NEURON_HW_ERR= nd-id=0"));
  EXPECT_FALSE(ParseKernelLogRecord("NEURON_HW_ERR=" + std::string(65, 'X') + " nd-id=0"));
  // Indices that do not fit, or are not numbers, name no device.
  std::optional<KernelHwError> e =
      ParseKernelLogRecord("NEURON_HW_ERR=DMA_ERROR nd-id=99999999999 neuron1x:");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->device, -1);
  e = ParseKernelLogRecord("NEURON_HW_ERR=DMA_ERROR nd-id=-1 action=" + std::string(500, 'A'));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->device, -1);
  EXPECT_EQ(e->action.size(), 64u);
}

void Append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}

TEST(KernelLog, CountsEachDevicesEventsAndFollowsTheLog) {
  FakeTree tree;
  const std::string path = tree.root() + "/kmsg";
  Append(path, std::string(kAwsLine) + "\n" +
                   "6,1025,5500012346,-;neuron4: NEURON_HW_ERR=DMA_ERROR nd-id=4\n"
                   " DEVICE=+pci:0000:10:1c.0\n"
                   "6,1026,5500012347,-;usb 1-1: new device\n"
                   "3,1027,5500012348,-;neuron1: NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=1\n"
                   "3,1028,5500012349,-;NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR nd-id=500\n"
                   "3,1029,5500012350,-;NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR\n");
  KernelLog log({.path = path, .max_records_per_poll = 100, .max_devices = 128});
  EXPECT_EQ(log.unavailable(), "");
  log.Poll();
  EXPECT_EQ(log.Counts(4).kernel_sram_uncorrectable, 1u);
  EXPECT_EQ(log.Counts(4).kernel_dma, 1u);
  EXPECT_EQ(log.Counts(4).KernelTotal(), 2u);
  EXPECT_EQ(log.Counts(1).kernel_hbm_uncorrectable, 1u);
  EXPECT_EQ(log.Counts(0).KernelTotal(), 0u);
  EXPECT_EQ(log.Counts(500).KernelTotal(), 0u);
  EXPECT_EQ(log.unattributed(), 2u);  // device 500 is beyond max_devices; one named none
  // Written later, and half a line at a time: counted once it is whole.
  Append(path, "3,1030,5500013000,-;neuron1: NEURON_HW_ERR=HBM_UNC");
  log.Poll();
  EXPECT_EQ(log.Counts(1).kernel_hbm_uncorrectable, 1u);
  Append(path, "ORRECTABLE_ERROR nd-id=1\n");
  log.Poll();
  EXPECT_EQ(log.Counts(1).kernel_hbm_uncorrectable, 2u);
  log.Poll();  // nothing new
  EXPECT_EQ(log.Counts(1).kernel_hbm_uncorrectable, 2u);
  // A reset forgets the events before it; later ones count again.
  log.Clear();
  EXPECT_EQ(log.Counts(1).KernelTotal(), 0u);
  Append(path, "3,1031,5500014000,-;neuron1: NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=1\n");
  log.Poll();
  EXPECT_EQ(log.Counts(1).kernel_hbm_uncorrectable, 1u);
}

TEST(KernelLog, ReadsAtMostItsBoundPerPoll) {
  FakeTree tree;
  const std::string path = tree.root() + "/kmsg";
  std::string lines;
  for (int i = 0; i < 10; ++i) lines += "3,1,2,-;NEURON_HW_ERR=DMA_ERROR nd-id=0\n";
  Append(path, lines);
  KernelLog log({.path = path, .max_records_per_poll = 1, .max_devices = 128});
  log.Poll();
  // The whole read chunk is parsed (a regular file gives many lines a read); the bound stops the
  // next read.
  EXPECT_EQ(log.Counts(0).kernel_dma, 10u);
  std::string many;
  for (int i = 0; i < 5000; ++i) many += "3,1,2,-;NEURON_HW_ERR=DMA_ERROR nd-id=0\n";
  Append(path, many);
  log.Poll();
  EXPECT_LT(log.Counts(0).kernel_dma, 5010u);  // one 16 KiB read, not the whole log
  for (int i = 0; i < 100 && log.Counts(0).kernel_dma < 5010u; ++i) log.Poll();
  EXPECT_EQ(log.Counts(0).kernel_dma, 5010u);
}

TEST(KernelLog, AnUnreadableLogSaysWhyAndIsTriedAgain) {
  FakeTree tree;
  const std::string path = tree.root() + "/kmsg";
  KernelLog log({.path = path, .max_records_per_poll = 100, .max_devices = 128, .reopen_every = 2});
  EXPECT_EQ(log.unavailable(), "cannot read " + path + ": No such file or directory");
  log.Poll();
  Append(path, "3,1,2,-;NEURON_HW_ERR=DMA_ERROR nd-id=3\n");
  log.Poll();  // the second poll opens it again
  EXPECT_EQ(log.unavailable(), "");
  EXPECT_EQ(log.Counts(3).kernel_dma, 1u);
}

}  // namespace
}  // namespace neuronmon::neurondev
