#!/usr/bin/env bash
# The simulator's golden manifest: every ready scenario through `satcc sim` and `satcc model`,
# plus two quick campaigns, and the sha256 of every result file they write. A speed change to
# the simulator must leave this manifest unchanged (or list each difference and why it is more
# faithful); compare two manifests with `diff`.
#
#   bash bench/sim/golden.sh OUT_DIR            # writes OUT_DIR/manifest.sha256
#   diff OLD/manifest.sha256 NEW/manifest.sha256
#
# Runs `.venv/bin/satcc` from the repository (build it first: `make build`). ~2-4 min on 2 cores.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:?usage: bash bench/sim/golden.sh OUT_DIR}"
SATCC="$ROOT/.venv/bin/satcc"
rm -rf "$OUT"
mkdir -p "$OUT"
cd "$ROOT"
for f in scenarios/*.toml scenarios/fidelity/*.toml; do
  [ "$(basename "$f")" = grid.toml ] && continue
  name="$(basename "$(dirname "$f")")-$(basename "$f" .toml)"
  "$SATCC" sim "$f" --out "$OUT/sim/$name" --json >/dev/null 2>&1
  # the model engine refuses some scenarios (application traffic): the refusal, one line,
  # is part of the manifest
  if ! "$SATCC" model "$f" --out "$OUT/model/$name" --json >/dev/null 2>"$OUT/model-err.txt"; then
    mkdir -p "$OUT/model/$name"
    tail -1 "$OUT/model-err.txt" >"$OUT/model/$name/refused.txt"
  fi
done
rm -f "$OUT/model-err.txt"
for c in study004-1v1 study001-cca; do
  "$SATCC" campaign "campaigns/$c.toml" --quick --out "$OUT/campaign/$c-quick" --jobs 2 \
    --no-progress >/dev/null
done
# A campaign's lock and DuckDB catalog record when runs were made: hash the result files only.
(cd "$OUT" && find sim model campaign -type f \
  ! -name '*.log' ! -name 'campaign.lock' ! -name 'catalog.duckdb*' -print0 \
  | sort -z | xargs -0 sha256sum) >"$OUT/manifest.sha256"
echo "$(wc -l <"$OUT/manifest.sha256") files: $OUT/manifest.sha256"
