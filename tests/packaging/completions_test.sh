#!/usr/bin/env bash
# The installed bash completions parse, share one copy of their helpers, offer every option the
# program's --help lists, and complete the values users type most: device specs, scenario names,
# log levels and files.
#   completions_test.sh BUILD_DIR SOURCE_DIR
source "$(dirname "$0")/common.sh"
build=$1 source_dir=$2

nm_install "$build"
dir=$nm_root/usr/share/bash-completion/completions
export PATH=$nm_root/usr/bin:$nm_root/usr/sbin:$PATH

# complete_line WORDS...: runs the completion function for the command line "WORDS" (a final ""
# word: the cursor follows a space) as bash would, in a fresh shell, and prints COMPREPLY one a line.
cat >"$nm_tmp/complete.bash" <<'SCRIPT'
set -u
source "$1/$2"
COMP_LINE=$3
COMP_POINT=${#3}
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
read -r -a COMP_WORDS <<<"$COMP_LINE"
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
if [[ $COMP_LINE == *" " ]]; then COMP_WORDS+=(""); COMP_CWORD=$((COMP_CWORD + 1)); fi
func=$(complete -p "$2" | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
"$func" "$2" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\n' "${COMPREPLY[@]}"
SCRIPT
complete_line() {
  local line
  line=$(printf '%s ' "$@")
  bash "$nm_tmp/complete.bash" "$dir" "$1" "${line% }"
}

expect() { # DESCRIPTION WANTED -- WORDS...: the completion of WORDS offers WANTED
  local what=$1 wanted=$2
  shift 3
  complete_line "$@" >"$nm_tmp/reply"
  grep -qxF -- "$wanted" "$nm_tmp/reply" ||
    nm_fail "$what: completing '$*' offers $(tr '\n' ' ' <"$nm_tmp/reply")but not $wanted"
}

programs=()
for binary in "$nm_root"/usr/bin/neuron-* "$nm_root"/usr/sbin/neuron-*; do
  program=$(basename "$binary")
  programs+=("$program")
  [ -f "$dir/$program" ] || nm_fail "no completion for $program"
  bash -n "$dir/$program" || nm_fail "$dir/$program does not parse"
  while read -r flag; do
    expect "$program options" "$flag" -- "$program" "${flag:0:2}"
  done < <(nm_help_flags "$binary")
  echo "ok: $program: completion parses and offers all its options"
done

# The helper block is copied into every file (bash-completion loads one file per command).
helpers() { sed -n '/^# --- neuronmon completion helpers/,/^# --- end of the shared helpers/p' "$1"; }
for program in "${programs[@]}"; do
  [ -n "$(helpers "$dir/$program")" ] || nm_fail "$program: no shared helper block"
  helpers "$dir/$program" | cmp -s - <(helpers "$dir/neuron-ls") ||
    nm_fail "$program's helper block differs from neuron-ls's: keep the copies identical"
done

expect "neuron-ls --" --json-output -- neuron-ls --
expect "a device" sim:trn1.32xlarge -- neuron-ls --device ""
expect "an output format" json -- neuron-ls --output-format ""
expect "an output format after =" table -- neuron-ls --output-format=t
# bash replaces only what follows the last ':' or '=' typed, so the reply starts after it.
expect "a device after sim:" trn2.48xlarge:lnc=1 -- neuron-top --device sim:trn2
expect "--device=" trn1n.32xlarge -- neuron-monitor --device=sim:trn1n
expect "a scenario" input-bound -- neuron-top --scenario in
expect "a scenario of the daemon" straggler -- neuron-monitord --scenario ""
expect "a log level" debug -- neuron-monitord --log-level ""
expect "a log level after =" warn -- neuron-monitord --log-level=w
expect "metrics off" off -- neuron-monitord --metrics-listen o
expect "a verbosity" 4 -- neuron-monitor --verbose ""
(cd "$source_dir/packaging" && expect "a config file" neuron-monitord.json -- neuron-monitord --config neuron-monitord.j)
(cd "$source_dir/packaging" && expect "an AWS config file" neuron-monitord.json -- neuron-monitor -c neuron-mon)
[ -z "$(complete_line neuron-monitor --count "")" ] || nm_fail "--count N should offer nothing"
echo "ok: device, scenario, output format, log level, verbosity and file values complete"
