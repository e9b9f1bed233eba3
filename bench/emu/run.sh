#!/usr/bin/env bash
# Emulator benchmark (root): satcc-linkd's delay/rate fidelity and throughput limit against a
# plain veth pair, then the sim-vs-emu goodput grid (cubic, bbr, reno x rate x RTT x loss),
# then study 000's MSS sweep through a real OpenVPN tunnel (when openvpn is installed).
#
#   bash bench/emu/run.sh            full (about 8 minutes on 2 cores)
#   bash bench/emu/run.sh --quick    shorter runs (about 4 minutes)
#
# Raw results: bench/out/emu/<date>/{fidelity,sim_vs_emu}.json. Skipped (with a note) when not
# root: namespaces and AF_PACKET need it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
if [ "$(id -u)" != 0 ]; then
  echo "bench/emu: skipped (needs root for network namespaces)"; exit 0
fi
PY="${PYTHON:-$ROOT/.venv/bin/python}"
OUT="bench/out/emu/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
cargo build -q -p satcc-emu --release
"$PY" bench/emu/fidelity.py "$@" --json "$OUT/fidelity.json"
"$PY" bench/emu/sim_vs_emu.py "$@" --json "$OUT/sim_vs_emu.json"
if command -v openvpn >/dev/null; then
  "$PY" bench/emu/vpn_mss.py --json "$OUT/vpn_mss.json"
fi
echo "results: $OUT"
