// fake_neuron_monitor: a stand-in for AWS's neuron-monitor in MonitorChild's tests. Like the real
// one it prints one line per period on stdout and never exits on its own; arguments make it
// misbehave:
//   -c CONFIG         accepted and ignored (neuron-monitor's config file argument)
//   --period-ms N     time between lines (default 1000)
//   --replay FILE     print FILE's non-empty lines in turn, looping (default: {"seq":N} lines)
//   --no-loop         with --replay: end after the file's last line, as --count does
//   --count K         end after K lines: exit with --exit-code C (default 0) or --signal S
//   --hang-after K    after K lines print nothing more and stay alive
//   --silent          print nothing and stay alive (--hang-after 0)
//   --garbage         print lines that are not JSON
//   --huge N          print one line of N bytes first
//   --stderr TEXT     write TEXT and a newline to stderr first
//   --ignore-term     ignore SIGTERM (only SIGKILL ends it)
//   --echo ARG        print ARG as a line first (repeatable)
//   --env NAME        print NAME's value, or "(unset)", as a line first (repeatable)
//   --count-fds       print "fds N" first: N = open descriptors other than 0, 1 and 2
// An unknown argument is an error (exit 64), so a test cannot pass by accident.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

struct Options {
  long period_ms = 1000;
  std::vector<std::string> replay;
  bool loop = true;
  long count = -1;
  long hang_after = -1;
  int exit_code = 0;
  int signal = 0;
  bool garbage = false;
  long huge = 0;
  std::string stderr_text;
  bool ignore_term = false;
  std::vector<std::string> first_lines;
  bool count_fds = false;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr, "fake_neuron_monitor: %s\n", why.c_str());
  std::exit(64);
}

void WriteAll(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) std::exit(1);
    done += static_cast<std::size_t>(n);
  }
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  if (!in) Usage("cannot read " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  if (lines.empty()) Usage(path + " has no lines");
  return lines;
}

int OpenFdsBeyondStdio() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    if (entry->d_name[0] != '.' && fd > 2 && fd != ::dirfd(dir)) ++count;
  }
  ::closedir(dir);
  return count;
}

Options Parse(int argc, char** argv) {
  Options o;
  const std::map<std::string, std::function<void()>> flags = {
      {"--no-loop", [&] { o.loop = false; }},
      {"--silent", [&] { o.hang_after = 0; }},
      {"--garbage", [&] { o.garbage = true; }},
      {"--ignore-term", [&] { o.ignore_term = true; }},
      {"--count-fds", [&] { o.count_fds = true; }},
  };
  const std::map<std::string, std::function<void(const std::string&)>> options = {
      {"-c", [](const std::string&) {}},
      {"--period-ms", [&](const std::string& v) { o.period_ms = std::stol(v); }},
      {"--replay", [&](const std::string& v) { o.replay = ReadLines(v); }},
      {"--count", [&](const std::string& v) { o.count = std::stol(v); }},
      {"--exit-code", [&](const std::string& v) { o.exit_code = std::stoi(v); }},
      {"--signal", [&](const std::string& v) { o.signal = std::stoi(v); }},
      {"--hang-after", [&](const std::string& v) { o.hang_after = std::stol(v); }},
      {"--huge", [&](const std::string& v) { o.huge = std::stol(v); }},
      {"--stderr", [&](const std::string& v) { o.stderr_text = v; }},
      {"--echo", [&](const std::string& v) { o.first_lines.push_back(v); }},
      {"--env",
       [&](const std::string& v) {
         const char* value = std::getenv(v.c_str());
         o.first_lines.push_back(value != nullptr ? value : "(unset)");
       }},
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (const auto flag = flags.find(arg); flag != flags.end()) {
      flag->second();
    } else if (const auto option = options.find(arg); option != options.end()) {
      if (i + 1 >= argc) Usage(arg + " needs a value");
      try {
        option->second(argv[++i]);
      } catch (const std::exception&) {
        Usage("bad value for " + arg + ": " + argv[i]);
      }
    } else {
      Usage("unknown argument " + arg);
    }
  }
  if (!o.replay.empty() && !o.loop && o.count < 0) o.count = static_cast<long>(o.replay.size());
  return o;
}

[[noreturn]] void End(const Options& o) {
  if (o.signal != 0) {
    ::signal(o.signal, SIG_DFL);
    ::raise(o.signal);
  }
  std::exit(o.exit_code);
}

[[noreturn]] void Hang() {
  for (;;) ::pause();
}

void SleepMs(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  while (::nanosleep(&ts, &ts) != 0) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  if (o.ignore_term) ::signal(SIGTERM, SIG_IGN);
  if (!o.stderr_text.empty()) WriteAll(STDERR_FILENO, o.stderr_text + "\n");
  if (o.count_fds) WriteAll(STDOUT_FILENO, "fds " + std::to_string(OpenFdsBeyondStdio()) + "\n");
  for (const std::string& line : o.first_lines) WriteAll(STDOUT_FILENO, line + "\n");
  if (o.huge > 0)
    WriteAll(STDOUT_FILENO, std::string(static_cast<std::size_t>(o.huge), 'x') + "\n");
  for (long seq = 0;; ++seq) {
    if (seq == o.count) End(o);
    if (seq == o.hang_after) Hang();
    std::string line = "{\"seq\":" + std::to_string(seq) + "}";
    if (o.garbage) line = "this is not JSON " + std::to_string(seq);
    if (!o.replay.empty()) line = o.replay[static_cast<std::size_t>(seq) % o.replay.size()];
    WriteAll(STDOUT_FILENO, line + "\n");
    SleepMs(o.period_ms);
  }
}
