#include "neurondev/kernel_log.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/neurondev/tree_writer.h"

namespace neuronmon::neurondev {
namespace {

using testing::FakeTree;

// The line AWS's troubleshooting guide shows, as /dev/kmsg gives it: the runtime prints it through
// the driver's NEURON_IOCTL_PRINTK, at KERN_ERR and with no prefix.
constexpr char kAwsLine[] =
    "3,1024,5500012345,-;NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR "
    "instance-id=i-0592464924bd45322 hostname=ip-172-31-61-252 nd-id=4 nc-id=1 "
    "serial-num=19fcda00f5ff6eb9 action=TERMINATE_INSTANCE";

TEST(KernelLog, ParsesTheRuntimesLineAsKmsgAndDmesgRawGiveIt) {
  std::optional<KernelHwError> e = ParseKernelLogRecord(kAwsLine);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->count, &HardwareErrors::kernel_sram_uncorrectable);
  EXPECT_EQ(e->type, "SRAM_UNCORRECTABLE_ERROR");
  EXPECT_EQ(e->device, 4);
  EXPECT_EQ(e->core, 1);
  EXPECT_EQ(e->serial, "19fcda00f5ff6eb9");
  EXPECT_EQ(e->action, "TERMINATE_INSTANCE");
  // `dmesg --raw`, with and without the time stamp; a dictionary line after the message.
  e = ParseKernelLogRecord("<3>[ 5500.012345] NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=7");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->count, &HardwareErrors::kernel_hbm_uncorrectable);
  EXPECT_EQ(e->device, 7);
  EXPECT_EQ(e->serial, "");
  EXPECT_EQ(e->action, "");
  e = ParseKernelLogRecord("<3>NEURON_HW_ERR=DMA_ERROR nd-id=2");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->count, &HardwareErrors::kernel_dma);
  EXPECT_EQ(e->device, 2);
  e = ParseKernelLogRecord("3,1,2,c;NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR nd-id=1 \n DEVICE=+x\n");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->count, &HardwareErrors::kernel_nc_uncorrectable);
  e = ParseKernelLogRecord("3,2,3,-;NEURON_HW_ERR=SOMETHING_NEW nd-id=3 future-key=x");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->count, &HardwareErrors::kernel_other);
  EXPECT_EQ(e->type, "SOMETHING_NEW");
  // A line naming no device, or an index that does not fit: an event of no device, never guessed.
  e = ParseKernelLogRecord("3,4,5,-;NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->device, -1);
  e = ParseKernelLogRecord("3,4,5,-;NEURON_HW_ERR=DMA_ERROR nd-id=99999999999 nc-id=-1");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->device, -1);
  EXPECT_EQ(e->core, -1);
  // A signed index is not an index (the kernel_log fuzzer's find: "nd-id=-4" read as -4).
  e = ParseKernelLogRecord("3,4,5,-;NEURON_HW_ERR=DMA_ERROR nd-id=-4 nc-id=+3");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->device, -1);
  EXPECT_EQ(e->core, -1);
}

TEST(KernelLog, SplitsARecordIntoFacilityLevelAndMessage) {
  std::optional<KernelLogRecord> r = SplitKernelLogRecord("11,7,99,-;hello\n SUBSYSTEM=x");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->facility, 1);  // user
  EXPECT_EQ(r->level, 3);
  EXPECT_EQ(r->message, "hello");
  r = SplitKernelLogRecord("<6>[    1.000000] usb 1-1: new device");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->facility, 0);
  EXPECT_EQ(r->level, 6);
  EXPECT_EQ(r->message, "usb 1-1: new device");
  // Lines that carry no level are not records.
  EXPECT_FALSE(SplitKernelLogRecord("[ 5500.012345] NEURON_HW_ERR=DMA_ERROR nd-id=0"));
  EXPECT_FALSE(SplitKernelLogRecord("NEURON_HW_ERR=DMA_ERROR nd-id=0"));
  EXPECT_FALSE(SplitKernelLogRecord(" SUBSYSTEM=pci;NEURON_HW_ERR=DMA_ERROR"));
  EXPECT_FALSE(SplitKernelLogRecord("3;NEURON_HW_ERR=DMA_ERROR"));
  EXPECT_FALSE(SplitKernelLogRecord("<x>NEURON_HW_ERR=DMA_ERROR"));
  EXPECT_FALSE(SplitKernelLogRecord(""));
}

// What any local user can get into the kernel log is never an event: a segfaulting program's name,
// a line written to /dev/kmsg (the kernel files it under the user facility), the grammar's words
// inside free text, or anything else than key=value after the type.
TEST(KernelLog, OnlyTheKernelAtLevelErrAndOnlyTheGrammarCount) {
  const std::string forged =
      "NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=3 action=TERMINATE_INSTANCE";
  ASSERT_TRUE(ParseKernelLogRecord("3,1,2,-;" + forged));  // the well-formed line itself
  // The reproduced attack: a program named after the line segfaults.
  EXPECT_FALSE(ParseKernelLogRecord("6,1,2,-;x " + forged + " y[4242]: segfault at 0 ip 0"));
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;x " + forged + " y[4242]: segfault at 0 ip 0"));
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;" + forged + " y[4242]: segfault at 0 ip 0"));
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;NEURON_HW_ERR=H[4242]: segfault at 0 ip 0"));
  // Written to /dev/kmsg as "<3>...": user facility, level err.
  EXPECT_FALSE(ParseKernelLogRecord("11,1,2,-;" + forged));
  EXPECT_FALSE(ParseKernelLogRecord("<11>" + forged));
  // Other levels; a prefix before the word.
  EXPECT_FALSE(ParseKernelLogRecord("4,1,2,-;" + forged));
  EXPECT_FALSE(ParseKernelLogRecord("2,1,2,-;" + forged));
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;neuron3: " + forged));
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;kernel: " + forged));
  // Outside the grammar.
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;NEURON_HW_ERR= nd-id=0"));
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;NEURON_HW_ERR=hbm_error nd-id=0"));
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;NEURON_HW_ERR=" + std::string(65, 'X') + " nd-id=0"));
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;NEURON_HW_ERR=DMA_ERROR nd-id=0 nd-id=3"));
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;NEURON_HW_ERR=DMA_ERROR nd-id=0 action=a=b"));
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;NEURON_HW_ERR=DMA_ERROR ND-ID=0"));
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;NEURON_HW_ERR=DMA_ERROR nd-id=0 =x"));
  EXPECT_FALSE(
      ParseKernelLogRecord("3,1,2,-;NEURON_HW_ERR=DMA_ERROR action=" + std::string(65, 'A')));
  std::string many = "3,1,2,-;NEURON_HW_ERR=DMA_ERROR";
  for (int i = 0; i < 33; ++i) many += " k" + std::to_string(i) + "=v";
  EXPECT_FALSE(ParseKernelLogRecord(many));
  // The message is the record's first line only.
  EXPECT_FALSE(ParseKernelLogRecord("3,1,2,-;hello\n NEURON_HW_ERR=DMA_ERROR nd-id=0"));
}

void Append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}

TEST(KernelLog, CountsEachDevicesEventsAndFollowsTheLog) {
  FakeTree tree;
  const std::string path = tree.root() + "/kmsg";
  Append(path, std::string(kAwsLine) + "\n" +
                   "3,1025,5500012346,-;NEURON_HW_ERR=DMA_ERROR nd-id=4\n"
                   " DEVICE=+pci:0000:10:1c.0\n"
                   "6,1026,5500012347,-;usb 1-1: new device\n"
                   "3,1027,5500012348,-;NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=1\n"
                   "3,1028,5500012349,-;NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR nd-id=500\n"
                   "3,1029,5500012350,-;NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR\n"
                   // forged: a segfault line, a user's write to /dev/kmsg
                   "6,1030,5500012351,-;x NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=0 y[9]: "
                   "segfault at 0\n"
                   "11,1031,5500012352,-;NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=0\n");
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
  EXPECT_EQ(log.refused(), 2u);       // the forged lines
  // Written later, and half a line at a time: counted once it is whole.
  Append(path, "3,1032,5500013000,-;NEURON_HW_ERR=HBM_UNC");
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
  Append(path, "3,1033,5500014000,-;NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=1\n");
  log.Poll();
  EXPECT_EQ(log.Counts(1).kernel_hbm_uncorrectable, 1u);
}

// serial-num= names the device: nd-id= is the runtime's index, which inside a container given a
// subset of the devices is relative to that subset. nd-id= counts only when the serial is missing
// or matches no device.
TEST(KernelLog, TheSerialNamesTheDeviceAndNdIdIsTheFallback) {
  FakeTree tree;
  const std::string path = tree.root() + "/kmsg";
  Append(path,
         // device 1's serial (upper case, no leading zeros), nd-id 0: the container's index
         "3,1,2,-;NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR instance-id=i-1 hostname=h nd-id=0 "
         "nc-id=0 serial-num=19FCDA00F5FF6EB9 action=TERMINATE_INSTANCE\n"
         // device 3's serial as "%016llx" prints it, no nd-id
         "3,2,3,-;NEURON_HW_ERR=DMA_ERROR serial-num=00000000000000c3\n"
         // no serial: nd-id
         "3,3,4,-;NEURON_HW_ERR=DMA_ERROR nd-id=2\n"
         // a serial of no device here: nd-id
         "3,4,5,-;NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR nd-id=2 serial-num=deadbeef\n"
         // neither names a device of this host
         "3,5,6,-;NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR nd-id=7 serial-num=deadbeef\n"
         // a serial two devices share names neither of them: nd-id
         "3,6,7,-;NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR nd-id=0 serial-num=5\n");
  KernelLog log({.path = path, .max_records_per_poll = 100, .max_devices = 128});
  log.SetDevices({{0, "0000000000000005\n"},
                  {1, "19fcda00f5ff6eb9"},
                  {2, ""},  // the driver printed an empty line
                  {3, "00000000000000c3"},
                  {4, "5"}});
  log.Poll();
  EXPECT_EQ(log.Counts(1).kernel_hbm_uncorrectable, 1u);
  EXPECT_EQ(log.Counts(1).KernelTotal(), 1u);
  EXPECT_EQ(log.Counts(3).kernel_dma, 1u);
  EXPECT_EQ(log.Counts(2).kernel_dma, 1u);
  EXPECT_EQ(log.Counts(2).kernel_nc_uncorrectable, 1u);
  EXPECT_EQ(log.Counts(0).kernel_sram_uncorrectable, 1u);
  EXPECT_EQ(log.Counts(0).KernelTotal(), 1u) << "the serial says 1, not nd-id 0";
  EXPECT_EQ(log.Counts(7).KernelTotal(), 0u) << "nd-id 7 is no device of this host";
  EXPECT_EQ(log.unattributed(), 1u);
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
