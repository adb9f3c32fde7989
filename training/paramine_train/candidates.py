"""Retrieval candidates for reranking experiments, in Python: what paramine's rerank stage sees (a query and the
first K sentences by cosine among a corpus) for every positive validation pair, so cross-encoders and the
calibration can be scored and fitted offline without rebuilding a 208k-sentence index per try.

The corpus is both sides of the task's pairs plus distractor sentences (one per line, e.g. the file
src/bench/make-distractors.ts writes, optionally only some of its sources); search is exact (cosine), paramine's
own benchmark (`paramine bench retrieval`) measures the same through IVF-PQ. Embeddings are cached per model and
sentence list (resumable chunks), so later tasks and runs reuse them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .common import log, write_json
from .encode import SentenceEncoder
from .pairs import norm_key

CHUNK = 4096


def embed(sentences: list[str], model_dir: Path, onnx: Path | None, cache: Path, threads: int, max_len: int = 256):
    """Vectors of `sentences`, cached under `cache` in chunks (an interrupted run continues where it stopped)."""
    import numpy as np

    key = hashlib.sha256(("\n".join(sentences) + f"|{model_dir}|{onnx}|{max_len}").encode()).hexdigest()[:16]
    d = cache / key
    d.mkdir(parents=True, exist_ok=True)
    enc = None
    parts = []
    for c in range(0, len(sentences), CHUNK):
        f = d / f"{c // CHUNK:05d}.npy"
        if not f.exists():
            enc = enc or SentenceEncoder(model_dir, max_len, onnx=onnx, threads=threads)
            np.save(f, enc.encode(sentences[c : c + CHUNK], batch=64))
            log(f"  embedded {min(c + CHUNK, len(sentences))}/{len(sentences)} -> {d}")
        parts.append(np.load(f))
    return np.concatenate(parts) if parts else np.zeros((0, 1), dtype=np.float32)


def build(pairs, distractors: list[str], model_dir: Path, onnx: Path | None, cache: Path, k: int, threads: int):
    """Per positive pair (s1 != s2 after normalization): the query, its gold, and the top-k corpus sentences by
    cosine (the query's own sentence excluded) with their cosines; `gold_rank` is the gold's 1-based rank among
    them or null. Sentences are deduplicated by normalized text, as paramine's store does."""
    import numpy as np

    def distinct(sents):
        seen, out = set(), []
        for x in sents:
            key = norm_key(x)
            if key and key not in seen:
                seen.add(key)
                out.append(x)
        return out

    # distractors and pairs are embedded (and cached) apart: tasks of one domain share the distractors' vectors
    own = distinct([x for p in pairs for x in (p.s1, p.s2)])
    dis = distinct(distractors)
    own_keys = {norm_key(x) for x in own}
    keep = [i for i, x in enumerate(dis) if norm_key(x) not in own_keys]
    texts = own + [dis[i] for i in keep]
    vec = np.concatenate(
        [embed(own, model_dir, onnx, cache, threads), embed(dis, model_dir, onnx, cache, threads)[keep]]
    )
    index = {norm_key(x): i for i, x in enumerate(texts)}
    queries = [p for p in pairs if p.label == 1 and norm_key(p.s1) != norm_key(p.s2)]
    out = []
    for b in range(0, len(queries), 256):
        part = queries[b : b + 256]
        qi = np.array([index[norm_key(p.s1)] for p in part])
        sims = vec[qi] @ vec.T
        sims[np.arange(len(part)), qi] = -np.inf
        top = np.argpartition(-sims, k, axis=1)[:, :k]
        for j, p in enumerate(part):
            order = sorted(top[j], key=lambda c: -sims[j, c])
            gold = index[norm_key(p.s2)]
            cands = [{"text": texts[c], "cos": round(float(sims[j, c]), 6)} for c in order]
            rank = next((r for r, c in enumerate(order, 1) if c == gold), None)
            full_rank = 1 + int((sims[j] > sims[j, gold]).sum())
            out.append({"query": p.s1, "gold": p.s2, "gold_rank": rank, "gold_full_rank": full_rank, "cands": cands})
    log(
        f"candidates: {len(out)} queries, corpus {len(texts)}, gold in top {k}: "
        f"{sum(r['gold_rank'] is not None for r in out)}"
    )
    return out, len(texts)


def save(path: Path, rows: list[dict], meta: dict):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    write_json(path.with_suffix(".meta.json"), meta)


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in open(path, encoding="utf-8")]
