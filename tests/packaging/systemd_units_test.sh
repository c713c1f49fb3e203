#!/usr/bin/env bash
# The installed units pass `systemd-analyze verify` (no warning at all, man page found) and
# neuron-monitord.service rates an overall exposure of at most 2.0 in
# `systemd-analyze security --offline=yes`.
#   systemd_units_test.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
build=$1
max_exposure=2.0

nm_install "$build"
units=$(cd "$nm_root" && find . -name neuron-monitord.service -printf '%h')
[ -n "$units" ] || nm_fail "no neuron-monitord.service installed"
units=$nm_root/${units#./}

# verify --root checks ExecStart= binaries and Documentation=man: pages inside the root, and
# needs the targets the units hook into: give the root the host's targets and kill(1).
grep -q '^ExecStart=/usr/sbin/neuron-monitord ' "$units/neuron-monitord.service" ||
  nm_fail "ExecStart= does not run /usr/sbin/neuron-monitord"
[ -x "$nm_root/usr/sbin/neuron-monitord" ] || nm_fail "the unit's binary is not installed"
mkdir -p "$nm_root/bin" "$nm_root/usr/lib/systemd/system"
cp /bin/kill "$nm_root/bin/"
cp /lib/systemd/system/*.target "$nm_root/usr/lib/systemd/system/"
out=$(MANPATH=$nm_root/usr/share/man SYSTEMD_LOG_COLOR=0 \
  systemd-analyze verify --root="$nm_root" neuron-monitord.service neuron-monitord.socket 2>&1) ||
  nm_fail "systemd-analyze verify failed: $out"
[ -z "$out" ] || nm_fail "systemd-analyze verify complained: $out"
echo "ok: systemd-analyze verify: neuron-monitord.service and neuron-monitord.socket are clean"

report=$(systemd-analyze security --offline=yes --root="$nm_root" --no-pager \
  neuron-monitord.service 2>&1) || nm_fail "systemd-analyze security failed: $report"
overall=$(sed -n 's/.*Overall exposure level for neuron-monitord.service: \([0-9.]*\).*/\1/p' \
  <<<"$report")
[ -n "$overall" ] || nm_fail "no overall exposure level in: $report"
# The settings still open: every row with a non-zero exposure.
awk '$NF ~ /^[0-9.]+$/ && $NF + 0 > 0' <<<"$report"
awk -v e="$overall" -v m="$max_exposure" 'BEGIN { exit !(e <= m) }' ||
  nm_fail "exposure $overall is above $max_exposure (the rows above are what is left open)"
echo "ok: systemd-analyze security: exposure $overall (at most $max_exposure)"

# The socket unit and the service agree on where the socket is and who owns it.
grep -qx 'ListenStream=/run/neuron-monitor/neuron-monitord.sock' "$units/neuron-monitord.socket" ||
  nm_fail "the socket unit does not listen on /run/neuron-monitor/neuron-monitord.sock"
grep -qx 'RuntimeDirectory=neuron-monitor' "$units/neuron-monitord.service" ||
  nm_fail "the service has no RuntimeDirectory=neuron-monitor"
# The archive: ProtectSystem=strict leaves the daemon only its state directory to write to.
grep -qx 'StateDirectory=neuron-monitor' "$units/neuron-monitord.service" ||
  nm_fail "the service has no StateDirectory=neuron-monitor for its archive"
for key in SocketUser SocketGroup; do
  grep -qx "$key=neuron-monitor" "$units/neuron-monitord.socket" || nm_fail "$key is not neuron-monitor"
done
grep -q '^u neuron-monitor ' "$nm_root/usr/lib/sysusers.d/neuron-monitor.conf" ||
  nm_fail "sysusers.d does not create the neuron-monitor user"
echo "ok: socket, runtime directory and sysusers.d user agree"

# systemd-sysusers, run on an empty temp root, creates the user and its group from the file.
sysroot=$nm_tmp/sysusers-root
mkdir -p "$sysroot/etc"
: >"$sysroot/etc/passwd"
: >"$sysroot/etc/group"
systemd-sysusers --root="$sysroot" "$nm_root/usr/lib/sysusers.d/neuron-monitor.conf" \
  >"$nm_tmp/sysusers.log" 2>&1 || nm_fail "systemd-sysusers failed: $(cat "$nm_tmp/sysusers.log")"
grep -qE '^neuron-monitor:x:[0-9]+:[0-9]+:[^:]*:/nonexistent:/usr/sbin/nologin$' "$sysroot/etc/passwd" ||
  nm_fail "sysusers.d made: $(cat "$sysroot/etc/passwd")"
grep -q '^neuron-monitor:x:' "$sysroot/etc/group" || nm_fail "sysusers.d made no neuron-monitor group"
echo "ok: systemd-sysusers creates the neuron-monitor user and group"
