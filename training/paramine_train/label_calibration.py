"""The label-calibrate stage of paramine-train reranker: P(paraphrase) as the service reports it, calibrated.

A cross-encoder's softmax is not a probability a user can read: the teacher gives tweets that disagree 0.97-0.99,
and the default labels pairs "paraphrase" from 0.55 up while only ~62% of them are on MultiPIT expert val. Platt
scaling maps the model's logit z = logit(P(paraphrase)) to

    P = sigmoid(a * z + b)        (a > 0: the order and so every ranking is unchanged)

fitted by weighted log-loss on the validation pairs as the service scores them (each set counts once, as for the
label cut), and written into config.json as `paramine.label_calibration`; the runtime (src/rerank/core.ts) applies
it to the logits, so every reported probability, the label cut, `minProbability` and the probability filters are on
the calibrated scale. `paramine.threshold` is re-chosen on that scale by the export stage's rule (best mean F1).
Everything downstream reads the reported scale (calibrate.score_pairs applies the calibration unless asked for the
raw softmax, which distillation targets use): the rerank order's weights (`paramine.calibration`) already written
are carried over to the new scale exactly, and a later calibrate stage fits them on it.

Reported per set: reliability bins, expected calibration error (ECE, 10 equal-width bins) and Brier score before,
after (in-sample) and after 5-fold cross-fitting (each pair scored by a calibration fitted without its fold: the
honest figure); OUT/label-calibration.json, OUT/reliability.svg and a section of the card.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

from .common import log, write_json

MARK = "<!-- label-calibration -->"
RANKING_MARK = "<!-- calibration -->"
BINS = 10
FOLDS = 5
CLIP = 1e-6


def logit(p):
    import numpy as np

    q = np.clip(np.asarray(p, dtype=np.float64), CLIP, 1 - CLIP)
    return np.log(q / (1 - q))


def sigmoid(z):
    import numpy as np

    return 1 / (1 + np.exp(-np.asarray(z, dtype=np.float64)))


def fit_platt(z, y, w) -> tuple[float, float]:
    """(a, b) minimizing the weighted log-loss of sigmoid(a z + b) against y (Newton's method, a tiny ridge)."""
    import numpy as np

    x = np.stack([np.asarray(z, dtype=np.float64), np.ones(len(z))], 1)
    y, w = np.asarray(y, dtype=np.float64), np.asarray(w, dtype=np.float64)
    ridge = 1e-6

    def loss(t):
        m = x @ t  # log(1 + e^m) - y m, stably
        return float((w * (np.logaddexp(0, m) - y * m)).sum() + ridge / 2 * t @ t)

    theta = np.array([1.0, 0.0])
    for _ in range(200):
        p = sigmoid(x @ theta)
        grad = x.T @ (w * (p - y)) + ridge * theta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + ridge * np.eye(2)
        step = np.linalg.solve(hess, grad)
        f, t = loss(theta), 1.0
        while loss(theta - t * step) > f and t > 1e-8:  # damped: saturated logits make plain Newton overshoot
            t /= 2
        theta -= t * step
        if np.abs(t * step).max() < 1e-10:
            break
    a, b = float(theta[0]), float(theta[1])
    if not a > 0:
        raise SystemExit(
            f"label calibration: slope {a:.4f} <= 0 (the model's P(paraphrase) does not rise with the "
            "truth on the validation pairs); not written"
        )
    return a, b


def apply(cal: dict, p_raw):
    """The reported P(paraphrase) of raw probabilities under a config's `label_calibration` (None: unchanged)."""
    if not cal:
        return p_raw
    return sigmoid(cal["a"] * logit(p_raw) + cal["b"])


def rescale_ranking(ranking: dict, old: dict | None, new: dict) -> dict:
    """The rerank order's weights (on logit of the reported P) carried from one reported scale to another, so the
    order stays what it was: logit(P_old) = a0 z + b0 and logit(P_new) = a1 z + b1 of the model's own logit z."""
    a0, b0 = (old["a"], old["b"]) if old else (1.0, 0.0)
    a1, b1 = new["a"], new["b"]
    w = ranking["w_logit"]
    return {**ranking, "w_logit": round(w * a0 / a1, 6), "bias": round(ranking["bias"] + w * (b0 - a0 * b1 / a1), 6)}


def reliability(p, y) -> dict:
    """Equal-width bins of P(paraphrase): count, mean predicted, observed share of paraphrases; ECE and Brier."""
    import numpy as np

    p, y = np.asarray(p, dtype=np.float64), np.asarray(y, dtype=np.float64)
    idx = np.minimum((p * BINS).astype(int), BINS - 1)
    bins, ece = [], 0.0
    for k in range(BINS):
        m = idx == k
        if m.any():
            bins.append(
                {
                    "lo": k / BINS,
                    "hi": (k + 1) / BINS,
                    "n": int(m.sum()),
                    "mean_p": round(float(p[m].mean()), 4),
                    "observed": round(float(y[m].mean()), 4),
                }
            )
            ece += m.sum() / len(p) * abs(p[m].mean() - y[m].mean())
    return {
        "n": int(len(p)),
        "ece": round(float(ece), 4),
        "brier": round(float(((p - y) ** 2).mean()), 4),
        "bins": bins,
    }


def set_weights(sets: list[str]) -> list[float]:
    """Each validation set weighs 1 in all, whatever its size."""
    count = {s: sets.count(s) for s in set(sets)}
    return [1 / count[s] for s in sets]


def cross_fitted(z, y, sets: list[str], seed: int):
    """P of each pair under a calibration fitted on the other folds (folds drawn within each set)."""
    import numpy as np

    z, y = np.asarray(z), np.asarray(y)
    fold = np.zeros(len(z), dtype=int)
    rng = random.Random(seed)
    for s in sorted(set(sets)):
        members = [i for i, x in enumerate(sets) if x == s]
        rng.shuffle(members)
        for k, i in enumerate(members):
            fold[i] = k % FOLDS
    w = np.asarray(set_weights(sets))
    out = np.zeros(len(z))
    for f in range(FOLDS):
        train = fold != f
        a, b = fit_platt(z[train], y[train], w[train])
        out[~train] = sigmoid(a * z[~train] + b)
    return out


def run(args, out: Path, val: dict) -> dict:
    import numpy as np

    from .calibrate import score_pairs
    from .reranker_export import at_threshold, choose_threshold

    names = list(val)
    raw = {v: np.asarray(score_pairs(out, [(p.s1, p.s2) for p in val[v]], args.threads, raw=True)) for v in names}
    labels = {v: np.asarray([p.label for p in val[v]]) for v in names}
    sets = [v for v in names for _ in val[v]]
    z = np.concatenate([logit(raw[v]) for v in names])
    y = np.concatenate([labels[v] for v in names])
    a, b = fit_platt(z, y, set_weights(sets))
    oof = cross_fitted(z, y, sets, args.seed)
    offsets = np.cumsum([0] + [len(val[v]) for v in names])
    cal = {v: sigmoid(a * logit(raw[v]) + b) for v in names}
    cfg = json.loads((out / "config.json").read_text())
    block = cfg.setdefault("paramine", {})
    old = block.get("label_calibration")
    # the cut before any label calibration (on the raw scale), kept through later runs of this stage
    before_cut = old.get("cut_before") if old else block.get("threshold")
    cut, at_cut = choose_threshold(cal, labels)
    report = {
        "method": "platt",
        "a": round(a, 6),
        "b": round(b, 6),
        "fitted_on": f"{' + '.join(f'{v} ({len(val[v])} pairs)' for v in names)}, each set weighted once, "
        "scored as the service scores them",
        "sets": {
            v: {
                "before": reliability(raw[v], labels[v]),
                "after": reliability(cal[v], labels[v]),
                "after_cross_fitted": reliability(oof[offsets[i] : offsets[i + 1]], labels[v]),
            }
            for i, v in enumerate(names)
        },
        "threshold": {
            "before": before_cut,
            "after": cut,
            "at_after": at_cut,
            "at_before": None
            if before_cut is None
            else {v: at_threshold(raw[v], labels[v], before_cut) for v in names},
        },
    }
    if block.get("calibration"):  # the rerank order, fitted on the scale reported before, kept as it was
        block["calibration"] = rescale_ranking(block["calibration"], old, report)
    block["label_calibration"] = {
        "method": "platt",
        "a": report["a"],
        "b": report["b"],
        "fitted_on": report["fitted_on"],
        "cut_before": before_cut,
        "ece": {v: {k: s[k]["ece"] for k in ("before", "after_cross_fitted")} for v, s in report["sets"].items()},
    }
    block["threshold"] = cut
    (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    write_json(out / "label-calibration.json", report, indent=1)
    (out / "reliability.svg").write_text(reliability_svg(report), encoding="utf-8")
    write_card_section(out / "README.md", report)
    log(
        f"label calibration a={a:.4f} b={b:.4f}; cut {before_cut} -> {cut}; ECE "
        + ", ".join(
            f"{v} {s['before']['ece']:.3f} -> {s['after_cross_fitted']['ece']:.3f} (cross-fitted)"
            for v, s in report["sets"].items()
        )
    )
    return report


def reliability_svg(r: dict) -> str:
    """Reliability diagram: observed share of paraphrases against mean predicted P, per set, before and after."""
    size, pad = 300, 40
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]

    def xy(p, q):
        return pad + p * size, pad + (1 - q) * size

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * size + 3 * pad}" height="{size + 2 * pad + 40}" '
        'font-family="sans-serif" font-size="11">'
    ]
    for panel, key in enumerate(("before", "after_cross_fitted")):
        dx = panel * (size + pad)
        parts.append(f'<g transform="translate({dx},0)">')
        parts.append(f'<rect x="{pad}" y="{pad}" width="{size}" height="{size}" fill="none" stroke="#999"/>')
        x0, y0 = xy(0, 0)
        x1, y1 = xy(1, 1)
        parts.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="#bbb" stroke-dasharray="4 3"/>')
        for v in (0, 0.5, 1):
            tx, ty = xy(v, 0)
            lx, ly = xy(0, v)
            parts.append(f'<text x="{tx - 6}" y="{ty + 14}">{v:g}</text><text x="{lx - 22}" y="{ly + 4}">{v:g}</text>')
        title = "raw P(paraphrase)" if key == "before" else "calibrated (cross-fitted)"
        parts.append(f'<text x="{pad}" y="{pad - 8}">{title}</text>')
        parts.append(f'<text x="{pad + size / 2 - 40}" y="{pad + size + 28}">mean predicted P</text>')
        for k, (name, s) in enumerate(r["sets"].items()):
            pts = " ".join("{:.1f},{:.1f}".format(*xy(b["mean_p"], b["observed"])) for b in s[key]["bins"])
            parts.append(f'<polyline points="{pts}" fill="none" stroke="{colors[k % 4]}" stroke-width="2"/>')
            for b in s[key]["bins"]:
                cx, cy = xy(b["mean_p"], b["observed"])
                rad = 2 + 6 * math.sqrt(b["n"] / s[key]["n"])
                parts.append(
                    f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{rad:.1f}" fill="{colors[k % 4]}" fill-opacity="0.5"/>'
                )
            parts.append(
                f'<text x="{pad + 6}" y="{pad + 16 + 14 * k}" fill="{colors[k % 4]}">{name}: ECE '
                f"{s[key]['ece']:.3f}</text>"
            )
        parts.append("</g>")
    parts.append(
        f'<text x="6" y="{pad + size / 2}" transform="rotate(-90 12 {pad + size / 2})">observed share of '
        "paraphrases</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write_card_section(readme: Path, r: dict):
    rows = []
    for name, s in r["sets"].items():
        for b_before in s["before"]["bins"]:
            rows.append(
                f"| {name} | raw | {b_before['lo']:.1f}-{b_before['hi']:.1f} | {b_before['n']} | "
                f"{b_before['mean_p']:.3f} | {b_before['observed']:.3f} |"
            )
        for b_after in s["after_cross_fitted"]["bins"]:
            rows.append(
                f"| {name} | calibrated | {b_after['lo']:.1f}-{b_after['hi']:.1f} | {b_after['n']} | "
                f"{b_after['mean_p']:.3f} | {b_after['observed']:.3f} |"
            )
    summary = [
        f"| {name} | {s['before']['ece']:.3f} | {s['after']['ece']:.3f} | {s['after_cross_fitted']['ece']:.3f} | "
        f"{s['before']['brier']:.3f} | {s['after_cross_fitted']['brier']:.3f} |"
        for name, s in r["sets"].items()
    ]
    t = r["threshold"]

    def at_cut(ms: dict | None) -> str:
        return "; ".join(
            f"{v}: F1 {100 * m['f1']:.1f} (P {100 * m['precision']:.1f}, R {100 * m['recall']:.1f}), "
            f"accuracy {100 * m['accuracy']:.1f}"
            for v, m in (ms or {}).items()
        )

    at = (
        at_cut(t["at_after"])
        + "."
        + (
            f" Before: the cut {t['before']} on the raw scale, where {at_cut(t['at_before'])}."
            if t["before"] is not None
            else " Before: the arg-max label."
        )
    )
    text = f"""{MARK}
## Calibration (labels): what P(paraphrase) means

The service reports `P = sigmoid({r["a"]} * logit(P_model) {"-" if r["b"] < 0 else "+"} {abs(r["b"])})` (config.json's `paramine.label_calibration`,
Platt scaling fitted on {r["fitted_on"]}), so that among pairs reported at about 0.7, about 70% are paraphrases on
these sets. The order of candidates is unchanged (the map is increasing). The label cut is on this scale:
`paramine.threshold` = {t["after"]} (the export stage's rule: best mean F1 over the sets); at it {at}

![reliability diagram](reliability.svg)

| set | ECE raw | ECE calibrated (in-sample) | ECE calibrated (5-fold cross-fitted) | Brier raw | Brier cross-fitted |
|---|---:|---:|---:|---:|---:|
{chr(10).join(summary)}

The cross-fitted figures score each pair with a calibration fitted without it. One calibration serves both
domains, so it cannot be right for each: per set, the bins below say where it over- or under-states (an index's
own annotations can refit it for its domain: `paramine annotations threshold --calibrate`). A rerank calibration
fitted before this one (the section after) names weights on the scale reported then; config.json holds them carried
over to this scale, which keeps the order.

| set | P | bin | pairs | mean P | share paraphrases |
|---|---|---|---:|---:|---:|
{chr(10).join(rows)}
"""
    body = readme.read_text(encoding="utf-8") if readme.exists() else ""
    head, sep, rest = body.partition(MARK)
    if sep:  # drop the old section up to the next marked section (the ranking calibration), if any
        nxt = rest.find("<!-- ")
        body = head.rstrip() + ("\n\n" + rest[nxt:] if nxt >= 0 else "\n")
    head, sep, rest = body.partition(RANKING_MARK)
    body = head.rstrip() + "\n\n" + text + ("\n" + sep + rest if sep else "")
    readme.write_text(body, encoding="utf-8")
