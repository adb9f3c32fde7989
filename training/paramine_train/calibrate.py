"""Ranking that can only help: the rerank order combines the bi-encoder's cosine with the cross-encoder's
probability through a logistic calibration, fitted on validation candidates and written into the model's
config.json as `paramine.calibration`:

    p = sigmoid(w_logit * logit(P_ce(paraphrase)) + w_cosine * cosine + bias)

where P_ce is the summed probability of the positive labels (clipped to [1e-6, 1 - 1e-6] before the logit). The
search core orders the reranked candidates by p (only: labels, reported probabilities and filters stay the
cross-encoder's, since p is the chance of being a query's one gold paraphrase, not P(paraphrase)). The calibration
belongs to one encoder (its cosines): `encoder` names it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from .common import log
from .encode import ort_session, predict_torch, served_batch, softmax

CLIP = 1e-6


def positive_indices(model_dir: Path) -> list[int]:
    cfg = json.loads((Path(model_dir) / "config.json").read_text())
    id2label = {int(k): v for k, v in cfg["id2label"].items()}
    pos = cfg.get("paramine", {}).get("positive_labels") or [
        v for v in id2label.values() if v.lower() in ("1", "paraphrase")
    ]
    return [i for i, v in id2label.items() if v in pos]


def _utf16(s: str) -> bytes:
    return s.encode("utf-16-be")


def canonical_pair(a: str, b: str, order: str = "shorter-first") -> tuple[str, str]:
    """The pair in the order the model reads it, the same for (a, b) and (b, a): src/rerank/core.ts's
    canonicalPair (lengths in UTF-16 code units, ties broken by code-unit order), so a score computed here is the
    one the service reports."""
    la, lb = len(_utf16(a)), len(_utf16(b))
    by_length = la - lb if order == "shorter-first" else lb - la
    return (a, b) if by_length < 0 or (by_length == 0 and _utf16(a) <= _utf16(b)) else (b, a)


def pair_order_of(model_dir: Path) -> str:
    cfg = Path(model_dir) / "config.json"
    block = json.loads(cfg.read_text()).get("paramine", {}) if cfg.exists() else {}
    return block.get("pair_order", "shorter-first")


def score_pairs(
    model_dir: Path,
    pairs: list[tuple[str, str]],
    threads: int,
    batch: int = 64,
    onnx: Path | None = None,
    raw: bool = False,
) -> list[float]:
    """P(positive) of each (s1, s2) pair under the cross-encoder in `model_dir`, as the service reports it (in the
    model's canonical pair order, and through
    config.json's `paramine.label_calibration` when there is one; `raw`: the model's own softmax, e.g. a teacher's
    targets for distillation): its model.onnx by default, or, in a training checkpoint (PyTorch weights, no graph),
    the PyTorch model on the GPU when there is one."""
    from .label_calibration import apply

    order = pair_order_of(model_dir)
    p = _score_raw(model_dir, [canonical_pair(a, b, order) for a, b in pairs], threads, batch, onnx)
    cal = None if raw else label_calibration_of(model_dir)
    return p if cal is None else [float(x) for x in apply(cal, p)]


def label_calibration_of(model_dir: Path) -> dict | None:
    cfg = Path(model_dir) / "config.json"
    return json.loads(cfg.read_text()).get("paramine", {}).get("label_calibration") if cfg.exists() else None


def _score_raw(
    model_dir: Path, pairs: list[tuple[str, str]], threads: int, batch: int, onnx: Path | None
) -> list[float]:
    import numpy as np
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    max_len = json.loads((Path(model_dir) / "tokenizer_config.json").read_text()).get("model_max_length", 128)
    pos = positive_indices(model_dir)
    if onnx is None and not (Path(model_dir) / "model.onnx").exists():
        return _score_torch(model_dir, tok, pairs, min(max_len, 512), batch, pos)
    graph = onnx or Path(model_dir) / "model.onnx"
    sess = ort_session(graph, threads)
    names = {i.name for i in sess.get_inputs()}
    batch = served_batch(graph, batch)
    out = np.zeros(len(pairs))
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    for b in range(0, len(order), batch):
        ids = order[b : b + batch]
        enc = tok(
            [pairs[i][0] for i in ids],
            [pairs[i][1] for i in ids],
            truncation=True,
            max_length=min(max_len, 512),
            padding=True,
            return_tensors="np",
        )
        logits = sess.run(["logits"], {k: enc[k].astype("int64") for k in names if k in enc})[0]
        out[ids] = softmax(logits)[:, pos].sum(1)
    return out.tolist()


def _score_torch(model_dir: Path, tok, pairs, max_len: int, batch: int, pos: list[int]) -> list[float]:
    from collections import namedtuple

    from transformers import AutoModelForSequenceClassification

    from .common import torch_device

    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir)).to(torch_device())
    two = namedtuple("two", "s1 s2")
    logits = predict_torch(model, tok, [two(a, b) for a, b in pairs], max_len, batch)
    return softmax(logits)[:, pos].sum(1).tolist()


def features(p_ce: float, cos: float) -> list[float]:
    p = min(max(p_ce, CLIP), 1 - CLIP)
    return [math.log(p / (1 - p)), cos]


def apply(cal: dict, p_ce: float, cos: float) -> float:
    z = sum(w * x for w, x in zip([cal["w_logit"], cal["w_cosine"]], features(p_ce, cos))) + cal["bias"]
    return 1 / (1 + math.exp(-z))


def fit_ranking(rows: list[dict], scores: dict, alphas=(0, 0.25, 0.5, 1, 2, 4, 8, 16, 32)) -> dict:
    """A calibration that keeps both inputs pointing the same way: the direction z = logit(P) + a * cosine with
    a >= 0 that ranks the fit queries best (MRR@K), then a one-feature logistic regression z -> gold for the scale
    and bias, so p = sigmoid(w * z + b) with w_logit = w, w_cosine = w * a. (A free two-feature regression on
    gold labels can give cosine a negative weight: within the top K, near-restatements that are not the gold
    sit at the highest cosines.)"""

    def mrr(a):
        return ranking(rows, scores, lambda p, c: features(p, c)[0] + a * c)["mrr"]

    best = max(alphas, key=mrr)
    xs, ys = [], []
    for r in rows:
        for i, c in enumerate(r["cands"]):
            f = features(scores[(r["query"], c["text"])], c["cos"])
            xs.append([f[0] + best * f[1]])
            ys.append(int(r["gold_rank"] == i + 1))
    from sklearn.linear_model import LogisticRegression

    m = LogisticRegression(max_iter=1000).fit(xs, ys)
    w = float(m.coef_[0][0])
    return {
        "w_logit": round(w, 6),
        "w_cosine": round(w * best, 6),
        "bias": round(float(m.intercept_[0]), 6),
        "alpha": best,
        "fit_mrr_by_alpha": {str(a): mrr(a) for a in alphas},
    }


def ranking(rows: list[dict], scores: dict, key) -> dict:
    """Top-1 / top-10 / MRR@K of the gold among each row's candidates, ordered by `key(p_ce, cos)`; queries whose
    gold is not among the candidates count as misses. The stable sort keeps the cosine order on ties."""
    top1 = top10 = 0
    rr = 0.0
    for r in rows:
        order = sorted(
            range(len(r["cands"])),
            key=lambda i: -key(scores[(r["query"], r["cands"][i]["text"])], r["cands"][i]["cos"]),
        )
        if r["gold_rank"] is None:
            continue
        pos = order.index(r["gold_rank"] - 1) + 1
        top1 += pos == 1
        top10 += pos <= 10
        rr += 1 / pos
    n = max(1, len(rows))
    return {"queries": len(rows), "top1": round(top1 / n, 4), "top10": round(top10 / n, 4), "mrr": round(rr / n, 4)}


def score_candidates(model_dir: Path, rows: list[dict], threads: int, cache: Path | None = None) -> dict:
    """P(positive) of every (query, candidate) pair; cached in `cache` (JSON lines) per model graph sha256."""
    from .common import sha256

    pairs = sorted({(r["query"], c["text"]) for r in rows for c in r["cands"]})
    graph = Path(model_dir) / "model.onnx"
    # one-pair-per-run scores get a file of their own: caches written before served_batch hold batched scores
    per_pair = "-per-pair" if graph.exists() and served_batch(graph, 2) == 1 else ""
    # reported probabilities: a label calibration changes them, so its parameters are part of the key
    lc = label_calibration_of(model_dir)
    scale = f"-lc{lc['a']:.6g}_{lc['b']:.6g}" if lc else ""
    path = cache / f"scores-{sha256(graph)[:16]}{per_pair}{scale}.jsonl" if cache else None
    known = {}
    if path and path.exists():
        for line in open(path, encoding="utf-8"):
            x = json.loads(line)
            known[(x["q"], x["c"])] = x["p"]
    todo = [p for p in pairs if p not in known]
    log(f"scoring {len(todo)} candidate pairs with {model_dir} ({len(pairs) - len(todo)} cached)")
    new = dict(zip(todo, score_pairs(model_dir, todo, threads))) if todo else {}
    if path and new:
        with open(path, "a", encoding="utf-8") as f:
            for (q, c), p in new.items():
                f.write(json.dumps({"q": q, "c": c, "p": p}, ensure_ascii=False) + "\n")
    return {**known, **new}


def compare(rows: list[dict], scores: dict, cal: dict | None) -> dict:
    """Bi-encoder alone, cross-encoder alone and (with `cal`) the calibrated order, on the same candidates."""
    out = {"bi-encoder": ranking(rows, scores, lambda p, c: c), "cross-encoder": ranking(rows, scores, lambda p, c: p)}
    if cal:
        out["calibrated"] = ranking(rows, scores, lambda p, c: apply(cal, p, c))
    return out
