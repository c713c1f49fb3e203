// The processes holding /dev/neuron* as ScanProcesses finds them in fabricated /proc trees: what
// it reads of each holder, what it skips (other descriptors, garbage entries, exited processes),
// what it cannot see (another user's descriptors) and the bounds that keep a hostile process from
// making the scan large or slow.
#include "neurondev/processes.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace neuronmon::neurondev {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

// A temporary proc root: pid directories with files, `fd/*` symlinks and `fdinfo/*` files, removed
// at the end.
class FakeProc {
 public:
  FakeProc() {
    std::string pattern = (fs::temp_directory_path() / "neuronmon-proc-XXXXXX").string();
    root_ = ::mkdtemp(pattern.data());
  }
  ~FakeProc() {
    std::error_code ec;
    // Give back what a test took away so the tree can be removed; directories only, since
    // permissions() follows symlinks (fd/1 -> /dev/null).
    for (const auto& entry : fs::recursive_directory_iterator(
             root_, fs::directory_options::skip_permission_denied, ec)) {
      if (!entry.is_symlink() && entry.is_directory()) {
        fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add, ec);
      }
    }
    fs::remove_all(root_, ec);
  }
  FakeProc(const FakeProc&) = delete;
  FakeProc& operator=(const FakeProc&) = delete;

  const std::string& root() const { return root_; }

  void Write(const std::string& relative, const std::string& contents) const {
    const fs::path path = fs::path(root_) / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << contents;
  }
  void Link(const std::string& pid, int fd, const std::string& target) const {
    const fs::path dir = fs::path(root_) / pid / "fd";
    fs::create_directories(dir);
    fs::create_symlink(target, dir / std::to_string(fd));
  }
  // `fdinfo/<fd>` as the kernel prints it for a descriptor opened with `flags` (octal).
  void Fdinfo(const std::string& pid, int fd, const std::string& flags) const {
    Write(pid + "/fdinfo/" + std::to_string(fd),
          "pos:\t0\nflags:\t" + flags + "\nmnt_id:\t25\nino:\t1035\n");
  }
  // A process as a Neuron application looks: cmdline, comm, status, cgroup, environ.
  void WriteProcess(const std::string& pid, const std::string& uid) const {
    Write(pid + "/cmdline", "python3\0train.py\0--lr\0003e-4\0"s);
    Write(pid + "/comm", "python3\n");
    Write(pid + "/status", "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t" + uid +
                               "\t" + uid + "\t" + uid + "\t" + uid + "\nGid:\t0\t0\t0\t0\n");
    Write(pid + "/cgroup", "0::/kubepods.slice/pod1234/cri-containerd-abc.scope\n");
    Write(pid + "/environ", "PATH=/usr/bin\0NEURON_PROCESS_TAG=llama3-rank0\0HOME=/root\0"s);
  }

 private:
  std::string root_;
};

ProcessScan Scan(const FakeProc& proc, ProcessLimits limits = {}, std::string passwd = "") {
  Result<ProcessScan> scan = ScanProcesses(proc.root(), limits, passwd);
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  return scan.ok() ? *scan : ProcessScan{};
}

TEST(ProcessesDeviceLink, OnlyNeuronDeviceNodes) {
  EXPECT_EQ(NeuronDeviceOfLink("/dev/neuron0"), 0u);
  EXPECT_EQ(NeuronDeviceOfLink("/dev/neuron15"), 15u);
  EXPECT_EQ(NeuronDeviceOfLink("/dev/neuron3 (deleted)"), 3u);
  for (const char* other :
       {"/dev/null", "socket:[123]", "pipe:[77]", "anon_inode:[eventfd]", "/dev/neuron",
        "/dev/neuron01", "/dev/neuronx", "/dev/neuron3x", "/dev/neuron1234567", "/dev/neuron_core0",
        "/tmp/dev/neuron1", "/dev/neuron-1", "/dev/neuron (deleted)", ""}) {
    EXPECT_EQ(NeuronDeviceOfLink(other), std::nullopt) << other;
  }
}

TEST(ProcessesCommand, JoinsArgumentsCleansAndBounds) {
  EXPECT_EQ(CommandOfCmdline("python3\0train.py\0--lr\0003e-4\0"s, 4096),
            "python3 train.py --lr 3e-4");
  EXPECT_EQ(CommandOfCmdline("setproctitle-style\0\0\0\0"s, 4096), "setproctitle-style");
  EXPECT_EQ(CommandOfCmdline("", 4096), "");
  // An argument that would recolour or retitle a terminal loses its escape sequence; line breaks
  // and tabs become spaces; invalid UTF-8 becomes U+FFFD.
  EXPECT_EQ(CommandOfCmdline("a\x1b[31mred\0b\tc\nd\0\x1b]0;owned\a\xff"s, 4096),
            "ared b c d \xEF\xBF\xBD");
  EXPECT_EQ(CommandOfCmdline(std::string(100000, 'x'), 4096).size(), 4096u);
  // Cut at a character boundary: 3-byte characters, 4096 is not a multiple of 3.
  const std::string cut = CommandOfCmdline(std::string(3000, 'a') +
                                               "\xE2\x82\xAC\xE2\x82\xAC"
                                               "\xE2\x82\xAC\xE2\x82\xAC"
                                               "\xE2\x82\xAC\xE2\x82\xAC"
                                               "\xE2\x82\xAC\xE2\x82\xAC"
                                               "\xE2\x82\xAC\xE2\x82\xAC"s +
                                               std::string(3000, 'b'),
                                           3010);
  EXPECT_EQ(cut.size(), 3009u);
  EXPECT_EQ(cut.substr(3006), "\xE2\x82\xAC");
}

TEST(ProcessesScan, FindsHoldersWithTheirDetailsInPidOrder) {
  FakeProc proc;
  proc.WriteProcess("4200", "1000");
  proc.Link("4200", 0, "/dev/null");
  proc.Link("4200", 1, "socket:[123]");
  proc.Link("4200", 3, "/dev/neuron3");
  proc.Link("4200", 4, "/dev/neuron1");
  proc.Link("4200", 5, "/dev/neuron3");
  proc.Link("4200", 6, "/tmp/model.neff");
  proc.WriteProcess("77", "0");
  proc.Link("77", 9, "/dev/neuron0");
  proc.WriteProcess("300", "1000");  // no Neuron device: not listed
  proc.Link("300", 0, "/dev/null");
  proc.Link("300", 1, "pipe:[9]");
  proc.Write("passwd", "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n");

  const ProcessScan scan = Scan(proc, {}, proc.root() + "/passwd");
  ASSERT_EQ(scan.processes.size(), 2u);
  EXPECT_EQ(scan.scanned, 3u);
  EXPECT_EQ(scan.unreadable, 0u);
  const NeuronProcess& first = scan.processes[0];
  EXPECT_EQ(first.pid, 77u);
  EXPECT_EQ(first.devices, std::vector<std::uint32_t>{0});
  EXPECT_EQ(first.user, "root");
  const NeuronProcess& p = scan.processes[1];
  EXPECT_EQ(p.pid, 4200u);
  EXPECT_EQ(p.devices, (std::vector<std::uint32_t>{1, 3}));
  EXPECT_EQ(p.command, "python3 train.py --lr 3e-4");
  EXPECT_EQ(p.comm, "python3");
  EXPECT_EQ(p.uid, 1000u);
  EXPECT_EQ(p.user, "alice");
  EXPECT_EQ(p.cgroup, "/kubepods.slice/pod1234/cri-containerd-abc.scope");
  EXPECT_EQ(p.attribution, ProcessAttribution{}) << "no pod UID, no container id: nothing guessed";
  EXPECT_EQ(p.tag, "llama3-rank0");
}

// A runtime opens its devices read-write; AWS's neuron-ls (and our own BDF lookup) opens them
// write-only, the driver's free access for query ioctls: not a holder.
TEST(ProcessesScan, WriteOnlyOpensDoNotHoldADevice) {
  FakeProc proc;
  proc.WriteProcess("4200", "1000");
  proc.Link("4200", 3, "/dev/neuron0");
  proc.Fdinfo("4200", 3, "02100002");  // O_RDWR | O_CLOEXEC | O_LARGEFILE
  proc.Link("4200", 4, "/dev/neuron1");
  proc.Fdinfo("4200", 4, "02100001");  // and device 1 only write-only: not held
  proc.WriteProcess("4300", "1000");
  proc.Write("4300/cmdline", "neuron-ls\0"s);
  proc.Link("4300", 3, "/dev/neuron0");
  proc.Fdinfo("4300", 3, "02100001");  // O_WRONLY | O_CLOEXEC | O_LARGEFILE
  proc.Link("4300", 4, "/dev/neuron1");
  proc.Fdinfo("4300", 4, "01");
  const ProcessScan scan = Scan(proc);
  ASSERT_EQ(scan.processes.size(), 1u);
  EXPECT_EQ(scan.processes[0].pid, 4200u);
  EXPECT_EQ(scan.processes[0].devices, std::vector<std::uint32_t>{0});
  EXPECT_EQ(scan.scanned, 2u);
}

// Without a readable fdinfo the mode is unknown, and the descriptor holds the device: a process is
// never hidden for want of it.
TEST(ProcessesScan, AnUnreadableFdinfoCountsAsAHolder) {
  FakeProc proc;
  proc.Link("10", 3, "/dev/neuron0");  // no fdinfo directory
  proc.Link("11", 3, "/dev/neuron1");
  proc.Write("11/fdinfo/3", "pos:\t0\nmnt_id:\t25\n");  // no flags line
  proc.Link("12", 3, "/dev/neuron2");
  proc.Fdinfo("12", 3, "garbage");
  EXPECT_EQ(Scan(proc).processes.size(), 3u);
  // Reads are bounded, and a line cut by the bound is not read: "flags:\t0100002" (O_RDWR) cut
  // after "01" would say write-only.
  proc.Link("13", 3, "/dev/neuron3");
  proc.Fdinfo("13", 3, "0100002");
  proc.Link("14", 3, "/dev/neuron3");
  proc.Write("14/fdinfo/3", "pos:\t0\n" + std::string(100, 'x') + "\nflags:\t01\n");
  ProcessLimits small_files;
  small_files.max_file_bytes = 16;  // "pos:\t0\nflags:\t01"
  const ProcessScan small = Scan(proc, small_files);
  ASSERT_EQ(small.processes.size(), 5u);
  EXPECT_EQ(small.processes[3].pid, 13u);
  EXPECT_EQ(small.processes[4].pid, 14u) << "its flags lie beyond the bound: a holder";
  const ProcessScan whole = Scan(proc);
  ASSERT_EQ(whole.processes.size(), 4u);
  EXPECT_EQ(whole.processes[3].pid, 13u) << "read whole, 14 is write-only";
}

TEST(ProcessesScan, SystemUserDatabaseAndUnknownUids) {
  FakeProc proc;
  proc.WriteProcess("10", "0");
  proc.Link("10", 3, "/dev/neuron0");
  proc.WriteProcess("11", "3999999999");
  proc.Link("11", 3, "/dev/neuron0");
  proc.Write("passwd", "root:x:0:0::/:/bin/sh\n");
  const ProcessScan system = Scan(proc);  // getpwuid_r
  ASSERT_EQ(system.processes.size(), 2u);
  EXPECT_EQ(system.processes[0].user, "root");
  EXPECT_EQ(system.processes[1].uid, 3999999999u);
  EXPECT_EQ(system.processes[1].user, "");  // unresolved: empty, not "3999999999"
  const ProcessScan file = Scan(proc, {}, proc.root() + "/passwd");
  EXPECT_EQ(file.processes[0].user, "root");
  EXPECT_EQ(file.processes[1].user, "");
  // A passwd file that does not exist resolves nobody.
  EXPECT_EQ(Scan(proc, {}, proc.root() + "/missing").processes[0].user, "");
}

// A pod's container and a Slurm step, as attribution.h reads them from the scanned files.
TEST(ProcessesScan, AttributionFromCgroupAndEnvironment) {
  FakeProc proc;
  const std::string id(64, 'a');
  proc.WriteProcess("300", "1000");
  proc.Write("300/cgroup",
             "0::/kubepods.slice/kubepods-pod1f2e3d4c_5b6a_7980_1a2b_3c4d5e6f7a8b"
             ".slice/cri-containerd-" +
                 id + ".scope\n");
  proc.Link("300", 3, "/dev/neuron0");
  proc.WriteProcess("301", "1000");
  proc.Write("301/cgroup", "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n");
  proc.Write("301/environ", "SLURM_JOB_ID=4242\0SLURM_ARRAY_JOB_ID=4240\0SLURM_ARRAY_TASK_ID=2\0"s);
  proc.Link("301", 3, "/dev/neuron1");
  const ProcessScan scan = Scan(proc);
  ASSERT_EQ(scan.processes.size(), 2u);
  EXPECT_EQ(scan.processes[0].attribution.container_id, id);
  EXPECT_EQ(scan.processes[0].attribution.pod_uid, "1f2e3d4c-5b6a-7980-1a2b-3c4d5e6f7a8b");
  EXPECT_EQ(scan.processes[1].attribution.slurm_job_id, "4242");
  EXPECT_EQ(scan.processes[1].attribution.slurm_step, "0");
  EXPECT_EQ(scan.processes[1].attribution.slurm_array_task_id, "2");
}

TEST(ProcessesScan, MissingFilesLeaveFieldsEmpty) {
  FakeProc proc;
  proc.Link("55", 3, "/dev/neuron2");  // fd/ only: no cmdline, comm, status, cgroup, environ
  proc.Write("56/status", "Name:\tx\nUid:\tgarbage\n");
  proc.Write("56/cgroup", "12:cpuset:/docker/abc\n11:memory:/docker/abc\n");
  proc.Write("56/environ", "PATH=/bin\0"s);
  proc.Link("56", 3, "/dev/neuron2");
  const ProcessScan scan = Scan(proc);
  ASSERT_EQ(scan.processes.size(), 2u);
  const NeuronProcess& bare = scan.processes[0];
  EXPECT_EQ(bare.pid, 55u);
  EXPECT_EQ(bare.devices, std::vector<std::uint32_t>{2});
  EXPECT_EQ(bare.command, "");
  EXPECT_EQ(bare.comm, "");
  EXPECT_EQ(bare.uid, std::nullopt);
  EXPECT_EQ(bare.user, "");
  EXPECT_EQ(bare.cgroup, "");
  EXPECT_EQ(bare.tag, "");
  const NeuronProcess& v1 = scan.processes[1];
  EXPECT_EQ(v1.uid, std::nullopt);                // "Uid:\tgarbage" is not a uid
  EXPECT_EQ(v1.cgroup, "12:cpuset:/docker/abc");  // cgroup v1: the first line whole
  EXPECT_EQ(v1.tag, "");
}

TEST(ProcessesScan, SkipsGarbageEntries) {
  FakeProc proc;
  for (const char* name : {"abc", "0", "0123", "12x", "99999999999", "-5", "self"}) {
    proc.Link(name, 3, "/dev/neuron0");
  }
  proc.Write("400", "a file, not a process directory");
  proc.Write("401/cmdline", "no fd directory");
  proc.Link("402", 3, "/dev/neuron0");
  const ProcessScan scan = Scan(proc);
  ASSERT_EQ(scan.processes.size(), 1u);
  EXPECT_EQ(scan.processes[0].pid, 402u);
  EXPECT_EQ(scan.scanned, 3u);  // 400, 401, 402
  EXPECT_EQ(scan.unreadable, 0u);
}

TEST(ProcessesScan, UntrustedTextIsCleanedAndBounded) {
  FakeProc proc;
  proc.Link("9", 3, "/dev/neuron0");
  proc.Write("9/cmdline", std::string(1 << 20, 'y') + '\0');
  proc.Write("9/comm", "evil\x1b]0;title\a\x7f\n");
  proc.Write("9/environ",
             "NEURON_PROCESS_TAG=tag\x1b[2Jwith\nbreak\xff" + std::string(5000, 't') + '\0');
  proc.Write("9/cgroup", "0::/" + std::string(5000, 'c') + "\n");
  const ProcessScan scan = Scan(proc);
  ASSERT_EQ(scan.processes.size(), 1u);
  const NeuronProcess& p = scan.processes[0];
  EXPECT_EQ(p.command, std::string(4096, 'y'));
  EXPECT_EQ(p.comm, "evil");
  EXPECT_EQ(p.tag.substr(0, 20), "tagwith break\xEF\xBF\xBDtttt");
  EXPECT_EQ(p.tag.size(), 1024u);
  EXPECT_EQ(p.cgroup.size(), 1024u);
}

TEST(ProcessesScan, LimitsBoundTheScan) {
  FakeProc proc;
  for (int pid = 1; pid <= 5; ++pid) proc.Link(std::to_string(pid), 3, "/dev/neuron0");
  proc.Link("6", 0, "/dev/null");
  proc.Link("6", 1, "/dev/null");
  proc.Link("6", 2, "/dev/null");

  ProcessLimits few_results;
  few_results.max_results = 2;
  const ProcessScan results = Scan(proc, few_results);
  EXPECT_EQ(results.processes.size(), 2u);
  EXPECT_EQ(results.omitted, 3u);
  EXPECT_FALSE(results.truncated);

  ProcessLimits few_processes;
  few_processes.max_processes = 4;
  const ProcessScan processes = Scan(proc, few_processes);
  EXPECT_EQ(processes.scanned, 4u);
  EXPECT_TRUE(processes.truncated);

  ProcessLimits few_fds;
  few_fds.max_fds_per_process = 2;
  EXPECT_EQ(Scan(proc, few_fds).fd_limited, 1u);  // pid 6 has three

  ProcessLimits small_files;
  small_files.max_file_bytes = 8;
  proc.Write("1/cmdline", "python3\0train.py\0"s);
  const ProcessScan small = Scan(proc, small_files);
  ASSERT_FALSE(small.processes.empty());
  EXPECT_EQ(small.processes[0].command, "python3");  // 8 bytes read: "python3\0"
}

// Counts `proc`'s unreadable processes as an unprivileged user would see them: directly when not
// root, else in a child that drops to nobody. -1: the check cannot run here.
int UnreadableAsUnprivileged(const FakeProc& proc, std::size_t* found) {
  if (::geteuid() != 0) {
    const ProcessScan scan = Scan(proc);
    *found = scan.processes.size();
    return static_cast<int>(scan.unreadable);
  }
  fs::permissions(proc.root(), fs::perms::all & ~fs::perms::others_write & ~fs::perms::group_write);
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(99);
    Result<ProcessScan> scan = ScanProcesses(proc.root());
    if (!scan.ok()) _exit(98);
    _exit(static_cast<int>(scan->unreadable * 10 + scan->processes.size()));
  }
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  const int code = WEXITSTATUS(status);
  if (code >= 98) return -1;
  *found = static_cast<std::size_t>(code % 10);
  return code / 10;
}

TEST(ProcessesScan, AnotherUsersDescriptorsAreCountedNotErrors) {
  FakeProc proc;
  proc.Link("20", 3, "/dev/neuron0");
  proc.Link("21", 3, "/dev/neuron1");
  fs::permissions(fs::path(proc.root()) / "21" / "fd", fs::perms::none);
  std::size_t found = 0;
  const int unreadable = UnreadableAsUnprivileged(proc, &found);
  if (unreadable < 0) GTEST_SKIP() << "running as root and cannot drop privileges";
  EXPECT_EQ(unreadable, 1);
  EXPECT_EQ(found, 1u);
}

TEST(ProcessesScan, ProcRootErrors) {
  Result<ProcessScan> missing = ScanProcesses("/nonexistent/neuronmon-proc");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "/nonexistent/neuronmon-proc: cannot open: No such file or directory");
}

TEST(ProcessesScan, RealProcReads) {
  if (!fs::exists("/proc/self/fd")) GTEST_SKIP() << "no /proc";
  Result<ProcessScan> scan = ScanProcesses("/proc");
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  EXPECT_GT(scan->scanned, 0u);  // at least this test
}

}  // namespace
}  // namespace neuronmon::neurondev

namespace neuronmon::neurondev {
namespace {

// `count` descriptors of pid `pid` that are not devices, then one that is when `device` >= 0.
void Descriptors(const FakeProc& proc, int pid, int count, int device = -1) {
  for (int fd = 0; fd < count; ++fd) proc.Link(std::to_string(pid), fd, "/dev/null");
  if (device >= 0) proc.Link(std::to_string(pid), count, "/dev/neuron" + std::to_string(device));
}

MonoTime Frozen() { return MonoTime{}; }

// A host whose processes hold many descriptors costs each sample no more than its budget: the scan
// goes on over several Steps, the last complete result standing meanwhile.
TEST(ProcessScanner, SpreadsAScanOverStepsWithinTheDescriptorBudget) {
  FakeProc proc;
  for (int pid = 100; pid < 110; ++pid) Descriptors(proc, pid, 99);
  Descriptors(proc, 110, 99, 3);
  ProcessLimits limits;
  limits.max_fds_per_sample = 250;
  ProcessScanner scanner(proc.root(), limits, "", Frozen);
  int steps = 1;
  while (!scanner.Step()) {
    ++steps;
    EXPECT_TRUE(scanner.in_progress());
    EXPECT_TRUE(scanner.result().processes.empty());  // no complete scan yet
    ASSERT_LT(steps, 20);
  }
  // 1,090 descriptors, 250 a Step (a process is left mid-way and taken up again): 5 Steps.
  EXPECT_EQ(steps, 5);
  EXPECT_EQ(scanner.result().steps, 5u);
  EXPECT_EQ(scanner.result().fds_examined, 1090u);
  ASSERT_EQ(scanner.result().processes.size(), 1u);
  EXPECT_EQ(scanner.result().processes[0].pid, 110u);
  // The next scan: the result stands until it completes.
  EXPECT_FALSE(scanner.Step());
  ASSERT_EQ(scanner.result().processes.size(), 1u);
  while (!scanner.Step()) {
  }
  EXPECT_EQ(scanner.result().processes.size(), 1u);
}

// A process holding more descriptors than one Step may examine is taken up where the last Step
// left it: no Step goes past its budget, and the device behind its last descriptor is found.
TEST(ProcessScanner, AProcessLargerThanAStepIsExaminedOverSeveralSteps) {
  FakeProc proc;
  Descriptors(proc, 500, 349, 2);
  ProcessLimits limits;
  limits.max_fds_per_sample = 100;
  ProcessScanner scanner(proc.root(), limits, "", Frozen);
  int steps = 1;
  while (!scanner.Step()) ++steps;
  EXPECT_EQ(steps, 4);  // 350 descriptors, 100 a Step
  EXPECT_EQ(scanner.result().fd_limited, 0u);
  ASSERT_EQ(scanner.result().processes.size(), 1u);
  EXPECT_EQ(scanner.result().processes[0].devices, std::vector<std::uint32_t>{2});
}

// The time budget is checked between processes, by the clock the scanner is given.
TEST(ProcessScanner, StopsAStepWhenItsTimeIsSpent) {
  FakeProc proc;
  for (int pid = 100; pid < 106; ++pid) Descriptors(proc, pid, 2);
  MonoTime now{};
  ProcessLimits limits;
  limits.max_time_per_sample = std::chrono::milliseconds(100);
  ProcessScanner scanner(proc.root(), limits, "", [&now] {
    now += std::chrono::milliseconds(30);  // every look at the clock costs 30 ms
    return now;
  });
  int steps = 1;
  while (!scanner.Step()) ++steps;
  // The clock reads 30 ms at a Step's start, then 60, 90 and 120 before its first three
  // processes (within 100 ms), then 150: three processes a Step.
  EXPECT_EQ(steps, 2);
  EXPECT_EQ(scanner.result().scanned, 6u);
}

// One user's descriptors cannot crowd out the others': past its share of a scan, its processes
// are skipped and counted, and what the last scan found of them stands while each pid is still
// the same process.
TEST(ProcessScanner, EachUidsShareOfAScanIsBounded) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the fabricated processes owners";
  FakeProc proc;
  const auto own = [&](int pid, uid_t uid) {
    ASSERT_EQ(::lchown((proc.root() + "/" + std::to_string(pid)).c_str(), uid, 0), 0);
  };
  for (int pid = 200; pid < 210; ++pid) {
    Descriptors(proc, pid, 150, pid == 201 ? 5 : -1);  // the hostile user's, one holding ND5
    own(pid, 4242);
  }
  Descriptors(proc, 300, 10, 1);  // another user's training process
  own(300, 1000);
  for (int pid : {200, 201, 300}) {
    proc.Write(std::to_string(pid) + "/stat", std::to_string(pid) +
                                                  " (python) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 "
                                                  "1 0 555 0 0\n");
  }
  ProcessLimits limits;
  limits.max_fds_per_uid = 400;
  ProcessScanner scanner(proc.root(), limits, "", Frozen);
  ASSERT_TRUE(scanner.Step());
  ProcessScan scan = scanner.result();
  // 4242: 150 + 151 + 99 (cut at its share), then seven skipped.
  EXPECT_EQ(scan.uid_limited, 7u);
  EXPECT_EQ(scan.fds_examined, 400u + 11u);
  ASSERT_EQ(scan.processes.size(), 2u);
  EXPECT_EQ(scan.processes[0].pid, 201u);
  EXPECT_EQ(scan.processes[1].pid, 300u);
  // A scan that reaches pid 201 only after the share is spent keeps what the last one found.
  Descriptors(proc, 199, 400);
  own(199, 4242);
  ASSERT_TRUE(scanner.Step());
  scan = scanner.result();
  EXPECT_EQ(scan.uid_limited, 10u);
  ASSERT_EQ(scan.processes.size(), 2u);
  EXPECT_EQ(scan.processes[0].pid, 201u);
  EXPECT_EQ(scan.processes[0].devices, std::vector<std::uint32_t>{5});
  // ... while it is the same process: started at another time, it is another one.
  proc.Write("201/stat", "201 (python) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 999 0 0\n");
  ASSERT_TRUE(scanner.Step());
  ASSERT_EQ(scanner.result().processes.size(), 1u);
  EXPECT_EQ(scanner.result().processes[0].pid, 300u);
}

}  // namespace
}  // namespace neuronmon::neurondev
