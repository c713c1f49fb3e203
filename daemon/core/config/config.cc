#include "daemon/core/config/config.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "proto/common/json_reader.h"
#include "proto/common/state_path.h"

namespace neuronmon::daemon {
namespace {

constexpr const char* kHostNameChars =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-";
constexpr const char* kMissingPort = "missing port (use HOST:PORT, e.g. \"127.0.0.1:9413\")";

constexpr std::pair<LogLevel, const char*> kLogLevels[] = {
    {LogLevel::kError, "error"},
    {LogLevel::kWarn, "warn"},
    {LogLevel::kInfo, "info"},
    {LogLevel::kDebug, "debug"},
};

// ---- Addresses.

// Why `host` (no brackets) is not an IPv4 address or a host name; empty when it is one.
std::string HostProblem(std::string_view host) {
  const std::string h(host);
  if (h.find_first_not_of("0123456789.") == std::string::npos) {
    in_addr v4;
    return inet_pton(AF_INET, h.c_str(), &v4) == 1 ? "" : "not a valid IPv4 address";
  }
  bool ok = h.size() <= 253;
  std::size_t start = 0;
  while (ok && start <= h.size()) {
    std::size_t end = h.find('.', start);
    if (end == std::string::npos) end = h.size();
    const std::string_view label = host.substr(start, end - start);
    ok = !label.empty() && label.size() <= 63 && label.front() != '-' && label.back() != '-' &&
         label.find_first_not_of(kHostNameChars) == std::string_view::npos;
    start = end + 1;
  }
  return ok ? "" : "not a valid host name";
}

std::optional<std::uint16_t> ParsePort(std::string_view text) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value < 1 || value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

// Splits "[v6]:port" or "host:port"; the error text is what is wrong, without the quote.
Result<std::pair<std::string_view, std::string_view>> SplitHostPort(std::string_view text) {
  std::string_view host;
  std::string_view rest;
  if (text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return Status::InvalidArgument("missing \"]\"");
    host = text.substr(1, close - 1);
    rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      return Status::InvalidArgument("expected \":PORT\" after \"]\"");
    }
  } else {
    const std::size_t colon = text.rfind(':');
    host = text.substr(0, colon == std::string_view::npos ? text.size() : colon);
    if (host.find(':') != std::string_view::npos) {
      return Status::InvalidArgument("put an IPv6 address in brackets, e.g. \"[::1]:9413\"");
    }
    rest = colon == std::string_view::npos ? "" : text.substr(colon);
  }
  if (rest.size() <= 1) return Status::InvalidArgument(kMissingPort);
  return std::pair(host, rest.substr(1));
}

}  // namespace

DaemonConfig DefaultConfig() { return DaemonConfig{}; }

namespace {

std::string InStateDirectory(const char* name) {
  std::string state = DefaultStateDirectory();
  return state.empty() ? state : state + "/" + name;
}

}  // namespace

std::string DefaultArchiveDirectory() { return InStateDirectory("archive"); }
std::string DefaultIncidentDirectory() { return InStateDirectory("incidents"); }

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  const auto fail = [text](std::string_view what) {
    return Status::InvalidArgument("\"" + std::string(text) + "\": " + std::string(what));
  };
  if (text.empty()) return fail("empty (use HOST:PORT, e.g. \"127.0.0.1:9413\")");
  Result<std::pair<std::string_view, std::string_view>> split = SplitHostPort(text);
  if (!split.ok()) return fail(split.status().message());
  const auto [host, port_text] = *split;
  if (text.front() == '[') {
    in6_addr v6;
    if (inet_pton(AF_INET6, std::string(host).c_str(), &v6) != 1) {
      return fail("not a valid IPv6 address");
    }
  } else if (host.empty()) {
    return fail("missing host (e.g. 0.0.0.0 for every interface)");
  } else if (std::string problem = HostProblem(host); !problem.empty()) {
    return fail(problem);
  }
  const std::optional<std::uint16_t> port = ParsePort(port_text);
  if (!port.has_value()) return fail("port must be a number from 1 to 65535");
  return ListenAddress{std::string(host), *port};
}

std::string FormatListenAddress(const ListenAddress& address) {
  const bool v6 = address.host.find(':') != std::string::npos;
  return (v6 ? "[" + address.host + "]" : address.host) + ":" + std::to_string(address.port);
}

bool LoopbackTcpRequiresToken(const DaemonConfig& config) {
  const UnixListenerConfig& u = config.listeners.unix_socket;
  return !(u.enabled &&
           (u.options.mode & 0002) != 0);  // connecting to a unix socket needs write access
}

bool TcpRequiresToken(const DaemonConfig& config) {
  if (!config.listeners.tcp) return false;
  return !IsLoopback(*config.listeners.tcp) || LoopbackTcpRequiresToken(config);
}

std::vector<std::string> PlaintextWarnings(const DaemonConfig& config) {
  std::vector<std::string> out;
  const ListenersConfig& l = config.listeners;
  if (l.tcp && !IsLoopback(*l.tcp) && !l.tcp_tls.enabled()) {
    out.push_back("listeners.tcp.address " + FormatListenAddress(*l.tcp) +
                  " is off loopback without TLS (listeners.tcp.allow_plaintext): the token and "
                  "every figure cross the network in clear");
  }
  if (l.metrics && !IsLoopback(*l.metrics) && !l.metrics_tls.enabled()) {
    out.push_back("listeners.metrics.address " + FormatListenAddress(*l.metrics) +
                  " is off loopback without TLS: the token and every metric cross the network "
                  "in clear; set listeners.metrics.tls (docs/security.md)");
  }
  return out;
}

bool IsLoopback(const ListenAddress& address) {
  std::string host = address.host;
  for (char& ch : host) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (host == "localhost") return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  if (inet_pton(AF_INET6, host.c_str(), &v6) != 1) return false;
  if (std::memcmp(&v6, &in6addr_loopback, sizeof v6) == 0) return true;
  const unsigned char* b = v6.s6_addr;  // ::ffff:127.x.y.z is IPv4 loopback in IPv6 clothes
  return std::all_of(b, b + 10, [](unsigned char x) { return x == 0; }) && b[10] == 0xff &&
         b[11] == 0xff && b[12] == 127;
}

std::string LogLevelName(LogLevel level) {
  for (const auto& [value, name] : kLogLevels) {
    if (value == level) return name;
  }
  return "info";
}

Result<LogLevel> ParseLogLevel(std::string_view name) {
  for (const auto& [value, level_name] : kLogLevels) {
    if (name == level_name) return value;
  }
  return Status::InvalidArgument("\"" + std::string(name) +
                                 "\" is not one of error, warn, info, debug");
}

Result<int> ParseFileMode(std::string_view text) {
  const auto fail = [text](std::string_view what) {
    return Status::InvalidArgument("\"" + std::string(text) + "\": " + std::string(what));
  };
  if (text.empty() || text.size() > 4 || text.find_first_not_of("01234567") != text.npos) {
    return fail("not an octal mode (use e.g. \"0660\")");
  }
  int mode = 0;
  for (char digit : text) mode = mode * 8 + (digit - '0');
  if (mode > 0777) return fail("must be 0000 to 0777");
  return mode;
}

std::string FormatFileMode(int mode) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%04o", static_cast<unsigned>(mode));
  return buffer;
}

}  // namespace neuronmon::daemon
