#!/usr/bin/env bash
# The simulator's cost as a run grows: instructions per simulated second (cachegrind, stable on a
# loaded machine) as the flows on one bottleneck grow (1, 16, 256, 4,096), as the links of a path
# grow (a chain of 1 to 2,000 links) and on a constellation path (the Starlink shell-1 geometry of
# scenarios/constellation-frankfurt.toml), plus the peak RSS of each bench_sim case.
#
#   bash bench/sim/scale.sh [--quick] [--no-tso-defer] [--only CASE,...]
#                                            # prints one JSON line per case and a table
#
# Each case runs twice under `valgrind --tool=cachegrind --cache-sim=no`, for T1 and T2
# simulated seconds; (I(T2) - I(T1)) / (T2 - T1) is the cost of a simulated second in steady
# state, set-up and the start-up transient (slow start of every flow) cancelled out. The same
# difference of data segments and link hops (`packets`) gives the cost per segment and per hop.
# The flow and chain cases run `bench_sim` (crates/satcc-sim/examples/bench_sim.rs, `--direct`
# / `--chain N`); the constellation case runs `satcc sim` on a copy of the scenario with its
# duration set (Python's start-up cancels out in the difference). `--quick` keeps the cases
# that take under a minute. `--no-tso-defer` measures the sender without Linux's
# `tcp_tso_should_defer` (bench_sim's `--no-tso-defer`; `tso_defer = false` on the scenario's
# flows), the default before 2026-11-30; `--only flows-4096,chain-2000` runs the named cases
# alone. Raw lines in bench/out/sim/scale-<date>.jsonl (each with its `tso_defer`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
QUICK=0
DEFER=1
ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --no-tso-defer) DEFER=0 ;;
    --only) ONLY=",$2,"; shift ;;
    *) echo "scale.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
EXTRA=()
[ "$DEFER" = 1 ] || EXTRA=(--no-tso-defer)
# wanted NAME: is the case selected by --only (all when no --only)?
wanted() { [ -z "$ONLY" ] || [[ "$ONLY" == *",$1,"* ]]; }
command -v valgrind >/dev/null || { echo "scale.sh: needs valgrind" >&2; exit 2; }
OUT="$ROOT/bench/out/sim"
mkdir -p "$OUT"
results="$OUT/scale-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
(cd "$ROOT" && cargo build -q --release -p satcc-sim --example bench_sim)
BENCH="$ROOT/target/release/examples/bench_sim"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

instructions() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" \
    2>"$TMP/vg.log" >"$TMP/stdout"
  awk '/I *refs/ {gsub(",", "", $NF); print $NF}' "$TMP/vg.log"
}

# bench_sim case: NAME T1 T2 ARGS...
bench_case() {
  local name="$1" t1="$2" t2="$3"
  shift 3
  wanted "$name" || return 0
  set -- "$@" "${EXTRA[@]}"
  local i1 i2 j1 j2 rss
  i1=$(instructions "$BENCH" "$@" --secs "$t1")
  j1=$(cat "$TMP/stdout")
  i2=$(instructions "$BENCH" "$@" --secs "$t2")
  j2=$(cat "$TMP/stdout")
  rss=$(/usr/bin/time -f "%M" "$BENCH" "$@" --secs "$t2" 2>&1 >/dev/null | tail -1)
  python3 - "$name" "$t1" "$t2" "$i1" "$i2" "$rss" "$j1" "$j2" "$DEFER" >>"$results" <<'PY'
import json, sys
name, t1, t2, i1, i2, rss = sys.argv[1:7]
a, b = json.loads(sys.argv[7]), json.loads(sys.argv[8])
defer = sys.argv[9] == "1"
dt = float(t2) - float(t1)
di = int(i2) - int(i1)
segs = b["data_segments"] - a["data_segments"]
hops = b["packets"] - a["packets"]
print(json.dumps({
    "case": name, "tso_defer": defer, "t1": float(t1), "t2": float(t2),
    "instructions_per_sim_s": di / dt,
    "segments_per_sim_s": segs / dt, "hops_per_sim_s": hops / dt,
    "instructions_per_segment": di / segs if segs else None,
    "instructions_per_hop": di / hops if hops else None,
    "events_per_segment": (b["events"] - a["events"]) / segs if segs else None,
    "peak_pending_events": b["peak_pending_events"],
    "peak_rss_kb": int(rss), "setup_and_first_s_instructions": int(i1),
    "goodput_total_bps": b["goodput_total_bps"],
}))
PY
  tail -1 "$results"
}

# satcc sim case: NAME T1 T2 SCENARIO (its `duration = "..."` line replaced)
cli_case() {
  local name="$1" t1="$2" t2="$3" scen="$4"
  wanted "$name" || return 0
  local i1 i2
  sed "s/^duration = .*/duration = \"$t1 s\"/" "$scen" >"$TMP/t1.toml"
  sed "s/^duration = .*/duration = \"$t2 s\"/" "$scen" >"$TMP/t2.toml"
  if [ "$DEFER" = 0 ]; then
    # every flow without the deferral: the key after each [[flow]] header
    sed -i 's/^\[\[flow\]\]$/[[flow]]\ntso_defer = false/' "$TMP/t1.toml" "$TMP/t2.toml"
  fi
  i1=$(instructions "$ROOT/.venv/bin/satcc" sim "$TMP/t1.toml" --out "$TMP/o1" --json)
  s1=$(cat "$TMP/stdout")
  i2=$(instructions "$ROOT/.venv/bin/satcc" sim "$TMP/t2.toml" --out "$TMP/o2" --json)
  s2=$(cat "$TMP/stdout")
  python3 - "$name" "$t1" "$t2" "$i1" "$i2" "$s1" "$s2" "$DEFER" >>"$results" <<'PY'
import json, sys
name, t1, t2, i1, i2 = sys.argv[1:6]
defer = sys.argv[8] == "1"
def segs(text):
    d = json.loads(text)
    flows = d.get("flows") or d.get("summary", {}).get("flows") or []
    return sum(f.get("sent_packets", 0) for f in flows)
dt = float(t2) - float(t1)
di = int(i2) - int(i1)
try:
    ds = segs(sys.argv[7]) - segs(sys.argv[6])
except Exception:
    ds = 0
print(json.dumps({
    "case": name, "tso_defer": defer, "t1": float(t1), "t2": float(t2),
    "instructions_per_sim_s": di / dt, "segments_per_sim_s": ds / dt if ds else None,
    "instructions_per_segment": di / ds if ds else None,
}))
PY
  tail -1 "$results"
}

# Flows on one bottleneck: CUBIC, 1 Gbit/s, RTT 50 ms, 1 BDP of drop-tail queue.
ONE=(--cca cubic --rate-bps 1e9 --queue-bytes 6250000)
bench_case flows-1 4 8 "${ONE[@]}" --group 50:1 --direct
bench_case flows-16 4 8 "${ONE[@]}" --group 50:16 --direct
bench_case flows-256 4 8 "${ONE[@]}" --group 50:256 --direct
[ "$QUICK" = 1 ] || bench_case flows-4096 4 8 "${ONE[@]}" --group 50:4096 --direct
# Links in series: one CUBIC flow, RTT 50 ms; the first link the 10 Mbit/s bottleneck (125 kB
# queue), the others 10 Gbit/s access links (bench_sim --chain).
CHAIN=(--cca cubic --rate-bps 1e7 --queue-bytes 125000 --group 50:1)
bench_case chain-1 5 10 "${CHAIN[@]}" --chain 1
bench_case chain-20 5 10 "${CHAIN[@]}" --chain 20
bench_case chain-200 5 10 "${CHAIN[@]}" --chain 200
[ "$QUICK" = 1 ] || bench_case chain-2000 1 3 "${CHAIN[@]}" --chain 2000
# A constellation path (the serving satellite chosen every 15 s, the delay from the geometry every
# 100 ms step; BBR, 20 Mbit/s up).
[ "$QUICK" = 1 ] || cli_case constellation-frankfurt 15 45 "$ROOT/scenarios/constellation-frankfurt.toml"

python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"{'case':26} {'M instr / sim-s':>16} {'segments / sim-s':>17} {'instr / segment':>16} {'instr / hop':>12} {'peak RSS MB':>12}")
for r in rows:
    f = lambda k, fmt: (fmt.format(r[k]) if r.get(k) is not None else "-")
    print(f"{r['case']:26} {r['instructions_per_sim_s'] / 1e6:16.1f} {f('segments_per_sim_s', '{:.0f}'):>17} "
          f"{f('instructions_per_segment', '{:.0f}'):>16} {f('instructions_per_hop', '{:.0f}'):>12} "
          f"{(str(round(r['peak_rss_kb'] / 1024, 1)) if r.get('peak_rss_kb') else '-'):>12}")
PY
echo "raw: $results"
