#!/usr/bin/env bash
# A/B comparison of two builds' micro-benchmarks on one machine: runs each benchmark binary of the
# BASE and NEW build directories alternately, ROUNDS times (default 3), and prints a Markdown table
# of the median CPU time per benchmark on each side and NEW/BASE. Run it on an otherwise idle
# machine; the spread between rounds is the noise to compare the ratio with.
#   bench/ab_compare.sh BASE_BUILD_DIR NEW_BUILD_DIR [ROUNDS] [BENCH ...]
# e.g. bench/ab_compare.sh /tmp/base/build/release build/release 3 metrics_bench json_bench tui_bench
set -euo pipefail
base=$1 new=$2 rounds=${3:-3}
shift $(($# >= 3 ? 3 : $#))
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(metrics_bench json_bench tui_bench)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((r = 1; r <= rounds; r++)); do
  for b in "${benches[@]}"; do
    for side in base new; do
      dir=$base
      [ $side = new ] && dir=$new
      "$dir/bench/$b" --benchmark_format=json --benchmark_min_time=0.5 \
        >"$out/$side.$b.$r.json" 2>/dev/null
    done
  done
done
python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
from collections import defaultdict
cpu = defaultdict(lambda: defaultdict(list))
unit = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    side = os.path.basename(path).split(".")[0]
    for b in json.load(open(path))["benchmarks"]:
        cpu[b["name"]][side].append(b["cpu_time"])
        unit[b["name"]] = b["time_unit"]
print("| benchmark | base: median (min-max) | new: median (min-max) | new/base |")
print("|---|---|---|---|")
for name, s in cpu.items():
    b, n = statistics.median(s["base"]), statistics.median(s["new"])
    u = unit[name]
    print(f"| {name} | {b:.4g} {u} ({min(s['base']):.4g}-{max(s['base']):.4g}) "
          f"| {n:.4g} {u} ({min(s['new']):.4g}-{max(s['new']):.4g}) | {n / b:.3f} |")
PY
