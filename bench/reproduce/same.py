"""Whether two `satcc reproduce` output roots hold the same results: each study's claims.json
(but `run`: when and how long) and claims.txt, and every file of the runs (OUT/<study>/<engine>/
<campaign>/runs/<id>/*) and of study 002's design (its .csv, .json, .txt), byte for byte (in
text files the output root's own path written as ROOT).

    .venv/bin/python bench/reproduce/same.py REF_ROOT NEW_ROOT    # exit 1 if anything differs
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

STUDIES = ("000", "001", "002", "003", "004")


def files(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of the bytes (the root's path as ROOT)."""
    out = {}
    paths = [*root.glob("*/*/*/runs/*/*"), *root.glob("002/*/*/*")]
    for p in sorted(paths):
        if p.is_file() and (
            p.parent.parent.name == "runs" or p.suffix in (".csv", ".json", ".txt")
        ):
            data = p.read_bytes()
            if p.suffix in (".csv", ".json", ".txt"):  # text: the root's path as ROOT
                data = data.replace(str(root).encode(), b"ROOT")
            out[str(p.relative_to(root))] = hashlib.sha256(data).hexdigest()
    return out


def claims(root: Path, study: str) -> tuple[dict, str]:
    doc = json.loads((root / study / "claims.json").read_text(encoding="utf-8"))
    doc.pop("run", None)
    text = (root / study / "claims.txt").read_text(encoding="utf-8")
    return json.loads(json.dumps(doc).replace(str(root), "ROOT")), text.replace(str(root), "ROOT")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ref", type=Path)
    p.add_argument("new", type=Path)
    a = p.parse_args()
    a.ref, a.new = a.ref.resolve(), a.new.resolve()
    same = True
    for study in STUDIES:
        if not (a.ref / study / "claims.json").is_file():
            continue
        (jr, tr), (jn, tn) = claims(a.ref, study), claims(a.new, study)
        print(
            f"{study}: claims.json {'same' if jr == jn else 'DIFFERS'}, "
            f"claims.txt {'same' if tr == tn else 'DIFFERS'}"
        )
        same &= jr == jn and tr == tn
    fr, fn = files(a.ref), files(a.new)
    differ = sorted(k for k in fr.keys() | fn.keys() if fr.get(k) != fn.get(k))
    print(
        f"files: {len(fr)} and {len(fn)}, {len(differ)} differ{': ' if differ else ''}"
        + ", ".join(differ[:10])
    )
    same &= not differ
    print("same" if same else "DIFFERENT")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
