#!/usr/bin/env bash
# Starts the installed neuron-monitord the way neuron-monitord.socket would: a listener on the
# socket path (in a temp runtime directory) that hands its socket to the service's ExecStart=
# command on the first connection (LISTEN_FDS; systemd-socket-activate stands in for systemd).
# The first client is served through the passed socket, the daemon binds no socket of its own,
# and on SIGTERM it exits 0 leaving the socket file, which belongs to the socket unit, in place.
#   socket_activation_test.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
build=$1

command -v systemd-socket-activate >/dev/null || nm_fail "systemd-socket-activate is missing"
nm_install "$build"
service=$(find "$nm_root" -name neuron-monitord.service | head -1)
socket_unit=${service%.service}.socket
[ -f "$socket_unit" ] || nm_fail "no neuron-monitord.socket next to the service"
nm_unit_exec "$service"
listen=$(nm_unit_setting "$socket_unit" ListenStream)
[ "$(nm_unit_setting "$socket_unit" Service)" = neuron-monitord.service ] ||
  nm_fail "the socket unit does not start neuron-monitord.service"

# The socket unit's path, moved into a temp runtime directory.
run=$nm_tmp/run
mkdir -m 0750 "$run"
socket=$run/$(basename "$listen")
port=$(nm_free_port)
nm_service_env
activate_env=()
for assignment in "${nm_daemon_env[@]}" "RUNTIME_DIRECTORY=$run" "STATE_DIRECTORY=$nm_tmp/state"; do
  activate_env+=(-E "$assignment")
done
log=$nm_tmp/daemon.log
env -i PATH=/usr/bin:/bin systemd-socket-activate -l "$socket" "${activate_env[@]}" \
  "$nm_root${nm_command[0]}" "${nm_command[@]:1}" \
  --config "$nm_root/etc/neuron-monitor/neuron-monitord.json" \
  --metrics-listen "127.0.0.1:$port" >"$log" 2>&1 &
daemon=$!
nm_cleanup_hooks+=("kill -9 $daemon 2>/dev/null")
deadline=$((SECONDS + 10))
until [ -S "$socket" ]; do
  [ $SECONDS -lt $deadline ] || nm_fail "systemd-socket-activate did not listen: $(cat "$log")"
  sleep 0.05
done
inode=$(stat -c %i "$socket")

# The first connection starts the daemon, which must answer it on the passed socket.
"$nm_root/usr/bin/neuron-ls" --socket "$socket" >"$nm_tmp/ls.txt" 2>&1 ||
  nm_fail "neuron-ls through the activated socket failed: $(cat "$nm_tmp/ls.txt"; cat "$log")"
grep -q '^instance-type: ' "$nm_tmp/ls.txt" || nm_fail "neuron-ls: $(cat "$nm_tmp/ls.txt")"
grep -q "listening on unix:$socket (socket activation)" "$log" ||
  nm_fail "the daemon did not adopt the passed socket: $(cat "$log")"
[ "$(stat -c %i "$socket")" = "$inode" ] || nm_fail "the daemon replaced the passed socket"
echo "ok: the first client started the daemon and was served through the passed socket"

kill -TERM $daemon
status=0
wait $daemon || status=$?
[ $status -eq 0 ] || { cat "$log" >&2; nm_fail "exit status $status after SIGTERM"; }
[ -S "$socket" ] || nm_fail "the daemon removed the socket unit's socket file"
echo "ok: SIGTERM: exit 0, the socket unit's socket file left in place"
