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
#
# The network is htsim's: satcc's sender is wired to its receiver by the bottleneck alone
# (`bench_sim --direct`: one queue, serialiser and wire each way, 25 ms each way), as
# htsim_dumbbell.cc has one queue and one pipe forward and one pipe back. bench_sim's default
# dumbbell (the ns-3 case: a 10 Gbit/s access link and a router before the bottleneck) carries
# every packet over twice the hops; it runs too, for the record, and its ratio is printed apart.
#
# CPU time on a shared virtual machine moves by 2x from run to run (neighbours, no pinning),
# so the runs alternate and the summary gives the median and the best run of each tool, and the
# median ratio of the runs made back to back (a pair shares the machine's state). With
# valgrind installed (as root it is installed if missing) both tools also run once under
# cachegrind: instructions per data segment, a figure that does not move with the machine.
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
if ! command -v valgrind >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
  && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null 2>&1 || true
fi
SATCC="$ROOT/target/release/examples/bench_sim"
results="$OUT/htsim-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
HTSIM_ARGS=(--rate-bps 100000000 --rtt-ms 50 --queue-bytes 625000 --secs 60)
SATCC_ARGS=(--cca reno --rate-bps 100000000 --group 50:1 --queue-bytes 625000 --secs 60)
for _ in $(seq "$REPS"); do
  "$OUT/htsim_dumbbell" "${HTSIM_ARGS[@]}" | grep '^{' >>"$results"
  "$SATCC" "${SATCC_ARGS[@]}" --direct >>"$results"
  "$SATCC" "${SATCC_ARGS[@]}" >>"$results"
done
# Instructions (the whole process, set-up included: a few ms of either tool's 60 s run).
instructions() {
  local log
  log=$(mktemp)
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>"$log" >/dev/null
  awk '/I *refs/ {gsub(",", "", $NF); print $NF}' "$log"
  rm -f "$log"
}
if command -v valgrind >/dev/null 2>&1; then
  echo "{\"tool\":\"htsim\",\"instructions\":$(instructions "$OUT/htsim_dumbbell" "${HTSIM_ARGS[@]}")}" >>"$results"
  echo "{\"tool\":\"satcc\",\"topology\":\"direct\",\"instructions\":$(instructions "$SATCC" "${SATCC_ARGS[@]}" --direct)}" >>"$results"
  echo "{\"tool\":\"satcc\",\"topology\":\"dumbbell\",\"instructions\":$(instructions "$SATCC" "${SATCC_ARGS[@]}")}" >>"$results"
fi
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
for r in rows:  # satcc's two shapes are told apart by their topology
    if r["tool"] == "satcc":
        r["tool"] = "satcc" if r.get("topology", "direct") == "direct" else "satcc-dumbbell"
timed = [r for r in rows if "cpu_s" in r]
def med(tool, key):
    return statistics.median(r[key] for r in timed if r["tool"] == tool)
out = {}
for tool in ("htsim", "satcc", "satcc-dumbbell"):
    if not any(r["tool"] == tool for r in timed):
        continue
    segs = med(tool, "data_segments")
    cpu = med(tool, "cpu_s")
    best = min(r["cpu_s"] for r in timed if r["tool"] == tool)
    ins = [r["instructions"] for r in rows if r["tool"] == tool and "instructions" in r]
    out[tool] = (segs / cpu, med(tool, "events") / segs, segs / best, ins[0] / segs if ins else None)
    print(f"{tool:14} cpu {cpu:.3f} s (best {best:.3f})  segments {segs:.0f}"
          f"  segments/CPU-s {segs / cpu / 1e6:.2f} M (best {segs / best / 1e6:.2f} M)"
          f"  events/segment {out[tool][1]:.2f}"
          + (f"  instructions/segment {out[tool][3]:.0f}" if ins else ""))
h = out["htsim"]
def rate(r):
    return r["data_segments"] / r["cpu_s"]
for tool, shape in (("satcc", "htsim's network"), ("satcc-dumbbell", "dumbbell, twice the hops")):
    if tool not in out:
        continue
    s = out[tool]
    # Runs i of the two tools ran back to back: their ratio sees the same neighbours.
    pairs = [rate(b) / rate(a) for a, b in zip(
        [r for r in timed if r["tool"] == "htsim"], [r for r in timed if r["tool"] == tool])]
    print(f"{tool} / htsim ({shape}): segments per CPU-second {s[0] / h[0]:.2f}x "
          f"(best runs {s[2] / h[2]:.2f}x; back-to-back pairs: median {statistics.median(pairs):.2f}x, "
          f"{sum(p >= 1 for p in pairs)} of {len(pairs)} >= 1), events per segment {s[1] / h[1]:.2f}x"
          + (f", segments per instruction {h[3] / s[3]:.2f}x" if h[3] and s[3] else ""))
print(f"raw: {sys.argv[1]}")
PY
