#!/usr/bin/env bash
# Runs every libFuzzer target for a set time and prints a table: executions, executions per second,
# coverage at the end (cov: edges, ft: features), findings (crash-, leak-, timeout-, oom- files)
# and libFuzzer's exit status. Exits 1 when any target had a finding, 2 on a usage error.
#
#   bench/fuzz_long.sh [SECONDS_PER_TARGET (300)] [FUZZ_BUILD_DIR (build/fuzz)]
#
# It builds nothing. Build the targets first, e.g. as `make test` does:
#   CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNEURONMON_FUZZ=ON \
#     -DNEURONMON_BUILD_TESTS=OFF -DNEURONMON_BUILD_BENCH=OFF
#   cmake --build build/fuzz --target fuzz_targets
# Each target starts from a copy of its committed seeds (tests/fuzz/corpus/<name>/) in a temporary
# directory, so the committed corpus never grows; the directory (logs, grown corpora and any
# reproducers) is kept and printed at the end. Targets run one after another, each on one core.
set -euo pipefail

seconds=${1:-300}
build=${2:-build/fuzz}
repo=$(cd "$(dirname "$0")/.." && pwd)
case $seconds in
  '' | *[!0-9]*) echo "usage: $0 [SECONDS_PER_TARGET] [FUZZ_BUILD_DIR]" >&2; exit 2 ;;
esac

# target:max_len — keep in step with tests/fuzz/CMakeLists.txt.
targets=(
  frame_decoder_fuzz:4096
  session_fuzz:4096
  subscription_fuzz:4096
  daemon_config_fuzz:4096
  monitor_config_fuzz:4096
  scenario_fuzz:8192
  http_fuzz:4096
  render_fuzz:65536
  archive_fuzz:65536
  kernel_log_fuzz:1024
  monitor_document_fuzz:16384
  attribution_fuzz:4096
  datastore_fuzz:4096
  tls_config_fuzz:2048
)

for entry in "${targets[@]}"; do
  if [[ ! -x $build/tests/fuzz/${entry%%:*} ]]; then
    echo "$build/tests/fuzz/${entry%%:*} is missing: build the fuzz targets first (see $0's header)" >&2
    exit 2
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz_long.XXXXXX")
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "fuzz_long: ${seconds} s per target, $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(load) at the start"
echo

rows=()
found=0
for entry in "${targets[@]}"; do
  target=${entry%%:*}
  max_len=${entry##*:}
  name=${target%_fuzz}
  dir=$work/$name
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp -r "$repo/tests/fuzz/corpus/$name/." "$dir/corpus/"
  status=0
  "$build/tests/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
    "$dir/corpus" >"$dir/log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1)
  # The last status line: "#N DONE cov: X ft: Y corp: ..." (or the last one before a finding).
  last=$(grep -E '^#[0-9]+' "$dir/log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  findings=$(find "$dir/artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | wc -l)
  if ((findings > 0)); then
    found=1
    for f in "$dir"/artifacts/*; do echo "finding: $target: $f (log: $dir/log)"; done
  fi
  rows+=("$(printf '| %s | %s | %s | %s/%s | %s | %s |' "$target" "${execs:-?}" "${rate:-?}" \
    "${cov:-?}" "${ft:-?}" "$findings" "$status")")
done

echo "| target | execs | execs/s | cov/ft at end | findings | exit status |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "load average $(load) at the end; logs, corpora and reproducers in $work"
exit $found
