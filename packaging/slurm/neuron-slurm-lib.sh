# neuron-slurm-lib.sh: what neuron-prolog, neuron-epilog and neuron-healthcheck share — their
# settings, logging, the check itself, the drain reason and the drain. Not a program: each script
# sources it from its own directory (symlinks followed), after setting self (its name, the syslog
# tag), set -u and PATH; each then sets when (how its log lines say when they ran) and decides.
# Installed beside them, in /usr/share/neuronmon/slurm: copy it with them to every compute node,
# owned by root.
#
# Sets unknown_action and node, and defines:
#   log PRIORITY MESSAGE   stderr and syslog
#   check                  runs neuron-ls --check: check_rc and check_line
#   reason LINE            the drain reason for the check's line
#   node_state             node_state and node_reason, from scontrol
#   drain REASON           drains the node unless it is drained already
#   job_mark start|stop    neuron-report --start/--stop $SLURM_JOB_ID (the job accounting)
#   job_report             the job's Markdown report beside its output, written as its user
# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # used by the scripts (unknown_action), set by them (self, when)

defaults=${NEURON_SLURM_DEFAULTS:-/etc/default/neuron-slurm}
if [ -r "$defaults" ]; then
  # shellcheck source=/dev/null
  . "$defaults"
fi
unknown_action=${NEURON_CHECK_UNKNOWN:-run}
node=${NEURON_SLURM_NODENAME:-${SLURMD_NODENAME:-$(hostname -s)}}

# log PRIORITY MESSAGE: stderr, and syslog when logger is there (slurmd keeps neither stream).
log() {
  echo "$self: $2" >&2
  if command -v logger >/dev/null 2>&1; then
    logger -t "$self" -p "daemon.$1" -- "$2" 2>/dev/null || true
  fi
}

# check: runs neuron-ls --check; sets check_rc (0 healthy, 1 unhealthy, 2 unknown, 3 usage,
# 124 timed out, 126/127 cannot run) and check_line (its one line, or stderr's last line).
check() {
  local ls=${NEURON_LS:-} args=() err out
  if [ -z "$ls" ]; then
    ls=$(command -v neuron-ls 2>/dev/null || echo /usr/bin/neuron-ls)
  fi
  read -r -a args <<<"${NEURON_CHECK_ARGS:-}"
  local timeout=()
  if command -v timeout >/dev/null 2>&1; then
    timeout=(timeout -k 2 "${NEURON_CHECK_TIMEOUT:-8}")
  fi
  err=$(mktemp) || err=/dev/null
  out=$("${timeout[@]}" "$ls" --check "${args[@]}" 2>"$err" </dev/null)
  check_rc=$?
  check_line=$(printf '%s\n' "$out" | head -n 1)
  if [ -z "$check_line" ] && [ "$err" != /dev/null ]; then
    check_line=$(tail -n 1 "$err")
  fi
  [ "$err" = /dev/null ] || rm -f "$err"
  case $check_rc in
    124 | 137) check_line="$ls --check took more than ${NEURON_CHECK_TIMEOUT:-8}s" ;;
    126 | 127) check_line="cannot run $ls: ${check_line:-not found}" ;;
  esac
}

# neuron_report: the neuron-report to run, its extra arguments (report_args) and a timeout
# (report_timeout); returns 1 when job reports are off (NEURON_REPORT=off) or it is missing.
neuron_report() {
  [ "${NEURON_REPORT:-on}" != off ] || return 1
  report=${NEURON_REPORT_BIN:-}
  if [ -z "$report" ]; then
    report=$(command -v neuron-report 2>/dev/null || echo /usr/bin/neuron-report)
  fi
  [ -x "$report" ] || return 1
  read -r -a report_args <<<"${NEURON_REPORT_ARGS:-}"
  report_timeout=()
  if command -v timeout >/dev/null 2>&1; then report_timeout=(timeout -k 2 5); fi
}

# job_id: the job's id in the daemon's accounting, as its processes' cgroup names it:
# slurm-ARRAYJOB_TASK for an array task, else slurm-JOBID (never a bare number, which could be a
# job's running number).
job_id() {
  if [ -n "${SLURM_ARRAY_JOB_ID:-}" ] && [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
    printf 'slurm-%s_%s' "$SLURM_ARRAY_JOB_ID" "$SLURM_ARRAY_TASK_ID"
  else
    printf 'slurm-%s' "$SLURM_JOB_ID"
  fi
}

# job_mark start|stop: marks the Slurm job started (Prolog) or ended (Epilog) in the daemon's job
# accounting (docs/jobs.md); a refusal is logged, never fatal.
job_mark() {
  [ -n "${SLURM_JOB_ID:-}" ] && neuron_report || return 0
  local out id
  id=$(job_id)
  if ! out=$("${report_timeout[@]}" "$report" "${report_args[@]}" "--$1" "$id" 2>&1 \
    </dev/null); then
    log notice "neuron-report --$1 $id: $(printf '%s' "$out" | tail -n 1)"
  fi
}

# job_report: writes the job's report as Markdown to neuron-report-JOB.md in the directory of its
# standard output (as scontrol shows it), as the job's user (setpriv), so that a path the user
# controls cannot make root write anywhere else.
job_report() {
  [ -n "${SLURM_JOB_ID:-}" ] && [ -n "${SLURM_JOB_UID:-}" ] && neuron_report || return 0
  command -v setpriv >/dev/null 2>&1 || return 0
  local stdout dir md
  stdout=$(scontrol show job -o "$SLURM_JOB_ID" 2>/dev/null |
    sed -n 's/.* StdOut=\([^ ]*\).*/\1/p' | head -n 1)
  dir=$(dirname -- "${stdout:-.}")
  [ -n "$stdout" ] && [ -d "$dir" ] || return 0
  md=$("${report_timeout[@]}" "$report" "${report_args[@]}" --markdown "$(job_id)" 2>/dev/null \
    </dev/null) || return 0
  # shellcheck disable=SC2016  # $1 is the inner shell's: the path, never parsed as code
  printf '%s' "$md" |
    setpriv --reuid="$SLURM_JOB_UID" --regid="${SLURM_JOB_GID:-$SLURM_JOB_UID}" --clear-groups \
      -- sh -c 'umask 077; cat >"$1"' sh "$dir/neuron-report-$SLURM_JOB_ID.md" ||
    log notice "could not write $dir/neuron-report-$SLURM_JOB_ID.md"
}

# reason LINE: "neuron-ls: LINE" without "unhealthy: ", control characters or runs of blanks,
# at most 200 bytes (a cut ends with "...").
reason() {
  local r
  r="neuron-ls: ${1#unhealthy: }"
  r=$(printf '%s' "$r" | LC_ALL=C tr '\000-\037\177' ' ' | LC_ALL=C tr -s ' ')
  r=${r% }
  if [ "$(printf '%s' "$r" | LC_ALL=C wc -c)" -gt 200 ]; then
    # Cut at 197 bytes, then drop a partial UTF-8 character the cut may have left.
    r=$(printf '%s' "$r" | LC_ALL=C head -c 197 | LC_ALL=C sed 's/[\xc0-\xff][\x80-\xbf]*$//')
    r="$r..."
  fi
  printf '%s' "$r"
}

# node_state: sets node_state (e.g. IDLE+DRAIN) and node_reason (without "[user@time]").
node_state() {
  local info
  node_state='' node_reason=''
  info=$(scontrol show node "$node" 2>/dev/null) || return 1
  node_state=$(printf '%s\n' "$info" |
    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^State=/) { print substr($i, 7); exit } }')
  node_reason=$(printf '%s\n' "$info" | sed -n 's/^ *Reason=//p' | sed 's/ *\[[^]]*\]$//')
}

# drain REASON: drains the node unless it is drained already: then the reason stays, whether
# someone else's or this gate's (with the time it was first drained).
drain() {
  if node_state && [[ $node_state == *DRAIN* ]]; then
    if [[ $node_reason == neuron-ls:* ]]; then
      log info "$node is drained already ($when): $1"
    else
      log warning "$node is drained already (\"$node_reason\"), left as it is ($when): $1"
    fi
    return 0
  fi
  if scontrol update NodeName="$node" State=DRAIN Reason="$1"; then
    log err "drained $node ($when): $1"
  else
    log err "could not drain $node ($when; scontrol failed): $1"
    return 1
  fi
}
