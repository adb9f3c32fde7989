"""The cross-encoder's other training tasks besides the binary default (reranker.py's build_data):

- turku:   the full Turku label scheme (1, 2, 3, 4, 4<, 4> with flags i, s, spelled canonically) from
           ../shared/data/turku/opus-pb-dev.json, split by sentence groups (no sentence of a validation pair
           occurs in training; the held-out file lines go to OUT/turku-heldout.json, which `paramine bench
           classify --heldout` reads). Each training pair also appears swapped, with `<` and `>` exchanged.
- distill: a student learns a teacher's label probabilities on candidate pairs (JSON lines with s1/s2, e.g. the
           rerank candidates paramine's retrieval gives, see candidates.py), plus the binary labeled data as
           one-hot targets; the teacher is a cross-encoder model directory (its ONNX graph scores the pairs).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

from .calibrate import score_pairs
from .common import log, read_jsonl, write_json, write_rows
from .pairs import Pair, UnionFind, norm_key, read_source

TURKU = re.compile(r"([1-4])([<>]?)([is]*)")


def canonical(label: str) -> str:
    """`4>si` -> `4>is`: base, direction, sorted unique flags (as src/bench/labels.ts spells them)."""
    m = TURKU.fullmatch(label.strip())
    if not m:
        raise ValueError(f"not a Turku label: {label!r}")
    return m.group(1) + m.group(2) + "".join(sorted(set(m.group(3))))


def swapped(label: str) -> str:
    """The label of (s2, s1): subsumption flips direction."""
    return label.translate(str.maketrans("<>", "><"))


def turku_split(pairs: list[Pair], frac: float, seed: int) -> tuple[list[Pair], list[Pair]]:
    """Validation = whole sentence groups (connected by shared normalized sentences), about `frac` of the pairs."""
    uf = UnionFind()
    for p in pairs:
        uf.union(norm_key(p.s1), norm_key(p.s2))
    groups: dict[str, list[Pair]] = {}
    for p in pairs:
        groups.setdefault(uf.find(norm_key(p.s1)), []).append(p)
    keys = sorted(groups)
    random.Random(seed).shuffle(keys)
    val, want = [], round(frac * len(pairs))
    for k in keys:
        if len(val) >= want:
            break
        val += groups[k]
    held = {id(p) for p in val}
    return [p for p in pairs if id(p) not in held], val


def load_turku(data: Path, args) -> tuple[list[Pair], list[Pair], dict[int, str]]:
    """Train / validation pairs with class ids as labels, and id -> label (every canonical label of the file
    and its swapped form, most frequent first)."""
    raw = read_source(data, "turku")
    counts = Counter(canonical(p.meta["label"]) for p in raw)
    names = sorted(set(counts) | {swapped(lb) for lb in counts}, key=lambda lb: (-counts.get(lb, 0), lb))
    label2id = {lb: i for i, lb in enumerate(names)}
    pairs = [Pair(p.s1, p.s2, label2id[canonical(p.meta["label"])], "turku", p.meta) for p in raw]
    train, val = turku_split(pairs, args.turku_heldout, args.seed)
    return train, val, dict(enumerate(names))


def build_turku_data(args, work: Path, out: Path) -> dict:
    train, val, id2label = load_turku(Path(args.data), args)
    label2id = {v: k for k, v in id2label.items()}
    rng = random.Random(args.seed)
    rows = []
    for p in train:
        rows.append({"s1": p.s1, "s2": p.s2, "label": p.label, "source": "turku"})
        rows.append({"s1": p.s2, "s2": p.s1, "label": label2id[swapped(id2label[p.label])], "source": "turku swapped"})
    rng.shuffle(rows)
    lines = sorted(p.meta["line"] for p in val)
    write_json(
        out / "turku-heldout.json",
        {
            "file": "turku/opus-pb-dev.json",
            "rule": f"whole groups of pairs sharing a (normalized) sentence, shuffled "
            f"with random.Random({args.seed}), taken until {args.turku_heldout:.0%} of the pairs; "
            f"'lines' are the lines on "
            f"which the held-out JSON objects start",
            "count": len(val),
            "lines": lines,
        },
    )
    stats = {
        "task": "turku",
        "id2label": {str(k): v for k, v in id2label.items()},
        "train_pairs": len(train),
        "train_rows": len(rows),
        "label_counts_train": dict(Counter(id2label[p.label] for p in train)),
        "validation": {
            "turku-heldout": {"pairs": len(val), "positives": sum(id2label[p.label][0] in "34" for p in val)}
        },
    }
    write_rows(work, rows, stats)
    return stats


def read_candidate_pairs(paths: list[str], limit: int, seed: int) -> list[tuple[str, str, float | None, str]]:
    """Distinct (s1, s2, target, source) from JSON-lines files (gzipped too): rows with s1/s2 and `p` (a teacher's
    score written by paramine-train score-pairs: a soft target) or `label` (a relabeled pair, e.g. MultiPIT_Auto cleaned
    by `paramine-train score-pairs --relabel`: a hard target), or candidates.py rows (query + cands; target None: the
    teacher scores them here)."""
    seen, out = set(), []
    for path in paths:
        for r in read_jsonl(path):
            if "s1" in r:
                hard = "label" in r
                pairs = [
                    (r["s1"], r["s2"], float(r["label"]) if hard else r.get("p"), "relabeled" if hard else "teacher")
                ]
            else:
                pairs = [(r["query"], c["text"], None, "teacher") for c in r["cands"]]
            for a, b, p, src in pairs:
                key = (norm_key(a), norm_key(b))
                if key not in seen and key[0] != key[1]:
                    seen.add(key)
                    out.append((a, b, p, src))
    random.Random(seed).shuffle(out)
    return out[:limit] if limit else out


def build_distill_data(args, labeled: list[dict]) -> tuple[dict, list[dict]]:
    """Teacher probabilities on the candidate pairs, plus the labeled rows as one-hot targets."""
    cand = read_candidate_pairs(args.distill_pairs, 0, args.seed)
    # Never a sentence of a set anything is measured on: the classifier's val sets and the rerank ones.
    from .reranker import load_validation

    val, _, _ = load_validation(Path(args.data), args)
    held = {norm_key(x) for v in val.values() for q in v for x in (q.s1, q.s2)}
    for name in ("parasci-acl-val", "parasci-arxiv-val", "multipit-auto-val"):
        held |= {norm_key(x) for q in read_source(Path(args.data), name) for x in (q.s1, q.s2)}
    before = len(cand)
    cand = [c for c in cand if norm_key(c[0]) not in held and norm_key(c[1]) not in held]
    dropped = before - len(cand)
    cand = cand[: args.distill_limit] if args.distill_limit else cand
    todo = [i for i, c in enumerate(cand) if c[2] is None]
    log(
        f"distill: {len(cand)} candidate pairs, {len(cand) - len(todo)} scored already (paramine-train score-pairs); "
        f"teacher {args.teacher} scores {len(todo)}"
    )
    scores = (
        score_pairs(Path(args.teacher), [cand[i][:2] for i in todo], args.threads, raw=args.distill_scale == "raw")
        if todo
        else []
    )
    p = [c[2] for c in cand]
    # paramine-train score-pairs wrote the raw softmax: the same scale for every target
    if args.distill_scale == "reported":
        from .calibrate import label_calibration_of
        from .label_calibration import apply

        lc = label_calibration_of(Path(args.teacher))
        p = [float(apply(lc, x)) if x is not None and c[3] == "teacher" else x for c, x in zip(cand, p)]
    for i, x in zip(todo, scores):
        p[i] = x
    rows = [
        {"s1": a, "s2": b, "soft": [round(1 - x, 6), round(x, 6)], "source": src} for (a, b, _, src), x in zip(cand, p)
    ]
    rows += [
        {"s1": r["s1"], "s2": r["s2"], "soft": [1.0 - r["label"], float(r["label"])], "source": r["source"]}
        for r in labeled
    ]
    random.Random(args.seed).shuffle(rows)
    relabeled = [x for c, x in zip(cand, p) if c[3] == "relabeled"]
    soft = [x for c, x in zip(cand, p) if c[3] == "teacher"]
    stats = {
        "task": "distill",
        "teacher": args.teacher,
        "teacher_scale": args.distill_scale,
        "candidate_pairs": len(cand),
        "relabeled_pairs": len(relabeled),
        "relabeled_negative": int(sum(x < 0.5 for x in relabeled)),
        "candidate_pairs_dropped_val_overlap": dropped,
        "labeled_rows": len(labeled),
        "teacher_mean_p": round(sum(soft) / max(1, len(soft)), 4),
        "teacher_positive_share": round(sum(x >= 0.5 for x in soft) / max(1, len(soft)), 4),
        "train_rows": len(rows),
    }
    return stats, rows


def turku_metrics(logits, labels, id2label: dict[int, str]) -> dict:
    """Accuracy and weighted F1 over the full labels (the paper's layout), and binary paraphrase F1 (base >= 3)."""
    import numpy as np

    pred = np.asarray(logits).argmax(1)
    gold = np.asarray(labels)
    per, total = {}, len(gold)
    for i, name in id2label.items():
        tp = int(((pred == i) & (gold == i)).sum())
        fp, fn = int(((pred == i) & (gold != i)).sum()), int(((pred != i) & (gold == i)).sum())
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        per[name] = {
            "precision": prec,
            "recall": rec,
            "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0,
            "support": int((gold == i).sum()),
        }
    wf1 = sum(m["f1"] * m["support"] for m in per.values()) / max(1, total)
    pos = np.array([id2label[int(i)][0] in "34" for i in range(len(id2label))])
    bp, bg = pos[pred], pos[gold]
    tp, fp, fn = int((bp & bg).sum()), int((bp & ~bg).sum()), int((~bp & bg).sum())
    bf1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return {
        "n": total,
        "accuracy": round(float((pred == gold).mean()), 4),
        "weighted_f1": round(wf1, 4),
        "f1": round(bf1, 4),
        "binary_accuracy": round(float((bp == bg).mean()), 4),
        "per_label": {
            k: {kk: round(vv, 4) if isinstance(vv, float) else vv for kk, vv in v.items()}
            for k, v in per.items()
            if v["support"]
        },
    }
