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
