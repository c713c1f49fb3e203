#!/usr/bin/env bash
# Installs the Debian 12 packages neuronmon needs, and nothing when they are all present (silent).
#   packaging/install-deps.sh build   what building and running needs
#   packaging/install-deps.sh deb     that, plus what packaging the .deb needs (dpkg-shlibdeps)
#   packaging/install-deps.sh test    that, plus what the test suite uses
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

deb_pkgs=(dpkg-dev file)
bench_pkgs=(htop btop)

case "${1:-build}" in
  build) wanted=("${build_pkgs[@]}") ;;
  deb) wanted=("${build_pkgs[@]}" "${deb_pkgs[@]}") ;;
  test) wanted=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
  bench) wanted=("${build_pkgs[@]}" "${test_pkgs[@]}" "${bench_pkgs[@]}") ;;
  *) echo "usage: $0 build|deb|test|bench" >&2; exit 2 ;;
esac

missing=()
for p in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
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
