"""The calibrate stage of paramine-train reranker: fit `paramine.calibration` (calibrate.py) and measure what
it does to the rerank order, offline, on retrieval candidates (candidates.py):

- corpora: each task's pairs (both sides) among distractors of the same domain from ../shared/data (science:
  ParaSCI-ACL train + ParaSCI-arXiv val; tweets: MultiPIT expert train + a sample of MultiPIT_Auto train), exact
  cosine search with --calibrate-encoder, the first --calibrate-k candidates per query;
- fit: logistic regression on the ParaSCI-arXiv val candidates (label: the candidate is the query's gold
  paraphrase), a validation set that is neither trained on nor one of the sets the ranking aims are measured on;
- report: top-1 / top-10 / MRR@K of the bi-encoder alone, the cross-encoder alone and the calibrated order on
  ParaSCI-ACL val and MultiPIT expert val; written to OUT/calibration.json, config.json and the card.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from . import calibrate, candidates
from .common import default_model, log, read_json, write_json
from .encode import graph_of
from .pairs import read_source

TASKS = {
    "parasci-arxiv-val": ("parasci-arxiv-val", "science"),
    "parasci-acl-val": ("parasci-acl-val", "science"),
    "multipit-expert-val": ("multipit-expert-val", "tweets"),
}
FIT = "parasci-arxiv-val"
MARK = "<!-- calibration -->"


def calibrate_args(ap):
    ap.add_argument(
        "--calibrate-encoder",
        default=None,
        help="calibrate: the bi-encoder whose cosines the calibration combines (default: the service's)",
    )
    ap.add_argument("--calibrate-k", type=int, default=20, help="calibrate: candidates per query (rerank depth)")
    ap.add_argument("--calibrate-fit-queries", type=int, default=1000, help="calibrate: fit queries (seeded sample)")
    ap.add_argument(
        "--calibrate-tweets",
        type=int,
        default=10000,
        help="calibrate: MultiPIT_Auto train sentences among the tweet distractors",
    )
    ap.add_argument(
        "--calibrate-science",
        type=int,
        default=0,
        help="calibrate: at most this many science distractor sentences (seeded sample; 0: all)",
    )
    ap.add_argument(
        "--calibrate-eval-queries",
        type=int,
        default=0,
        help="calibrate: at most this many queries per evaluation set (seeded sample; 0: all)",
    )


def distractors(data: Path, domain: str, args) -> list[str]:
    if domain == "science":
        ps = read_source(data, "parasci-acl") + read_source(data, "parasci-arxiv-val")
        sci = sorted({s for p in ps for s in (p.s1, p.s2)})
        random.Random(args.seed).shuffle(sci)
        return sci[: args.calibrate_science or None]
    auto = [s for p in read_source(data, "multipit-auto") for s in (p.s1, p.s2)]
    auto = sorted(set(auto))
    random.Random(args.seed).shuffle(auto)
    return [s for p in read_source(data, "multipit-expert") for s in (p.s1, p.s2)] + auto[: args.calibrate_tweets]


def task_candidates(args, name: str, work: Path) -> list[dict]:
    path = work / f"candidates-{name}.jsonl"
    if path.exists():
        return candidates.load(path)
    source, domain = TASKS[name]
    data, enc = Path(args.data), Path(args.calibrate_encoder)
    pairs = read_source(data, source)
    rows, n = candidates.build(
        pairs, distractors(data, domain, args), enc, graph_of(enc), work / "embeddings", args.calibrate_k, args.threads
    )
    candidates.save(path, rows, {"task": name, "encoder": str(enc), "corpus": n, "k": args.calibrate_k})
    return rows


def sample(rows: list[dict], n: int, seed: int) -> list[dict]:
    return random.Random(seed).sample(rows, n) if 0 < n < len(rows) else rows


def run(args, out: Path) -> dict:
    work = Path(args.work) / "calibrate"
    args.calibrate_encoder = args.calibrate_encoder or str(default_model("encoder"))
    fit_rows = task_candidates(args, FIT, work)
    fit_rows = sample(fit_rows, args.calibrate_fit_queries, args.seed)
    evals = {
        n: sample(task_candidates(args, n, work), args.calibrate_eval_queries, args.seed) for n in TASKS if n != FIT
    }
    scores = calibrate.score_candidates(
        out, fit_rows + [r for rows in evals.values() for r in rows], args.threads, work
    )
    cal = calibrate.fit_ranking(fit_rows, scores)
    cal = {
        "method": "logistic",
        "features": ["logit_p_positive", "cosine"],
        **cal,
        "encoder": Path(args.calibrate_encoder).name,
        "fitted_on": f"{FIT} rerank candidates (top {args.calibrate_k}, "
        f"{len(fit_rows)} queries, label = the gold paraphrase)",
    }
    report = {
        "calibration": cal,
        "fit": calibrate.compare(fit_rows, scores, cal),
        "evaluation": {n: calibrate.compare(rows, scores, cal) for n, rows in evals.items()},
        "candidates": {n: read_json(work / f"candidates-{n}.meta.json") for n in TASKS},
    }
    report["decision"] = decide(report)
    log(f"calibration: {json.dumps(report)}")
    cfg = json.loads((out / "config.json").read_text())
    block = cfg.setdefault("paramine", {})
    block.pop("calibration", None)
    block.pop("rerank_order", None)
    if report["decision"] == "calibrated":
        block["calibration"] = cal
    elif report["decision"] == "cosine":
        block["rerank_order"] = "cosine"
    (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    write_json(out / "calibration.json", report, indent=1)
    write_card_section(out / "README.md", report)
    return report


def decide(report: dict) -> str:
    """What the service ranks by: the calibrated order if it lowers top-1 on no set against the bi-encoder
    alone; else the cross-encoder alone if that lowers it nowhere; else the cosine order (labels still the
    model's: `paramine.rerank_order` = cosine, and the search response says so)."""
    sets = [report["fit"], *report["evaluation"].values()]

    def holds(order: str) -> bool:
        return all(s[order]["top1"] >= s["bi-encoder"]["top1"] for s in sets)

    return "calibrated" if holds("calibrated") else "cross-encoder" if holds("cross-encoder") else "cosine"


def write_card_section(readme: Path, r: dict):
    cal = r["calibration"]
    rows = []
    for name, res in [(FIT + " (fit)", r["fit"]), *r["evaluation"].items()]:
        for order, m in res.items():
            rows.append(
                f"| {name} | {order} | {m['queries']:,} | {100 * m['top1']:.1f} | {100 * m['top10']:.1f} | "
                f"{m['mrr']:.3f} |"
            )
    text = f"""{MARK}
## Calibration (ranking)

What the service ranks by (decided on the sets below: an order may lower top-1 against the bi-encoder alone on
none of them): **{ {"calibrated": "the calibrated order", "cross-encoder": "the cross-encoder alone (no calibration written)", "cosine": "the cosine order (`paramine.rerank_order` = cosine; labels and probabilities are still the model's)"}[r["decision"]] }**.

The calibration fitted combines this cross-encoder with the bi-encoder `{cal["encoder"]}`: the rerank
order is `sigmoid({cal["w_logit"]} * logit(P(paraphrase)) +
{cal["w_cosine"]} * cosine + {cal["bias"]})`, a logistic regression fitted on {cal["fitted_on"]}. Offline check on
exact-search candidates among same-domain sentences of ../shared/data (`training/paramine_train/reranker_calibrate.py`;
paramine's own benchmark, IVF-PQ among 208k sentences, is in BENCHMARKS.md):

| set | order | queries | top-1 | top-10 | MRR@{r["candidates"][FIT]["k"] if r["candidates"].get(FIT) else 20} |
|---|---|---|---|---|---|
{chr(10).join(rows)}
"""
    body = readme.read_text(encoding="utf-8") if readme.exists() else ""
    body = body.split(MARK)[0].rstrip() + "\n\n" + text
    readme.write_text(body, encoding="utf-8")
