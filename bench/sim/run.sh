#!/usr/bin/env bash
# Simulator benchmark: satcc's simulator and ns-3 on the same dumbbell cases, in one run
# (htsim beside satcc: bench/sim/htsim.sh).
#
#   bash bench/sim/run.sh            full cases (ns-3's case b alone takes ~8 min)
#   bash bench/sim/run.sh --quick    every case shortened to 5 s simulated, one run each
#   options: --cases a,b,c,d   which cases (default a,b,c,d; d runs satcc only)
#            --reps N          runs per small case and tool (default 3; the median is shown)
#            --no-ns3          satcc only
#            --ns3-d           also run case d on ns-3 (about an hour on a 2-core machine)
#
# Installs what it needs if missing (as root, with apt-get: ns3, libns3-dev, g++), compiles
# bench/sim/ns3_dumbbell.cc with g++ -O3 against the installed ns-3, builds the satcc twin
# (crates/satcc-sim/examples/bench_sim.rs) in release mode, runs both with identical flags,
# and prints a table (bench/sim/report.py). Raw results: bench/out/sim/<date>/results.jsonl.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

ORIG_ARGS="$*"
QUICK=0
CASES="a,b,c,d"
REPS=3
NS3=1
NS3_D=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --cases) CASES="$2"; shift ;;
    --reps) REPS="$2"; shift ;;
    --no-ns3) NS3=0 ;;
    --ns3-d) NS3_D=1 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$QUICK" = 1 ] && REPS=1

# --- what the benchmark needs --------------------------------------------------------------
need_apt=()
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
if [ "$NS3" = 1 ]; then
  command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
  [ -f /usr/include/ns3/core-module.h ] || need_apt+=(ns3 libns3-dev)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing: ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "run.sh: missing ${need_apt[*]} and cannot apt-get install (need root and apt-get);" >&2
    echo "        install them, or run with --no-ns3" >&2
    exit 1
  fi
fi
command -v cargo >/dev/null 2>&1 || { echo "run.sh: cargo not found (install Rust: rustup.rs)" >&2; exit 1; }

OUT="bench/out/sim/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
BIN="$ROOT/target/release/examples/bench_sim"
NS3BIN="$ROOT/target/bench/ns3_dumbbell"

echo "== building"
cargo build --release -q -p satcc-sim --example bench_sim
if [ "$NS3" = 1 ]; then
  mkdir -p "$(dirname "$NS3BIN")"
  if [ ! -x "$NS3BIN" ] || [ bench/sim/ns3_dumbbell.cc -nt "$NS3BIN" ]; then
    g++ -O3 -std=c++17 bench/sim/ns3_dumbbell.cc -o "$NS3BIN" \
      -lns3-core -lns3-network -lns3-internet -lns3-point-to-point -lns3-applications -lns3-traffic-control
  fi
fi

# CUBIC if the registry has it (the figures that matter); Reno otherwise, said loudly.
# The list read whole first: `grep -q` would close the pipe at its match, and under pipefail
# bench_sim's failed write (broken pipe) would make cubic look absent.
CCAS="$("$BIN" --list-ccas)"
if grep -qx cubic <<< "$CCAS"; then CCA=cubic; else
  CCA=reno; echo "NOTE: cubic is not in satcc's registry yet; cases a, b, d use reno"
fi
HAVE_HYBLA=0
grep -qx hybla <<< "$CCAS" && HAVE_HYBLA=1

# --- the cases -------------------------------------------------------------------------------
# add_case NAME DESCRIPTION "FLAGS (the same for both tools)" NS3_RUNS [WHY_NS3_NOT_RUN]
secs() { if [ "$QUICK" = 1 ]; then echo 5; else echo "$1"; fi; }
declare -a NAMES FLAGS NS3REPS DESCS WHY
add_case() { NAMES+=("$1"); DESCS+=("$2"); FLAGS+=("$3"); NS3REPS+=("$4"); WHY+=("${5:-}"); }
# ns-3's cost per ACK grows with the window (ns3-baseline.md): even 5 s of the 1 Gbit/s
# cases take it minutes, so --quick runs them on satcc only.
SLOW="skipped in --quick: minutes even at 5 s"
# 1 BDP = rate x RTT / 8 bytes (for b: the longest RTT, as satcc's "1 BDP" resolves it).
add_case a "1 $CCA, 100 Mbit/s, RTT 50 ms, 1 BDP drop-tail, $(secs 60) s" \
  "--cca $CCA --rate-bps 100e6 --group 50:1 --queue-bytes 625000 --secs $(secs 60)" "$REPS"
if [ "$QUICK" = 1 ]; then B_NS3=0; else B_NS3=1; fi
add_case b "16 vs 16 $CCA, 1 Gbit/s, RTT 2 / 128 ms, 1 BDP (128 ms), $(secs 60) s" \
  "--cca $CCA --rate-bps 1e9 --group 2:16 --group 128:16 --queue-bytes 16000000 --secs $(secs 60)" "$B_NS3" "$SLOW"
if [ "$HAVE_HYBLA" = 1 ]; then
  add_case c "1 hybla, 10 Mbit/s, RTT 550 ms, loss 1e-4, MSS 1000, 1000 pkt, $(secs 200) s" \
    "--cca hybla --rate-bps 10e6 --group 550:1 --queue-pkts 1000 --loss 1e-4 --mss 1000 --secs $(secs 200)" "$REPS"
else
  echo "NOTE: hybla is not in satcc's registry; case c skipped"
fi
if [ "$QUICK" = 1 ]; then D_WHY="$SLOW"; else D_WHY="about an hour on a 2-core machine (--ns3-d runs it)"; fi
add_case d "1 $CCA, 1 Gbit/s, RTT 100 ms, 1 BDP drop-tail, $(secs 60) s" \
  "--cca $CCA --rate-bps 1e9 --group 100:1 --queue-bytes 12500000 --secs $(secs 60)" "$NS3_D" "$D_WHY"

load1() { cut -d' ' -f1 /proc/loadavg; }

run_one() { # case tool rep command...
  local c="$1" tool="$2" rep="$3"; shift 3
  local before after line
  before=$(load1)
  line=$("$@")
  after=$(load1)
  printf '{"case":"%s","rep":%s,"load1_before":%s,"load1_after":%s,"result":%s}\n' \
    "$c" "$rep" "$before" "$after" "$line" >> "$OUT/results.jsonl"
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print("   %-8s rep %s  wall %8.3f s  cpu %8.3f s  segments %9d  goodput %7.2f Mbit/s  (load %s)" % (r["tool"], sys.argv[2], r["wall_s"], r["cpu_s"] or 0, r["data_segments"], r["goodput_total_bps"]/1e6, sys.argv[3]))' \
    "$line" "$rep" "$before"
}

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
  echo "rustc: $(rustc --version)"
  [ "$NS3" = 1 ] && echo "ns-3: $(dpkg-query -W -f='${Version}' libns3-dev 2>/dev/null || echo unknown), g++ $(g++ -dumpversion)"
  echo "command: bash bench/sim/run.sh $ORIG_ARGS"
  echo "mode: $([ "$QUICK" = 1 ] && echo quick || echo full), reps $REPS"
  echo "uptime at start: $(uptime)"
} | tee "$OUT/meta.txt"

IFS=',' read -r -a WANT <<< "$CASES"
for i in "${!NAMES[@]}"; do
  c="${NAMES[$i]}"
  [[ " ${WANT[*]} " == *" $c "* ]] || continue
  echo "== case $c: ${DESCS[$i]}"
  printf '%s|%s|%s\n' "$c" "${DESCS[$i]}" "$([ "$NS3" = 1 ] && echo "${WHY[$i]}" || echo "--no-ns3")" >> "$OUT/cases.txt"
  # shellcheck disable=SC2206
  args=(${FLAGS[$i]})
  for r in $(seq 1 "$REPS"); do run_one "$c" satcc "$r" "$BIN" "${args[@]}"; done
  if [ "$NS3" = 1 ]; then
    n="${NS3REPS[$i]}"
    if [ "$n" = 0 ]; then
      echo "   ns-3     not run: ${WHY[$i]}"
    fi
    for r in $(seq 1 "$n"); do run_one "$c" ns-3 "$r" "$NS3BIN" "${args[@]}"; done
  fi
  # Case a as a user runs it: `satcc sim` on its scenario file (start-up, resolve,
  # simulation, results written), wall time of the whole process, beside ns-3's case a.
  # bench/cli/case-a.toml is the same network as the flags above (no host noise), so the
  # CLI run delivers the very segments bench_sim does.
  if [ "$c" = a ] && [ "$QUICK" = 0 ] && [ -x "$ROOT/.venv/bin/satcc" ]; then
    for r in $(seq 1 "$REPS"); do
      python3 - "$ROOT/.venv/bin/satcc" "$OUT" "$r" <<'PY'
import json, os, subprocess, sys, time
satcc, out, rep = sys.argv[1:4]
t = time.perf_counter()
c0 = os.times()
subprocess.run([satcc, "sim", "bench/cli/case-a.toml", "--out", f"{out}/cli-a",
                "--force"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - t
c1 = os.times()
cpu = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
with open(f"{out}/cli-a/summary.json") as f:
    flows = json.load(f)["flows"]
segs = sum(fl["sent_packets"] for fl in flows)
goodput = sum(fl["goodput_bps"] for fl in flows)
with open(f"{out}/cli.jsonl", "a") as f:
    f.write(json.dumps({"case": "a", "rep": int(rep), "wall_s": wall, "cpu_s": cpu,
                        "data_segments": segs, "goodput_total_bps": goodput}) + "\n")
print(f"   satcc sim (CLI, end to end) rep {rep}  wall {wall:8.3f} s  cpu {cpu:8.3f} s"
      f"  segments {segs:9d}  goodput {goodput / 1e6:7.2f} Mbit/s")
PY
    done
  fi
done
echo "uptime at end: $(uptime)" | tee -a "$OUT/meta.txt"
echo
python3 bench/sim/report.py "$OUT" | tee "$OUT/report.txt"
