#!/usr/bin/env bash
# satcc's simulator beside htsim (Broadcom/csg-htsim), the fastest packet-level TCP simulator we
# know, on the same case in one run: 1 NewReno/Reno flow, 100 Mbit/s, RTT 50 ms, 1-BDP (625 kB)
# drop-tail queue, 60 s. Prints both JSON lines and the ratios (data segments per CPU-second,
# events per segment).
#
#   bash bench/sim/htsim.sh HTSIM_CHECKOUT [--reps N]
#
# HTSIM_CHECKOUT is a clone of https://github.com/Broadcom/csg-htsim (not part of satcc; its
# sim/libhtsim.a is built there with its own Makefile if missing). Our driver,
# bench/sim/htsim_dumbbell.cc, is compiled against it into bench/out/sim/. htsim's TCP is
# NewReno without SACK and a 10 ms RTO scanner; satcc's is Linux's (SACK, RACK-TLP, PRR, ...),
# so this compares cost per segment, not behaviour.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HT="${1:-}"
[ -n "$HT" ] && [ -d "$HT/sim" ] || {
  echo "usage: bash bench/sim/htsim.sh HTSIM_CHECKOUT [--reps N]" >&2
  echo "  (git clone https://github.com/Broadcom/csg-htsim; pass its directory)" >&2
  exit 2
}
shift
REPS=3
[ "${1:-}" = "--reps" ] && REPS="$2"
OUT="$ROOT/bench/out/sim"
mkdir -p "$OUT"
[ -f "$HT/sim/libhtsim.a" ] || make -C "$HT/sim" -j2 libhtsim.a >/dev/null
g++ -O3 -std=c++11 -I"$HT/sim" "$ROOT/bench/sim/htsim_dumbbell.cc" "$HT/sim/libhtsim.a" \
  -o "$OUT/htsim_dumbbell"
(cd "$ROOT" && cargo build -q --release -p satcc-sim --example bench_sim)
SATCC="$ROOT/target/release/examples/bench_sim"
results="$OUT/htsim-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
for _ in $(seq "$REPS"); do
  "$OUT/htsim_dumbbell" --rate-bps 100000000 --rtt-ms 50 --queue-bytes 625000 --secs 60 \
    | grep '^{' >>"$results"
  "$SATCC" --cca reno --rate-bps 100000000 --group 50:1 --queue-bytes 625000 --secs 60 >>"$results"
done
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def med(tool, key):
    return statistics.median(r[key] for r in rows if r["tool"] == tool)
out = {}
for tool in ("htsim", "satcc"):
    segs = med(tool, "data_segments")
    cpu = med(tool, "cpu_s")
    out[tool] = (segs / cpu, med(tool, "events") / segs, cpu, segs)
    print(f"{tool:6} cpu {cpu:.3f} s  segments {segs:.0f}  segments/CPU-s {segs / cpu / 1e6:.2f} M"
          f"  events/segment {out[tool][1]:.2f}")
print(f"satcc / htsim: segments per CPU-second {out['satcc'][0] / out['htsim'][0]:.2f}x, "
      f"events per segment {out['satcc'][1] / out['htsim'][1]:.2f}x")
print(f"raw: {sys.argv[1]}")
PY
