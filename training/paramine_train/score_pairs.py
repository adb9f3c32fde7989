#!/usr/bin/env python3
"""Scores sentence pairs with a cross-encoder, resumably, into a gzipped JSON-lines file: one
{"s1", "s2", "p"} row a pair (p = P(paraphrase), the positive labels summed, the model's own softmax: not
through a label calibration, since these are distillation targets), in input order.

A teacher's scores over 10^5 candidate pairs take longer than one working session on 2 cores; this writes them
in chunks (each a gzip member, flushed to disk), so a run cut short (`--max-minutes`, a crash, the end of a
session) goes on where it stopped when started again with the same arguments, and the file is small enough to
commit as the intermediate artifact the student's distillation (`paramine-train reranker --task distill
--distill-pairs FILE`) reads without scoring again.

Input: JSON lines with `s1`/`s2`, or `paramine mine` output (`a.text`/`b.text`), or candidates.py rows
(`query` + `cands`); pairs are de-duplicated (normalized, either order) and shuffled with --seed before
--limit. `--relabel LAMBDA` adds `label` = 1 if p >= LAMBDA else 0 (MultiPIT's label cleaning of its
automatically collected pairs, which the paper flips at 0.25).

  paramine-train score-pairs --model models/paramine-paraphrase-mpnet-base \
      --pairs build/distill/mined.jsonl --out build/distill/teacher-scores.jsonl.gz --max-minutes 100
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import time
from pathlib import Path

from .calibrate import score_pairs
from .common import log, set_threads
from .pairs import norm_key


def pairs_of(row: dict) -> list[tuple[str, str]]:
    if "s1" in row:
        return [(row["s1"], row["s2"])]
    if "a" in row and isinstance(row["a"], dict):
        return [(row["a"]["text"], row["b"]["text"])]
    if "query" in row:
        return [(row["query"], c["text"]) for c in row["cands"]]
    if "sentence1" in row:
        return [(row["sentence1"], row["sentence2"])]
    raise SystemExit(f"a row with neither s1/s2, a/b, query/cands nor sentence1/sentence2: {list(row)[:6]}")


def read_pairs(paths: list[str], limit: int, seed: int) -> list[tuple[str, str]]:
    import csv

    seen, out = set(), []
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            rows = csv.DictReader(f) if path.endswith((".csv", ".csv.gz")) else (json.loads(line) for line in f)
            for r in rows:
                for a, b in pairs_of(r):
                    key = pair_key(a, b)
                    if key[0] != key[1] and key not in seen:
                        seen.add(key)
                        out.append((a, b))
    random.Random(seed).shuffle(out)
    return out[:limit] if limit else out


def pair_key(a: str, b: str) -> tuple[str, str]:
    ka, kb = norm_key(a), norm_key(b)
    return min(ka, kb), max(ka, kb)


def done_keys(out: Path) -> set[tuple[str, str]]:
    """Pairs already written (a torn last member, from a crash mid-write, is cut off and redone): a restart skips
    them whatever order its input comes in (a rebuilt candidate file may list the same pairs differently)."""
    if not out.exists():
        return set()
    keys, good = set(), []
    try:
        with gzip.open(out, "rt", encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                good.append(line)
                keys.add(pair_key(r["s1"], r["s2"]))
    except (EOFError, OSError, json.JSONDecodeError):
        log(f"{out}: a torn chunk at the end after {len(good)} rows; rewriting the file without it")
        tmp = out.with_suffix(".tmp")
        with gzip.open(tmp, "wt", encoding="utf-8") as f:
            f.writelines(good)
        tmp.replace(out)
    return keys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="cross-encoder directory (its model.onnx)")
    ap.add_argument("--pairs", nargs="+", required=True)
    ap.add_argument("--out", required=True, help="gzipped JSON lines (appended to on resume)")
    ap.add_argument("--limit", type=int, default=0, help="at most this many pairs (after shuffling)")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--chunk", type=int, default=2000, help="pairs per written chunk")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-minutes", type=float, default=0, help="stop after the chunk that passes this (0: off)")
    ap.add_argument("--relabel", type=float, default=None, metavar="LAMBDA", help="add label = p >= LAMBDA")
    args = ap.parse_args()
    set_threads(args.threads)
    pairs = read_pairs(args.pairs, args.limit, args.seed)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = done_keys(out)
    todo = [p for p in pairs if pair_key(*p) not in done]
    log(f"{len(pairs)} pairs; {len(pairs) - len(todo)} already scored in {out}")
    t0, scored = time.time(), 0
    for b in range(0, len(todo), args.chunk):
        chunk = todo[b : b + args.chunk]
        p = score_pairs(Path(args.model), chunk, args.threads, raw=True)  # the model's own softmax: targets
        rows = [
            {"s1": a, "s2": s, "p": round(x, 5), **({} if args.relabel is None else {"label": int(x >= args.relabel)})}
            for (a, s), x in zip(chunk, p)
        ]
        with gzip.open(out, "at", encoding="utf-8") as f:  # one gzip member a chunk
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        scored += len(chunk)
        el = time.time() - t0
        left = len(todo) - b - len(chunk)
        log(
            f"{len(pairs) - left}/{len(pairs)} scored ({scored / el:.1f} pairs/s, "
            f"eta {left / max(scored / el, 1e-9) / 60:.1f} min)"
        )
        if args.max_minutes and el > args.max_minutes * 60:
            log(f"STOP: --max-minutes {args.max_minutes}; run again with the same arguments to go on")
            return
    log(f"done: {out}")


if __name__ == "__main__":
    main()
