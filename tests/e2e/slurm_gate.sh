#!/usr/bin/env bash
# The Slurm gate on a real one-node Slurm cluster (munged, slurmctld and slurmd in a temp dir, on
# free ports): neuron-monitord simulates the node, whose device 0 fails after 15 s. packaging/slurm's
# neuron-prolog lets job 1 run while the node is healthy; once `neuron-ls --check` says unhealthy,
# job 2's Prolog drains the node with the check's reason ("neuron-ls: ND0 failed: ...") and fails,
# so Slurm requeues job 2, held, and it never runs. neuron-healthcheck keeps the drain while the
# node is unhealthy, resumes the node once the check passes (a stand-in neuron-ls) and never
# touches an administrator's drain; the Prolog's unknown, usage and long-reason paths and the
# Epilog's drain are run by hand. Needs root (slurmd runs jobs as their user) and Debian's
# slurmctld, slurmd, slurm-client and munge (packaging/install-deps.sh test). Temp directory
# only; every process it starts is stopped, and the logs are printed when it fails.
# The Prolog and Epilog also start and end the job in the daemon's job accounting, and the Epilog
# writes job 1's Markdown report beside its output (neuron-report).
# usage: slurm_gate.sh <neuron-monitord> <neuron-ls> <source dir> <neuron-report>
set -euo pipefail
daemon=$1 ls=$2 src=$3 report=$4
slurm_dir=$src/packaging/slurm

if [ "$(id -u)" != 0 ]; then
  echo "FAIL: slurm_gate.sh must run as root (slurmctld and slurmd run as root here); CI does"
  exit 1
fi
for prog in munged slurmctld slurmd sbatch scontrol squeue sinfo; do
  if ! command -v "$prog" >/dev/null; then
    echo "FAIL: $prog is not installed: packaging/install-deps.sh test installs munge," \
      "slurmctld, slurmd and slurm-client"
    exit 1
  fi
done

tmp=$(mktemp -d)
chmod 755 "$tmp" # munged wants its socket's directory searchable by all
node=$(hostname -s)
pids=()
cleanup() {
  # Jobs first (a running job's slurmstepd is no child of ours), then the daemons, newest first.
  if [ -n "${SLURM_CONF:-}" ]; then timeout 5 scancel --quiet --user=root 2>/dev/null || true; fi
  local i p
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  if [ "${NEURONMON_KEEP_TMP:-0}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for log in "$tmp"/*.log; do
    [ -f "$log" ] || continue
    echo "--- $(basename "$log") ---"
    tail -25 "$log"
  done
  if [ -n "${SLURM_CONF:-}" ]; then
    echo "--- scontrol show node ---"
    timeout 5 scontrol show node "$node" 2>&1 || true
    echo "--- squeue ---"
    timeout 5 squeue -t all -o '%i %T %r' 2>&1 || true
  fi
  exit 1
}
started=$SECONDS
step() { echo "[$((SECONDS - started))s] $*"; }

# ---- munged: a fresh key and a private socket ----
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge.key"
munged -F -f --socket="$tmp/munge.sock" --key-file="$tmp/munge.key" --pid-file="$tmp/munged.pid" \
  --seed-file="$tmp/munged.seed" --log-file="$tmp/munged.log" >"$tmp/munged.out.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$tmp/munge.sock" ] && break; sleep 0.1; done
[ -S "$tmp/munge.sock" ] || fail "munged never listened"

# ---- slurm.conf: two free ports, everything in the temp dir ----
port_free() {
  python3 -c 'import socket, sys; s = socket.socket(); s.bind(("0.0.0.0", int(sys.argv[1])))' \
    "$1" 2>/dev/null
}
ctld_port=
for _ in $(seq 20); do
  p=$((20000 + RANDOM % 30000))
  if port_free "$p" && port_free "$((p + 1))"; then ctld_port=$p; break; fi
done
[ -n "$ctld_port" ] || fail "found no two free ports"
mkdir -p "$tmp/state" "$tmp/spool"

# The Prolog and Epilog slurmd runs: the scripts as packaged, told where this test's daemon
# listens, each run's exit status written down.
for script in prolog epilog; do
  cat >"$tmp/$script" <<EOF
#!/usr/bin/env bash
export NEURON_LS="$ls" NEURON_CHECK_ARGS="--socket $tmp/daemon.sock"
export NEURON_REPORT_BIN="$report" NEURON_REPORT_ARGS="--socket $tmp/daemon.sock"
export NEURON_SLURM_DEFAULTS=/dev/null
"$slurm_dir/neuron-$script" 2>>"$tmp/gate.log"
rc=\$?
echo "job \$SLURM_JOB_ID $script exit \$rc" >>"$tmp/gate.rc"
exit \$rc
EOF
  chmod 755 "$tmp/$script"
done

cat >"$tmp/slurm.conf" <<EOF
ClusterName=neuronmon-e2e
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
Prolog=$tmp/prolog
Epilog=$tmp/epilog
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf

slurmctld -D -f "$SLURM_CONF" >"$tmp/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$tmp/slurmd.out.log" 2>&1 &
pids+=($!)

# node_state: the node's state as sinfo says it (idle, drained, ...) and its reason, "STATE|REASON";
# without the "*" of a node not responding, which slurmctld sets after `scontrol update
# State=RESUME` until its next ping.
node_state() { timeout 10 sinfo -h -N -n "$node" -o '%T|%E' 2>/dev/null | sed 's/^\([a-z]*\)\*|/\1|/' || true; }
# wait_node PATTERN SECONDS: until node_state matches the extended regex.
wait_node() {
  local i
  for ((i = 0; i < $2 * 5; i++)); do
    grep -qE -- "$1" <<<"$(node_state)" && return 0
    sleep 0.2
  done
  return 1
}
# job_state ID: the job's state (PENDING, RUNNING, COMPLETED, ...) and reason, "STATE REASON".
job_state() {
  timeout 10 scontrol show job -o "$1" 2>/dev/null |
    grep -oE '(JobState|Reason)=[^ ]*' | cut -d= -f2 | paste -sd ' ' || true
}
wait_node '^idle\|' 30 || fail "the node never became idle in Slurm: $(node_state)"
step "slurm is up: $node idle"

# ---- neuron-monitord: a trn1.2xlarge whose device 0 fails after 15 s ----
cat >"$tmp/scenario.json" <<'EOF'
// Device 0's executions start hitting uncorrectable NeuronCore errors at 15 s: the device is failed.
{"name": "slurm-gate", "description": "device 0 fails after 15 s", "instance": "trn1.2xlarge",
 "faults": [{"type": "hardware_error", "device": 0, "start": "15s", "error": "nc", "per_second": 1}]}
EOF
echo '{}' >"$tmp/daemon.json"
"$daemon" --config "$tmp/daemon.json" --socket "$tmp/daemon.sock" --metrics-listen off --record off \
  --period 250ms --device sim:trn1.2xlarge --scenario "$tmp/scenario.json" >"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
pids+=("$daemon_pid")
daemon_started=$SECONDS
for _ in $(seq 100); do [ -S "$tmp/daemon.sock" ] && break; sleep 0.1; done
[ -S "$tmp/daemon.sock" ] || fail "neuron-monitord never listened"
check() { "$ls" --check --socket "$tmp/daemon.sock"; }
check >/dev/null || fail "the node is not healthy at the start: $(check)"

# ---- job 1, healthy: it runs ----
job1=$(sbatch --parsable -o "$tmp/job1.out" --wrap 'echo job ran') || fail "sbatch failed"
for _ in $(seq 150); do
  case $(job_state "$job1") in COMPLETED* | FAILED* | CANCELLED* | PENDING\ launch*) break ;; esac
  sleep 0.2
done
[[ $(job_state "$job1") == COMPLETED* ]] ||
  fail "job 1 did not complete ($(job_state "$job1")) $((SECONDS - daemon_started))s after the" \
    "daemon started (the device fails at 15 s)"
grep -qx 'job ran' "$tmp/job1.out" || fail "job 1 printed nothing"
grep -qx "job $job1 prolog exit 0" "$tmp/gate.rc" || fail "job 1's Prolog: $(cat "$tmp/gate.rc")"
for _ in $(seq 50); do grep -q "job $job1 epilog" "$tmp/gate.rc" && break; sleep 0.2; done
grep -qx "job $job1 epilog exit 0" "$tmp/gate.rc" || fail "job 1's Epilog: $(cat "$tmp/gate.rc")"
[[ $(node_state) == idle\|* ]] || fail "the node is not idle after job 1: $(node_state)"
# The Prolog started the job's accounting, the Epilog ended it and wrote its report beside its
# output.
grep -q "^### Job slurm-$job1 " "$tmp/neuron-report-$job1.md" ||
  fail "job 1's report: $(cat "$tmp/neuron-report-$job1.md" 2>&1) $(cat "$tmp/gate.log")"
grep -q "| State | ended (marked)" "$tmp/neuron-report-$job1.md" ||
  fail "job 1's report does not say it ended: $(cat "$tmp/neuron-report-$job1.md")"
step "job $job1 ran and completed; Prolog and Epilog passed; its report was written"

# ---- the device fails ----
for _ in $(seq 150); do
  rc=0
  check >"$tmp/check.out" || rc=$?
  [ "$rc" = 1 ] && break
  sleep 0.2
done
[ "$rc" = 1 ] || fail "neuron-ls --check never said unhealthy (exit $rc): $(cat "$tmp/check.out")"
grep -q '^unhealthy: ND0 failed: ' "$tmp/check.out" || fail "the check's line: $(cat "$tmp/check.out")"
step "neuron-ls --check: $(cat "$tmp/check.out")"

# ---- job 2: the Prolog drains the node, Slurm requeues the job, held; it never runs ----
job2=$(sbatch --parsable -o "$tmp/job2.out" --wrap 'echo job ran') || fail "sbatch failed"
# draining while job 2 holds it, drained once Slurm has requeued the job
wait_node '^drained\|' 30 || fail "the Prolog did not drain the node: $(node_state)"
for _ in $(seq 50); do grep -q "job $job2 prolog" "$tmp/gate.rc" && break; sleep 0.2; done
grep -qx "job $job2 prolog exit 1" "$tmp/gate.rc" || fail "job 2's Prolog: $(cat "$tmp/gate.rc")"
state=$(node_state)
[[ $state == drained\|neuron-ls:\ ND0\ failed:\ * ]] || fail "drained, but not with the check's reason: $state"
for _ in $(seq 50); do [[ $(job_state "$job2") == PENDING* ]] && break; sleep 0.2; done
[[ $(job_state "$job2") == PENDING* ]] || fail "job 2 is not pending again: $(job_state "$job2")"
step "job $job2 requeued ($(job_state "$job2")); node ${state%%|*}: ${state#*|}"
sleep 2
[[ $(job_state "$job2") == PENDING* ]] || fail "job 2 did not stay pending: $(job_state "$job2")"
# (slurmd writes "Error running slurm prolog: 1" into the job's output file, but no more)
if grep -q 'job ran' "$tmp/job2.out" 2>/dev/null; then fail "job 2 ran: $(cat "$tmp/job2.out")"; fi
grep -q "drained $node (before job $job2): neuron-ls: ND0 failed: " "$tmp/gate.log" ||
  fail "the Prolog did not say why it drained the node: $(cat "$tmp/gate.log")"

# ---- neuron-healthcheck by hand, in the environment slurmd gives it, with stand-in neuron-ls ----
standin() {  # standin NAME EXIT LINE [STREAM]: a neuron-ls that prints LINE and exits EXIT
  printf '#!/bin/sh\nprintf "%%s\\n" "%s" >&%s\nexit %s\n' "$3" "${4:-1}" "$2" >"$tmp/ls-$1"
  chmod 755 "$tmp/ls-$1"
}
standin healthy 0 "healthy: 1 device ok, 2 free NeuronCores (stand-in)"
standin unknown 2 "unknown: cannot reach the daemon (stand-in)"
standin usage 3 "neuron-ls: --fail-on: 'sometimes' is not degraded or failed (stand-in)" 2
long="unhealthy:"
for i in $(seq 0 15); do long+=" ND$i failed: too many errors,"$'\t'; done
standin long 1 "$long — end"
# 24 bytes, then 3-byte characters: the cut at 197 bytes falls inside one
standin utf8 1 "unhealthy: ND0 failed: x$(printf '—%.0s' $(seq 100))"
printf '#!/bin/sh\nsleep 10\n' >"$tmp/ls-slow"
chmod 755 "$tmp/ls-slow"
# gate SCRIPT NEURON_LS [VAR=VALUE...]: runs packaging/slurm/neuron-SCRIPT as slurmd runs a
# HealthCheckProgram: no PATH, SLURMD_NODENAME (and this cluster's SLURM_CONF).
gate() {
  local script=$1 lsbin=$2
  shift 2
  env -i SLURMD_NODENAME="$node" SLURM_CONF="$SLURM_CONF" NEURON_SLURM_DEFAULTS=/dev/null \
    NEURON_LS="$lsbin" NEURON_CHECK_ARGS="--socket $tmp/daemon.sock" "$@" \
    "$slurm_dir/neuron-$script" 2>>"$tmp/gate.log"
}
reason_of() { node_state | cut -d'|' -f2-; }

gate healthcheck "$ls" || fail "neuron-healthcheck failed while unhealthy"
[[ $(node_state) == drained\|neuron-ls:\ ND0\ failed:\ * ]] ||
  fail "neuron-healthcheck changed the drain: $(node_state)"
gate healthcheck "$tmp/ls-healthy" || fail "neuron-healthcheck failed while healthy"
wait_node '^idle\|' 10 || fail "neuron-healthcheck did not resume the node: $(node_state)"
[[ $(job_state "$job2") == PENDING* ]] || fail "job 2 left its hold: $(job_state "$job2")"
step "neuron-healthcheck kept the drain while unhealthy and resumed the node once healthy"

scontrol update NodeName="$node" State=DRAIN Reason="admin: memory test" || fail "scontrol drain"
gate healthcheck "$tmp/ls-healthy" || fail "neuron-healthcheck failed"
gate healthcheck "$ls" || fail "neuron-healthcheck failed"
[ "$(node_state)" = "drained|admin: memory test" ] ||
  fail "neuron-healthcheck touched an administrator's drain: $(node_state)"
scontrol update NodeName="$node" State=RESUME || fail "scontrol resume"
gate healthcheck "$ls" || fail "neuron-healthcheck failed"
[[ $(node_state) == drained\|neuron-ls:\ ND0\ failed:\ * ]] ||
  fail "neuron-healthcheck did not drain the unhealthy node: $(node_state)"
gate healthcheck "$tmp/ls-healthy" || fail "neuron-healthcheck failed"
wait_node '^idle\|' 10 || fail "neuron-healthcheck did not resume the node: $(node_state)"
step "neuron-healthcheck left an administrator's drain alone, drained and resumed its own"

# ---- the Prolog's other outcomes, and the Epilog's drain ----
rc=0
gate prolog "$tmp/ls-unknown" SLURM_JOB_ID=901 || rc=$?
[ "$rc" = 0 ] || fail "the Prolog stopped a job on an unknown outcome (exit $rc)"
[[ $(node_state) == idle\|* ]] || fail "the Prolog drained on an unknown outcome: $(node_state)"
grep -q "health is unknown, the job runs (before job 901): unknown: cannot reach" "$tmp/gate.log" ||
  fail "the Prolog did not log the unknown outcome"
rc=0
gate prolog "$tmp/ls-usage" SLURM_JOB_ID=902 || rc=$?
[ "$rc" = 0 ] || fail "the Prolog stopped a job on a usage error (exit $rc)"
grep -q "check failed (exit 3), the job runs unchecked (before job 902): neuron-ls: --fail-on: " \
  "$tmp/gate.log" ||
  fail "the Prolog did not log the usage error"
rc=0
t0=$SECONDS
gate prolog "$tmp/ls-slow" SLURM_JOB_ID=903 NEURON_CHECK_TIMEOUT=1 || rc=$?
[ "$rc" = 0 ] || fail "the Prolog stopped a job when the check timed out (exit $rc)"
[ $((SECONDS - t0)) -le 5 ] || fail "the Prolog waited $((SECONDS - t0))s for a 1s timeout"
grep -q "health is unknown, the job runs (before job 903): $tmp/ls-slow --check took more than 1s" \
  "$tmp/gate.log" || fail "the Prolog did not log the timeout"
rc=0
gate prolog "$tmp/ls-missing" SLURM_JOB_ID=904 || rc=$?
[ "$rc" = 0 ] || fail "the Prolog stopped a job when neuron-ls is missing (exit $rc)"
grep -q "check failed (exit 127), the job runs unchecked (before job 904): cannot run $tmp/ls-missing" \
  "$tmp/gate.log" || fail "the Prolog did not log the missing neuron-ls"
[[ $(node_state) == idle\|* ]] || fail "the Prolog drained the node: $(node_state)"
rc=0
gate prolog "$tmp/ls-unknown" SLURM_JOB_ID=905 NEURON_CHECK_UNKNOWN=drain || rc=$?
[ "$rc" = 1 ] || fail "NEURON_CHECK_UNKNOWN=drain: the Prolog exited $rc"
[ "$(node_state)" = "drained|neuron-ls: unknown: cannot reach the daemon (stand-in)" ] ||
  fail "NEURON_CHECK_UNKNOWN=drain did not drain: $(node_state)"
gate healthcheck "$tmp/ls-healthy" || fail "neuron-healthcheck failed"
wait_node '^idle\|' 10 || fail "neuron-healthcheck did not resume the node: $(node_state)"
rc=0
gate epilog "$tmp/ls-long" SLURM_JOB_ID=906 || rc=$?
[ "$rc" = 0 ] || fail "the Epilog exited $rc after draining"
reason=$(reason_of)
[[ $reason == "neuron-ls: ND0 failed: too many errors, ND1 failed: "*... ]] ||
  fail "the long reason: $reason"
[ "$(printf '%s' "$reason" | LC_ALL=C wc -c)" -le 200 ] || fail "the reason is longer than 200 bytes"
[[ $reason != *$'\t'* ]] || fail "the reason has a tab"
gate healthcheck "$tmp/ls-healthy" || fail "neuron-healthcheck failed"
wait_node '^idle\|' 10 || fail "neuron-healthcheck did not resume the node: $(node_state)"
rc=0
gate prolog "$tmp/ls-utf8" SLURM_JOB_ID=907 || rc=$?
[ "$rc" = 1 ] || fail "the Prolog exited $rc on an unhealthy node"
reason=$(reason_of)
[[ $reason == "neuron-ls: ND0 failed: x———"*—... ]] || fail "the cut UTF-8 reason: $reason"
iconv -f UTF-8 -t UTF-8 <<<"$reason" >/dev/null 2>&1 || fail "the cut reason is not UTF-8: $reason"
step "Prolog: unknown, timeouts and errors let jobs run, unknown drains when asked; reasons cut"

kill -TERM "$daemon_pid"
wait "$daemon_pid" || fail "neuron-monitord did not stop cleanly"
echo "ok: job $job1 ran on a healthy node; job $job2's Prolog drained it (${state#*|})" \
  "and requeued the job; neuron-healthcheck resumed it ($((SECONDS - started))s)"
