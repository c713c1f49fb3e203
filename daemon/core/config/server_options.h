// The options of the daemon's servers (daemon/server): the stream server's limits, the unix
// listener's, and the metrics endpoint's. Declared here, below the config that embeds them
// (config.h), so each default is written once; the servers enforce them (docs/security.md).
// Plain values; thread-compatible.
#pragma once

#include <cstddef>
#include <string>

#include "proto/common/clock.h"

namespace neuronmon::daemon {

// What stream clients may cost: the config's `limits` keys for them (config/settings.cc and
// docs/security.md say more).
struct ServerLimits {
  std::size_t max_clients = 2048;
  std::size_t max_clients_per_uid = 256;  // per uid (unix) or per address (TCP)
  std::size_t max_handshaking = 64;       // connections not yet welcomed
  std::size_t queue_depth = 64;           // report frames queued per client
  std::size_t max_queue_bytes = 4 << 20;  // all frames queued per client
  std::size_t max_control_frames = 64;    // notices and errors queued per client
  std::size_t max_queued_bytes_total = 64 << 20;
  std::size_t max_tag_filter_bytes = 256;
  double filter_compiles_per_second = 5;  // new tag filters compiled per uid or address
  Nanos handshake_timeout = std::chrono::seconds(5);
  Nanos subscribe_timeout = std::chrono::seconds(30);  // 0: never
  Nanos subscribe_interval = std::chrono::seconds(1);
  Nanos write_timeout = std::chrono::seconds(10);
  Nanos idle_timeout{0};  // 0: never
  Nanos heartbeat_interval = std::chrono::seconds(5);
  bool operator==(const ServerLimits&) const = default;
};

// The unix socket listener (the config's listeners.unix, with the default path resolved).
struct UnixListenOptions {
  std::string path;
  unsigned mode = 0660;
  std::string group;  // empty: keep the daemon's group
  bool operator==(const UnixListenOptions&) const = default;
};

// The metrics endpoint's answers (server/metrics_handler.h); token and version are set at start.
struct MetricsHandlerOptions {
  std::size_t max_scrapes = 16;                 // /metrics replies being built or written at once
  std::size_t max_probes = 4;                   // /healthz and /readyz replies being written
  std::size_t max_event_streams = 1024;         // long-lived /events replies at once
  Nanos rate_window = std::chrono::seconds(5);  // ratios and percentiles (neuron-monitor's period)
  std::string token;                            // what a listener that requires one expects
  std::string version;                          // neuron_monitord_build_info
  bool operator==(const MetricsHandlerOptions&) const = default;
};

// The metrics endpoint's connections (server/http_server.h); the config's `limits.metrics_*`.
struct HttpServerOptions {
  MetricsHandlerOptions handler;
  std::size_t max_connections = 64;
  std::size_t max_pending = 16;  // connections without an answered, authorized request yet
  std::size_t max_header_bytes = 8 * 1024;
  std::size_t max_body_bytes = 8 * 1024;
  Nanos request_timeout = std::chrono::seconds(10);  // from accept or the request's first byte
  Nanos idle_timeout = std::chrono::minutes(2);      // keep-alive wait for the next request
  Nanos write_timeout = std::chrono::seconds(10);
  Nanos connection_lifetime = std::chrono::minutes(10);  // then closed after the current reply
  std::size_t max_requests = 1000;                       // per connection
  std::size_t send_buffer_bytes = 0;  // SO_SNDBUF of each connection; 0: the kernel's autotuning
  // Long-lived /events replies (follow): each ends after this (its client resumes), and has at
  // most `event_stream_max_bytes` unread at once, all of them `event_streams_max_bytes_total`
  // (the stream clients' limits.max_queue_bytes and max_queued_bytes_total); an idle
  // Server-Sent Events stream gets a comment every `event_stream_heartbeat`.
  Nanos event_stream_lifetime = std::chrono::hours(1);
  std::size_t event_stream_max_bytes = 4 << 20;
  std::size_t event_streams_max_bytes_total = 64 << 20;
  Nanos event_stream_heartbeat = std::chrono::seconds(5);
  bool operator==(const HttpServerOptions&) const = default;
};

}  // namespace neuronmon::daemon
