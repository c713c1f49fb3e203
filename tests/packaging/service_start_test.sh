#!/usr/bin/env bash
# Starts the installed neuron-monitord the way the installed neuron-monitord.service would — its
# ExecStart= command line with EnvironmentFile= and Environment= expanded, its UMask=, and the
# environment systemd gives a Type=notify service with RuntimeDirectory= and WatchdogSec= — but
# with temp paths: the runtime directory, the notification socket, the conffile of the temp
# install, a free metrics port. Then: READY=1 arrives, the socket has mode 0660, the installed
# neuron-ls lists the devices through it, WATCHDOG=1 arrives, SIGHUP (ExecReload=) brings
# RELOADING=1 then READY=1, and SIGTERM brings STOPPING=1 and exit status 0 within 2 seconds.
#   service_start_test.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
build=$1
here=$(cd "$(dirname "$0")" && pwd)

nm_install "$build"
unit=$(find "$nm_root" -name neuron-monitord.service | head -1)
[ -n "$unit" ] || nm_fail "no neuron-monitord.service installed"
setting() { nm_unit_setting "$unit" "$1"; }
[ "$(setting Type)" = notify ] || nm_fail "Type= is not notify"
[ -n "$(setting RuntimeDirectory)" ] || nm_fail "no RuntimeDirectory="
[ -n "$(setting WatchdogSec)" ] || nm_fail "no WatchdogSec="
nm_unit_exec "$unit"
[ -n "${nm_env[NEURON_MONITORD_OPTS]+set}" ] ||
  nm_fail "the EnvironmentFile= does not set NEURON_MONITORD_OPTS"
binary=$nm_root${nm_command[0]}
echo "ExecStart: ${nm_command[*]}"

# Temp paths instead of the system's.
run=$nm_tmp/run
runtime_mode=$(setting RuntimeDirectoryMode)
mkdir -m "${runtime_mode:-0755}" "$run"
port=$(nm_free_port)
args=("${nm_command[@]:1}" --config "$nm_root/etc/neuron-monitor/neuron-monitord.json"
  --metrics-listen "127.0.0.1:$port")
notify=$nm_tmp/notify.sock events=$nm_tmp/notify.log log=$nm_tmp/daemon.log

python3 "$here/notify_listener.py" "$notify" "$events" 60 &
listener=$!
nm_cleanup_hooks+=("kill $listener 2>/dev/null")
wait_for() { nm_wait_line "$events" "$1" "$2"; }
wait_for LISTENING=1 10 || nm_fail "the notification listener did not start"

# As systemd starts it: a clean environment plus what the unit asks for. The test watchdog is
# 2 s rather than the unit's $(setting WatchdogSec), so that a keep-alive arrives quickly.
# LoadCredential=token:... as systemd does it: a private copy in $CREDENTIALS_DIRECTORY.
[ "$(setting LoadCredential)" = token:/etc/neuron-monitor/token ] ||
  nm_fail "the unit does not pass /etc/neuron-monitor/token as the credential \"token\""
credentials=$nm_tmp/credentials
mkdir -m 0700 "$credentials"
(umask 0377 && echo "service-test-token" >"$credentials/token")
nm_service_env
# StateDirectory= as systemd passes it, in the temp dir: the archive and incidents go there, not
# to /var/lib/neuron-monitor.
daemon_env=("${nm_daemon_env[@]}" "RUNTIME_DIRECTORY=$run" "STATE_DIRECTORY=$nm_tmp/state"
  "NOTIFY_SOCKET=$notify"
  "CREDENTIALS_DIRECTORY=$credentials" WATCHDOG_USEC=2000000)
umask=$(setting UMask)
(
  umask "${umask:-0022}"
  exec env -i "${daemon_env[@]}" "$binary" "${args[@]}"
) >"$log" 2>&1 &
daemon=$!
nm_cleanup_hooks+=("kill -9 $daemon 2>/dev/null")

if ! wait_for READY=1 30; then
  cat "$log" >&2
  nm_fail "no READY=1 within 30 s"
fi
kill -0 $daemon || nm_fail "the daemon exited after READY=1"
echo "ok: READY=1 ($(grep -m1 '^STATUS=' "$events" || echo 'no STATUS='))"

socket=$run/neuron-monitord.sock
[ -S "$socket" ] || nm_fail "no socket at \$RUNTIME_DIRECTORY/neuron-monitord.sock"
mode=$(stat -c %a "$socket")
[ "$mode" = 660 ] || nm_fail "the socket has mode $mode, not 660"
echo "ok: listening on \$RUNTIME_DIRECTORY/neuron-monitord.sock, mode $mode"
for _ in $(seq 50); do ls "$nm_tmp"/state/archive/*.nmrec >/dev/null 2>&1 && break; sleep 0.1; done
ls "$nm_tmp"/state/archive/*.nmrec >/dev/null 2>&1 ||
  nm_fail "the daemon does not record to \$STATE_DIRECTORY/archive"
grep -qF "auth token read from $credentials/token" "$log" ||
  nm_fail "the daemon did not take the token credential: $(cat "$log")"
echo "ok: the token comes from \$CREDENTIALS_DIRECTORY"

"$nm_root/usr/bin/neuron-ls" --socket "$socket" >"$nm_tmp/ls.txt" 2>&1 ||
  nm_fail "neuron-ls failed: $(cat "$nm_tmp/ls.txt")"
grep -q '^instance-type: trn2.48xlarge$' "$nm_tmp/ls.txt" || nm_fail "neuron-ls: $(cat "$nm_tmp/ls.txt")"
devices=$(grep -cE '^\| [0-9]+ +\|' "$nm_tmp/ls.txt" || true)
[ "$devices" -eq 16 ] || nm_fail "neuron-ls listed $devices devices, not 16: $(cat "$nm_tmp/ls.txt")"
echo "ok: neuron-ls through the socket lists $devices devices"

# Once the metrics listener exists, the unit's daemon must answer on it.
if grep -q "127.0.0.1:$port" "$log"; then
  python3 - "$port" <<'PY' || nm_fail "no /metrics on 127.0.0.1:$port"
import sys, urllib.request
body = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=10).read()
sys.exit(0 if b"neuron" in body else 1)
PY
  echo "ok: /metrics answers on the metrics listener"
fi

wait_for WATCHDOG=1 10 || nm_fail "no WATCHDOG=1 within 10 s of a 2 s watchdog"
echo "ok: WATCHDOG=1"

# ExecReload= sends SIGHUP.
# shellcheck disable=SC2016 # a literal $MAINPID
grep -q '^ExecReload=/bin/kill -HUP \$MAINPID$' "$unit" || nm_fail "ExecReload= does not send SIGHUP"
readies=$(grep -cx READY=1 "$events")
kill -HUP $daemon
wait_for RELOADING=1 10 || nm_fail "no RELOADING=1 after SIGHUP"
deadline=$((SECONDS + 10))
until [ "$(grep -cx READY=1 "$events")" -gt "$readies" ]; do
  [ $SECONDS -lt $deadline ] || nm_fail "no READY=1 after the reload"
  sleep 0.05
done
echo "ok: SIGHUP: RELOADING=1, then READY=1"

start=$(date +%s%N)
kill -TERM $daemon
status=0
wait $daemon || status=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
[ $status -eq 0 ] || { cat "$log" >&2; nm_fail "exit status $status after SIGTERM"; }
[ $elapsed_ms -le 2000 ] || nm_fail "took $elapsed_ms ms to stop (at most 2000)"
wait_for STOPPING=1 5 || nm_fail "no STOPPING=1"
[ ! -e "$socket" ] || nm_fail "the socket file is left behind"
echo "ok: SIGTERM: STOPPING=1, exit 0 after $elapsed_ms ms, socket removed"
