#!/usr/bin/env bash
# Installs the Debian 12 packages neuronmon needs, and nothing when they are all present (silent).
#   packaging/install-deps.sh build   what building and running needs
#   packaging/install-deps.sh deb     that, plus what packaging the .deb needs (dpkg-shlibdeps)
#   packaging/install-deps.sh test    that, plus what the test suite uses, and the validators it
#                                     takes from npm (tests/packaging/validators, with its lock
#                                     file) into $NEURONMON_NPM_PREFIX (default: root's
#                                     /var/cache/neuronmon-test/npm, else
#                                     ~/.cache/neuronmon-test/npm)
#   packaging/install-deps.sh bench   that, plus the monitors the benchmarks compare with
# Needs root, or sudo.
set -euo pipefail

# libgrpc++-dev and protobuf-compiler-grpc: neurondev's client of the kubelet's PodResources API.
# libdeflate-dev: /metrics' gzip (about three times zlib's speed at the same level).
# libssl-dev: TLS for the TCP stream, /metrics and the clients.
build_pkgs=(cmake make ninja-build g++ pkg-config protobuf-compiler libprotobuf-dev libboost-dev
  nlohmann-json3-dev libcli11-dev libncurses-dev libsystemd-dev libre2-dev zlib1g-dev libzstd-dev
  libdeflate-dev libssl-dev libgrpc++-dev protobuf-compiler-grpc)
test_pkgs=(libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev clang-format tmux
  prometheus systemd man-db lintian fakeroot dpkg-dev file curl openssl procps python3
  slurmctld slurmd slurm-client munge yamllint)
# Node.js and npm, for the validators from npm, when the machine has no node of its own.
node_pkgs=(nodejs npm)

deb_pkgs=(dpkg-dev file)
bench_pkgs=(htop btop)

npm_validators=0
case "${1:-build}" in
  build) wanted=("${build_pkgs[@]}") ;;
  deb) wanted=("${build_pkgs[@]}" "${deb_pkgs[@]}") ;;
  test) wanted=("${build_pkgs[@]}" "${test_pkgs[@]}"); npm_validators=1 ;;
  bench) wanted=("${build_pkgs[@]}" "${test_pkgs[@]}" "${bench_pkgs[@]}"); npm_validators=1 ;;
  *) echo "usage: $0 build|deb|test|bench" >&2; exit 2 ;;
esac
if [ $npm_validators = 1 ] && ! command -v npm >/dev/null; then wanted+=("${node_pkgs[@]}"); fi

# The validators from npm, exactly as the lock file pins them (npm ci), unless that lock file is
# what the prefix already holds; as the user who runs this (no sudo: npm may be theirs, from nvm).
# The prefix: $NEURONMON_NPM_PREFIX, else root's /var/cache/neuronmon-test/npm, else the user's
# cache (tests/packaging/kubernetes_test.sh looks in the same place).
install_npm_validators() {
  [ $npm_validators = 1 ] || return 0
  local src prefix stage log
  src=$(cd "$(dirname "$0")/../tests/packaging/validators" && pwd)
  if [ "$(id -u)" -eq 0 ]; then
    prefix=${NEURONMON_NPM_PREFIX:-/var/cache/neuronmon-test/npm}
  else
    prefix=${NEURONMON_NPM_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/neuronmon-test/npm}
  fi
  if [ -d "$prefix/node_modules" ] && cmp -s "$src/package-lock.json" "$prefix/package-lock.json"; then
    return 0
  fi
  echo "install-deps: installing the npm validators into $prefix" >&2
  mkdir -p "$(dirname "$prefix")"
  # Installed beside the prefix and moved into place whole: a failed npm ci leaves no prefix
  # that looks complete.
  stage=$(mktemp -d "$prefix.new.XXXXXX")
  log=$(mktemp "${TMPDIR:-/tmp}/neuronmon-npm.XXXXXX")
  cp "$src/package.json" "$src/package-lock.json" "$stage/"
  if ! (cd "$stage" && npm ci --no-audit --no-fund --loglevel=error >"$log" 2>&1); then
    tail -20 "$log" >&2
    echo "install-deps: npm ci failed (log: $log)" >&2
    rm -rf "$stage"
    exit 1
  fi
  rm -rf "$prefix" "$log"
  mv "$stage" "$prefix"
}

sudo=()
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo=(sudo); fi

missing=()
for p in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  install_npm_validators
  exit 0
fi

if [ "$(id -u)" -ne 0 ] && [ ${#sudo[@]} -eq 0 ]; then
  echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# The prometheus package would start its own server on :9090; tests start their own, so keep
# services from starting during installation.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
  "${sudo[@]}" chmod +x "$policy"
  created_policy=1
fi
cleanup() { [ $created_policy -eq 1 ] && "${sudo[@]}" rm -f "$policy"; true; }
trap cleanup EXIT
if ! "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/neuronmon-apt.log 2>&1; then
  "${sudo[@]}" apt-get update -q >>/tmp/neuronmon-apt.log 2>&1
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/neuronmon-apt.log 2>&1 ||
    { tail -20 /tmp/neuronmon-apt.log >&2; echo "install-deps: apt-get failed (log: /tmp/neuronmon-apt.log)" >&2; exit 1; }
fi
install_npm_validators
