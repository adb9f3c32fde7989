#!/usr/bin/env python3
"""MultiPIT_Auto train relabeled by a GPU round's teacher, as a file the data stage reads (`--auto-labels`).

A GPU round (paramine-train gpu-round) returns the teacher's P(paraphrase) of every MultiPIT_Auto train pair as the
`auto` array of scores.npz, in the order of the auto.jsonl.gz that paramine-train gpu-inputs wrote. That order is
rebuilt here from ../shared/data and checked against the round's inputs.sha256, so the scores are joined to the
right pairs; a pair whose teacher probability is under --relabel (the paper's lambda, 0.25) becomes "not
paraphrase".

  paramine-train relabel-auto --round training/distill/gpu-2026-11-27 \
      --out build/multipit-auto-relabeled-h200.jsonl.gz
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from .common import DEFAULT_DATA, log
from .gpu_inputs import allowed, auto_pairs, jsonl, write_gz


def expected_sha(round_dir: Path, name: str) -> str:
    for line in (round_dir / "inputs.sha256").read_text().splitlines():
        digest, _, rest = line.partition("  ")
        if rest.split(" ")[0] == name:
            return digest
    sys.exit(f"{round_dir / 'inputs.sha256'} names no {name}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--round", required=True, help="a GPU round's folder: scores.npz and inputs.sha256")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--relabel", type=float, default=0.25, help="P(paraphrase) under this flips a pair to 0")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import numpy as np

    round_dir = Path(a.round)
    auto = auto_pairs(Path(a.data), allowed(Path(a.data)))
    want = expected_sha(round_dir, "auto.jsonl")
    if hashlib.sha256(jsonl(auto).encode("utf-8")).hexdigest() != want:
        sys.exit(
            f"the MultiPIT_Auto pairs rebuilt from {a.data} are not the round's auto.jsonl (sha256 {want}): "
            "the data or the validation split changed since the round"
        )
    p = np.load(round_dir / "scores.npz")["auto"].astype(np.float32)
    if len(p) != len(auto):
        sys.exit(f"scores.npz has {len(p)} auto scores for {len(auto)} pairs")
    rows = [{**r, "p": round(float(x), 4), "label": int(x >= a.relabel)} for r, x in zip(auto, p)]
    write_gz(Path(a.out), rows)
    flipped = sum(1 - r["label"] for r in rows)
    log(f"{len(rows)} pairs, {flipped} ({100 * flipped / len(rows):.1f}%) under {a.relabel} -> label 0 -> {a.out}")


if __name__ == "__main__":
    main()
