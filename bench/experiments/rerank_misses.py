#!/usr/bin/env python3
"""What a reranker puts first when it is not a known paraphrase: the calibrate stage's candidates of one
validation set (a query's top K by the default encoder), ordered as the service orders them (the model's
calibration, else its probability), and the queries whose first candidate is none of the sentences the data pair
with the query (--known: the set's files, other splits too), and among them those the data labels not a
paraphrase (MultiPIT's negatives: real errors). A second cross-encoder (--judge, the teacher) labels
both that first candidate and the pair's own s2 at its cut: where it calls the misses paraphrases about as often
as the gold pairs, the misses are mostly paraphrases the data never paired, and no reranker can lift a figure
that counts them as wrong. A seeded sample of misses is written out to read.

  .venv/bin/python bench/experiments/rerank_misses.py --model models/paramine-paraphrase-minilm-ft-parasci \\
      --judge models/paramine-paraphrase-mpnet-base --candidates build/cal/candidates-parasci-acl-val.jsonl \\
      --known parasci-acl-val parasci-acl --out build/misses-parasci-acl.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "training"))

from paramine_train import calibrate, candidates  # noqa: E402
from paramine_train.common import log, set_threads, write_json  # noqa: E402
from paramine_train.pairs import FILES, norm_key, read_source  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def partners(data: Path, sources: list[str]) -> dict[int, dict[str, set[str]]]:
    """Label (1 paraphrase, 0 not) -> normalized sentence -> the sentences its pairs of that label join it to,
    either way round."""
    adj: dict[int, dict[str, set[str]]] = {0: defaultdict(set), 1: defaultdict(set)}
    for name in sources:
        for p in read_source(data, name):
            a, b = norm_key(p.s1), norm_key(p.s2)
            adj[p.label][a].add(b)
            adj[p.label][b].add(a)
    return adj


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--model",
        required=True,
        help="the reranker whose order is looked at, or 'cosine' for the bi-encoder's own order",
    )
    ap.add_argument("--judge", required=True, help="the cross-encoder that labels misses and gold pairs")
    ap.add_argument("--candidates", required=True, help="a calibrate stage's candidates-<set>.jsonl")
    ap.add_argument(
        "--known",
        nargs="+",
        required=True,
        choices=sorted(FILES),
        metavar="SOURCE",
        help=f"the data files whose positive pairs are known paraphrases ({', '.join(sorted(FILES))})",
    )
    ap.add_argument("--data", default=str(REPO.parent / "shared/data"))
    ap.add_argument("--cache", default=None, help="score cache folder (default: beside --candidates)")
    ap.add_argument("--sample", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    set_threads(a.threads)
    rows = [r for r in candidates.load(Path(a.candidates)) if r["cands"]]
    cache = Path(a.cache or Path(a.candidates).parent)
    adj = partners(Path(a.data), a.known)
    bi = a.model == "cosine"
    cal = None if bi else json.loads((Path(a.model) / "config.json").read_text()).get("paramine", {}).get("calibration")
    scores = defaultdict(float) if bi else calibrate.score_candidates(Path(a.model), rows, a.threads, cache)

    def order(p: float, cos: float) -> float:
        return cos if bi else calibrate.apply(cal, p, cos) if cal else p

    misses = []
    for r in rows:
        top = max(r["cands"], key=lambda c: order(scores[(r["query"], c["text"])], c["cos"]))
        q, t = norm_key(r["query"]), norm_key(top["text"])
        if t not in adj[1][q]:
            misses.append(
                {
                    "query": r["query"],
                    "first": top["text"],
                    "first_cos": top["cos"],
                    "first_p": scores[(r["query"], top["text"])],
                    # a pair the data labels "not a paraphrase": a real error
                    "labeled_negative": t in adj[0][q],
                    "gold": r["gold"],
                }
            )
    judge_cut = json.loads((Path(a.judge) / "config.json").read_text())["paramine"]["threshold"]
    log(f"{len(misses)} misses of {len(rows)} queries; the judge scores them and their gold pairs")
    # one scoring run for both sides: firsts, then golds
    judged = calibrate.score_pairs(
        Path(a.judge), [(m["query"], m["first"]) for m in misses] + [(m["query"], m["gold"]) for m in misses], a.threads
    )
    p_first, p_gold = judged[: len(misses)], judged[len(misses) :]
    for m, pf, pg in zip(misses, p_first, p_gold):
        m["judge_p_first"], m["judge_p_gold"] = round(pf, 4), round(pg, 4)

    def share(ps):
        return round(sum(p >= judge_cut for p in ps) / max(1, len(ps)), 4)

    report = {
        "model": Path(a.model).name,
        "order": "cosine" if bi else "calibrated" if cal else "probability",
        "judge": Path(a.judge).name,
        "judge_cut": judge_cut,
        "candidates": a.candidates,
        "known": a.known,
        "queries": len(rows),
        "first_is_known": round(1 - len(misses) / len(rows), 4),
        "first_is_labeled_negative": round(sum(m["labeled_negative"] for m in misses) / len(rows), 4),
        "misses": len(misses),
        "judge_paraphrase_share": {"first_of_misses": share(p_first), "gold_of_the_same_queries": share(p_gold)},
        "sample": random.Random(a.seed).sample(misses, min(a.sample, len(misses))),
    }
    write_json(Path(a.out), report)
    log(json.dumps({k: v for k, v in report.items() if k != "sample"}))


if __name__ == "__main__":
    main()
