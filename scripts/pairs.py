"""Readers for the labeled sentence-pair files in ../shared/data (see its README.md).

Every reader returns a list of `Pair` records. Labels are kept as ints (1 = paraphrase, 0 = not) where the
file has them; files that are positive-only (MultiPIT_Auto, ParaSCI) give label 1.

Standard library only, so the benchmark helpers and tests can import it without torch.
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass, field
from pathlib import Path

# MRPC and MultiPIT have a few very long fields; the csv default limit (128 KiB) is fine, but be explicit.
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


@dataclass(frozen=True)
class Pair:
    s1: str
    s2: str
    label: int
    source: str  # "mrpc", "multipit-expert", "multipit-auto", "parasci-acl", "mined", ...
    meta: dict = field(default_factory=dict, compare=False, hash=False)


def read_mrpc(path: str | Path, source: str = "mrpc") -> list[Pair]:
    """MRPC TSV: header `Quality  #1 ID  #2 ID  #1 String  #2 String`, UTF-8 with BOM, CRLF.

    The strings contain unbalanced double quotes, so the file must be read with QUOTE_NONE (the default
    csv dialect would swallow several lines into one field). `meta` keeps the 1-based line number in the
    file (header = line 1) and the two ids: ids are not unique (a few added rows carry -1/-1), the line
    number is.
    """
    out: list[Pair] = []
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader)
        col = {name.strip(): i for i, name in enumerate(header)}
        for k in ("Quality", "#1 String", "#2 String"):
            if k not in col:
                raise ValueError(f"{path}: MRPC header lacks {k!r}: {header}")
        for lineno, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != len(header):
                raise ValueError(f"{path}:{lineno}: expected {len(header)} fields, got {len(row)}")
            out.append(
                Pair(
                    s1=row[col["#1 String"]].strip(),
                    s2=row[col["#2 String"]].strip(),
                    label=int(row[col["Quality"]]),
                    source=source,
                    meta={
                        "line": lineno,
                        "id1": row[col["#1 ID"]] if "#1 ID" in col else None,
                        "id2": row[col["#2 ID"]] if "#2 ID" in col else None,
                    },
                )
            )
    return out


def read_multipit(path: str | Path, source: str = "multipit-expert") -> list[Pair]:
    """MultiPIT CSV `sentence1,sentence2,label` (standard RFC-4180 quoting)."""
    out: list[Pair] = []
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        for lineno, row in enumerate(reader, start=2):
            out.append(
                Pair(
                    s1=row["sentence1"].strip(),
                    s2=row["sentence2"].strip(),
                    label=int(row["label"]),
                    source=source,
                    meta={"line": lineno},
                )
            )
    return out


def read_multipit_auto(path: str | Path, source: str = "multipit-auto") -> list[Pair]:
    """MultiPIT_Auto CSV `sentence1,sentence2`: all pairs positive."""
    out: list[Pair] = []
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        for lineno, row in enumerate(reader, start=2):
            out.append(Pair(row["sentence1"].strip(), row["sentence2"].strip(), 1, source, {"line": lineno}))
    return out


def read_parasci(src_path: str | Path, source: str = "parasci") -> list[Pair]:
    """ParaSCI: `X.src` and its twin `X.tgt`, line-aligned, all pairs positive."""
    src_path = Path(src_path)
    tgt_path = src_path.with_suffix(".tgt")
    with open(src_path, encoding="utf-8") as f:
        src = f.read().split("\n")
    with open(tgt_path, encoding="utf-8") as f:
        tgt = f.read().split("\n")
    # a trailing newline gives one empty last element on each side
    if src and src[-1] == "" and tgt and tgt[-1] == "":
        src, tgt = src[:-1], tgt[:-1]
    if len(src) != len(tgt):
        raise ValueError(f"{src_path}: {len(src)} lines but {tgt_path} has {len(tgt)}")
    return [
        Pair(a.strip(), b.strip(), 1, source, {"line": i})
        for i, (a, b) in enumerate(zip(src, tgt), start=1)
        if a.strip() and b.strip()
    ]


def norm_key(s: str) -> str:
    """Loose identity key used to keep validation sentences out of training data."""
    return " ".join(s.lower().split())
