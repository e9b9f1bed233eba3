#!/usr/bin/env bash
# Every benchmark, one line each (make bench). Options are passed to each, e.g. --quick.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash bench/sim/run.sh "$@"
bash bench/emu/run.sh "$@"
