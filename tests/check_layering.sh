#!/usr/bin/env bash
# Checks DESIGN.md's "must not use" column: which folders' code may include which.
set -uo pipefail
cd "$1"
bad=0
# deny <folder> <regex of forbidden includes> <why> [<regex of allowed exceptions>]
deny() {
  local dir=$1 pattern=$2 why=$3 allow=${4:-^$}
  [ -d "$dir" ] || return 0
  local hits
  hits=$(grep -rnE "^#include [<\"]($pattern)" "$dir" --include='*.h' --include='*.cc' |
    grep -vE "$allow" || true)
  if [ -n "$hits" ]; then
    echo "$why:"
    echo "$hits"
    bad=1
  fi
}
# deny_root: as deny, for the files directly in <folder>, not its subfolders.
deny_root() {
  local dir=$1 pattern=$2 why=$3
  local hits
  hits=$(grep -nE "^#include [<\"]($pattern)" "$dir"/*.h "$dir"/*.cc 2>/dev/null || true)
  if [ -n "$hits" ]; then
    echo "$why:"
    echo "$hits"
    bad=1
  fi
}
deny proto 'boost/|ncurses|curses\.h|simdev/|daemon/|client/|exporter/|tui/' "proto/ uses only the standard library and protobuf (and OpenSSL in proto/tls)"
deny simdev 'boost/|ncurses|curses\.h|thread>|daemon/|client/|exporter/|tui/' "simdev/ is pure: no Asio, threads, or higher layers"
deny neurondev 'boost/|ncurses|curses\.h|simdev/|daemon/|client/|exporter/|tui/' "neurondev/ reads the host: no Asio, no simulator, no higher layers"
deny daemon/core 'boost/asio|boost/beast|ncurses|curses\.h|daemon/server/|client/|exporter/|tui/' "daemon/core is pure: no Asio, no clients"
# daemon/core's rooms, bottom to top: report, analysis, jobs, the root (DaemonCore, backend choice,
# host reader), then metrics and archive, which use the root and not each other, and config,
# which embeds the options of them all (and the servers').
core_root='daemon/core/[a-z_]+\.h'
deny daemon/core/report "daemon/core/(analysis|metrics|archive|config)/|$core_root|simdev/|neurondev/" "daemon/core/report/ is the lowest room: snapshots to reports only"
deny daemon/core/analysis "daemon/core/(metrics|archive|config)/|$core_root|simdev/|neurondev/" "daemon/core/analysis/ uses only the report room"
deny daemon/core/jobs "daemon/core/(metrics|archive|config)/|$core_root|simdev/|neurondev/" "daemon/core/jobs/ uses only the report and analysis rooms"
deny_root daemon/core 'daemon/core/(metrics|archive|config)/' "daemon/core's root must not use the metrics, archive or config rooms above it"
deny daemon/core/metrics 'daemon/core/(archive|config)/|simdev/|neurondev/' "daemon/core/metrics/ must not use the archive or config rooms"
deny daemon/core/archive 'daemon/core/(metrics|config)/|simdev/|neurondev/' "daemon/core/archive/ must not use the metrics or config rooms"
deny daemon 'client/|exporter/|tui/|ncurses|curses\.h' "daemon/ must not use client, exporter or tui"
deny client 'daemon/|exporter/|tui/|ncurses' "client/ uses only the daemon's embedding entry point, in embedded_simulator.cc" '^client/embedded_simulator\.cc:[0-9]+:#include "daemon/(server/embedded_daemon|core/archive/replay)\.h"'
deny exporter 'tui/|ncurses|curses\.h|daemon/' "exporter/ must not use tui or daemon internals"
deny tui 'daemon/|exporter/' "tui/ must not reach into the daemon or exporter"
# Only tui/ncurses_canvas.cc may include ncurses.
if [ -d tui ]; then
  hits=$(grep -rlnE '^#include [<"](ncurses|curses)' tui | grep -v 'tui/ncurses_canvas.cc' || true)
  if [ -n "$hits" ]; then echo "only tui/ncurses_canvas.cc may include ncurses: $hits"; bad=1; fi
fi
# gRPC stays inside neurondev's client of the kubelet (pod_resources.cc); headers expose plain
# structs. Tests (the fake kubelet) may use it.
hits=$(grep -rlnE '^#include [<"](grpcpp/|grpc/|grpc\+\+/|kubelet/podresources/)' \
  --include='*.h' --include='*.cc' proto simdev neurondev daemon client exporter tui bench 2>/dev/null |
  grep -v '^neurondev/pod_resources\.cc$' || true)
if [ -n "$hits" ]; then echo "only neurondev/pod_resources.cc may include gRPC: $hits"; bad=1; fi
[ $bad -eq 0 ] && echo "layering ok"
exit $bad
