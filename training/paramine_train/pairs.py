"""Labeled sentence pairs, read through paramine's own reader, and the shared data folder's sources.

Python does not parse pair files itself: `paramine pairs dump FILE...` (src/bench/pairs-command.ts over
src/corpus/pairs.ts and the label schemes) writes every pair as a JSON line {s1, s2, label, positive, scheme,
source, where}, so the benchmark and the training scripts see the same pairs, formats, label schemes and
file:line errors. It needs the TypeScript build (`npm run build:ts`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .common import paramine


@dataclass(frozen=True)
class Pair:
    s1: str
    s2: str
    label: int  # 1 = paraphrase, 0 = not (binary view); the file's own label string is meta["label"]
    source: str
    meta: dict = field(default_factory=dict, compare=False, hash=False)


class PairFileError(ValueError):
    """A pair file paramine's reader refused; the message is its (file:line: ...) error."""


def _cache_file(paths: list[str | Path], positive: str | None) -> Path | None:
    """$PARAMINE_PAIRS_CACHE/<hash of the files' names, sizes and --positive>.jsonl: a machine without node (a GPU
    machine) reads the dumps a machine with node wrote there."""
    cache = os.environ.get("PARAMINE_PAIRS_CACHE")
    if not cache:
        return None
    key = json.dumps([[Path(p).name, Path(p).stat().st_size if Path(p).exists() else None] for p in paths] + [positive])
    return Path(cache) / f"{hashlib.sha256(key.encode()).hexdigest()[:20]}.jsonl"


def dump(paths: list[str | Path], positive: str | None = None) -> list[dict]:
    """The JSON lines of `paramine pairs dump` for these files (in order), texts stripped."""
    cached = _cache_file(paths, positive)
    rows = _read_cache(cached) if cached is not None and cached.exists() else _dump_with_node(paths, positive, cached)
    for row in rows:  # the built-in readers always stripped their texts; keep the training rows identical
        row["s1"], row["s2"] = row["s1"].strip(), row["s2"].strip()
    return rows


def _read_cache(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _dump_with_node(paths: list[str | Path], positive: str | None, cached: Path | None) -> list[dict]:
    cmd = ["pairs", "dump", *map(str, paths)]
    if positive:
        cmd += ["--positive", positive]
    r = paramine("reading pairs", *cmd)
    if r.returncode != 0:
        raise PairFileError(r.stderr.strip().removeprefix("paramine: "))
    rows = [json.loads(line) for line in r.stdout.splitlines() if line]
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows), encoding="utf-8")
    return rows


def line_of(where: str) -> int:
    return int(where.rsplit(":", 1)[1])


def read_pairs(path: str | Path, source: str, positive: str | None = None) -> list[Pair]:
    """Every pair of one file as Pair records (label 1/0 from the file's label scheme; unknown labels -> 0)."""
    return [
        Pair(
            r["s1"],
            r["s2"],
            1 if r["positive"] else 0,
            source,
            {"line": line_of(r["where"]), "where": r["where"], "label": r["label"]},
        )
        for r in dump([path], positive)
    ]


def norm_key(s: str) -> str:
    """Loose identity key used to keep validation sentences out of training data."""
    return " ".join(s.lower().split())


class UnionFind:
    """Paraphrase groups: connected components over the pairs of a source."""

    def __init__(self):
        self.p: dict[str, str] = {}

    def find(self, x: str) -> str:
        p = self.p.setdefault(x, x)
        while p != x:
            self.p[x] = self.p.setdefault(p, p)
            x, p = p, self.p[p]
        return x

    def union(self, a: str, b: str):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.p[ra] = rb


# ---------------------------------------------------------------------------------------------------------------
# the shared data folder (../shared/data, see its README.md)
# ---------------------------------------------------------------------------------------------------------------

FILES = {
    "mrpc": "mrpc/train.tsv",
    "multipit-expert": "multipit/expert/train.csv",
    "multipit-expert-val": "multipit/expert/val.csv",
    "multipit-auto": "multipit/auto/train.csv",
    "multipit-auto-val": "multipit/auto/val.csv",
    "parasci-acl": "parasci/acl/train.src",
    "parasci-acl-val": "parasci/acl/val.src",
    "parasci-arxiv-val": "parasci/arxiv/val.src",
    "turku": "turku/opus-pb-dev.json",
}


def read_source(data: Path, name: str, source: str | None = None) -> list[Pair]:
    """One of the data folder's files by its FILES name."""
    path = Path(data) / FILES[name]
    if not path.exists():
        sys.exit(f"{path} not found (expected ../shared/data, see its README.md)")
    return read_pairs(path, source or name)


def mrpc_split(mrpc: list[Pair], frac: float, seed: int) -> tuple[list[Pair], list[Pair]]:
    """Seeded split of MRPC train: the held-out part is `round(frac * n)` rows drawn by random.Random(seed)."""
    import random

    idx = list(range(len(mrpc)))
    random.Random(seed).shuffle(idx)
    held = set(idx[: round(frac * len(mrpc))])
    return [p for i, p in enumerate(mrpc) if i not in held], [p for i, p in enumerate(mrpc) if i in held]


def mrpc_heldout_lines(path: Path) -> set[int]:
    """The MRPC train rows held out from every model (1-based line numbers in mrpc/train.tsv)."""
    if not path.exists():
        sys.exit(f"{path} not found: it lists the MRPC rows held out by paramine-train reranker")
    doc = json.loads(path.read_text())
    lines = set(doc["lines"])
    assert len(lines) == doc["count"], f"{path}: {len(lines)} lines but count {doc['count']}"
    return lines


def nmr_sentences(data: Path) -> list[str]:
    """MultiPIT NMR: every source sentence and reference (not a pair file: source -> list of paraphrases)."""
    nmr = Path(data) / "multipit/nmr/nmr.json"
    if not nmr.exists():
        return []
    return [s for src, refs in json.loads(nmr.read_text(encoding="utf-8")).items() for s in (src, *refs)]


def sentence_keys(pairs: list[Pair]) -> set[str]:
    return {norm_key(s) for p in pairs for s in (p.s1, p.s2)}
