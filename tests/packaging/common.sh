# Sourced by the packaging tests. Gives each test a private temp dir, removed on exit, and a way
# to install the build into it as the package would be laid out (prefix /usr, /etc absolute).
#   CMAKE    the cmake to run (the tests' CMakeLists.txt passes ${CMAKE_COMMAND})
set -euo pipefail

nm_tmp=$(mktemp -d "${TMPDIR:-/tmp}/neuronmon-packaging.XXXXXX")
nm_cleanup_hooks=()
nm_cleanup() {
  local hook
  for hook in "${nm_cleanup_hooks[@]}"; do eval "$hook" || true; done
  rm -rf "$nm_tmp"
}
trap nm_cleanup EXIT

nm_fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# nm_install BUILD_DIR: installs into $nm_tmp/root; sets nm_root.
nm_install() {
  nm_root=$nm_tmp/root
  if ! DESTDIR=$nm_root "${CMAKE:-cmake}" --install "$1" --prefix /usr >"$nm_tmp/install.log" 2>&1; then
    cat "$nm_tmp/install.log" >&2
    nm_fail "cmake --install $1 failed"
  fi
}

# nm_help_flags BINARY: every option its --help lists ("-c", "--config-file", ...), one a line.
nm_help_flags() {
  "$1" --help | grep -oE '^ +(-[A-Za-z],)?--[a-z][a-z0-9-]*' | tr ',' '\n' | tr -d ' ' | sort -u
}

# nm_unit_setting UNIT KEY: the values of KEY= in the unit file, one a line.
nm_unit_setting() { sed -n "s/^$2=//p" "$1"; }

# nm_unit_exec UNIT: what systemd would run for the unit's ExecStart=, under $nm_root. Sets
# nm_env (name -> value: Environment=, then EnvironmentFile=; a leading '-' means the file may
# be missing) and nm_command (ExecStart= with $NAME split into words and ${NAME} kept as one,
# as systemd.service(5) says; nm_command[0] is the binary's path inside $nm_root).
nm_unit_exec() {
  local unit=$1 assignment word file optional line name value
  declare -gA nm_env=()
  nm_command=()
  while IFS= read -r assignment; do
    for word in $assignment; do nm_env[${word%%=*}]=${word#*=}; done
  done < <(nm_unit_setting "$unit" Environment)
  while IFS= read -r file; do
    optional=0
    [ "${file:0:1}" = - ] && optional=1 && file=${file:1}
    if [ ! -f "$nm_root$file" ]; then
      [ $optional = 1 ] || nm_fail "EnvironmentFile=$file is not installed"
      continue
    fi
    while IFS= read -r line; do
      [[ $line =~ ^[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] || continue
      name=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
      [[ $value =~ ^\"(.*)\"$ || $value =~ ^\'(.*)\'$ ]] && value=${BASH_REMATCH[1]}
      nm_env[$name]=$value
    done <"$nm_root$file"
  done < <(nm_unit_setting "$unit" EnvironmentFile)
  for word in $(nm_unit_setting "$unit" ExecStart); do
    if [[ $word =~ ^\$([A-Za-z_][A-Za-z0-9_]*)$ ]]; then
      # shellcheck disable=SC2206 # split into words, as systemd does
      nm_command+=(${nm_env[${BASH_REMATCH[1]}]-})
    elif [[ $word =~ ^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$ ]]; then
      nm_command+=("${nm_env[${BASH_REMATCH[1]}]-}")
    else
      nm_command+=("$word")
    fi
  done
  [ ${#nm_command[@]} -gt 0 ] || nm_fail "$unit has no ExecStart="
  [ -x "$nm_root${nm_command[0]}" ] ||
    nm_fail "ExecStart= runs ${nm_command[0]}, which is not installed"
}

# nm_service_env: the environment systemd gives the service (a clean one, plus the unit's
# Environment=/EnvironmentFile=), and the sanitizer options of an instrumented build. Sets
# nm_daemon_env (NAME=value words for env -i); add RUNTIME_DIRECTORY, NOTIFY_SOCKET, ... to it.
nm_service_env() {
  local name
  nm_daemon_env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
  for name in "${!nm_env[@]}"; do nm_daemon_env+=("$name=${nm_env[$name]}"); done
  for name in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
    if [ -n "${!name:-}" ]; then nm_daemon_env+=("$name=${!name}"); fi
  done
}

# nm_free_port: a TCP port on 127.0.0.1 that nothing listens on right now.
nm_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# nm_wait_line FILE LINE SECONDS: waits until FILE has the whole line LINE; fails after SECONDS.
nm_wait_line() {
  local deadline=$((SECONDS + $3))
  until grep -qxF -- "$2" "$1" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.05
  done
}
