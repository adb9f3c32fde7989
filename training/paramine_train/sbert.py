"""SBERT bi-encoder pipeline (paramine-train sbert): data, batches, training. Export, evaluation and parity are in
sbert_export.py, the model card in sbert_card.py."""

from __future__ import annotations

import json
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

from . import loop
from .common import REPO, log, read_rows, seed_all, write_json, write_rows
from .pairs import Pair, PairFileError, dump, mrpc_heldout_lines, nmr_sentences, norm_key, read_source

HELDOUT_JSON = REPO / "models/paramine-paraphrase-minilm/mrpc-heldout.json"
SOURCES = ["parasci-acl", "multipit-auto", "mrpc", "multipit-expert"]
# Batches are drawn per domain: the in-batch negatives of a tweet are tweets, of a scientific sentence scientific
# sentences. MultiPIT expert positives (a few hundred, in a few dozen topic groups) could not fill batches alone.
BUCKET = {"parasci-acl": "science", "multipit-auto": "tweets", "multipit-expert": "tweets", "mrpc": "news"}
EXTRA_BUCKET = "extra"  # the shared batch domain of --pairs files too small to fill batches alone


# ---------------------------------------------------------------------------------------------------------------
# extra pair files (--pairs), read by paramine's own reader (`paramine pairs dump`)
# ---------------------------------------------------------------------------------------------------------------


def pair_file_id(path: str) -> str:
    """One id per pair set: X.src and X.tgt (or their .gz) name the same pairs."""
    return re.sub(r"\.(src|tgt)(\.gz)?$", "", str(Path(path).resolve()), flags=re.I)


def read_extra_sources(paths: list[str], positive_arg: str | None) -> tuple[dict[str, list[Pair]], dict]:
    """The positive pairs of each --pairs file, as a source named `pairs:<file name>`; and what was read."""
    positive = (
        None if positive_arg is None else sorted({x.strip().lower() for x in positive_arg.split(",") if x.strip()})
    )
    sources, info, given = {}, {}, {}
    for path in paths:
        ident = pair_file_id(path)
        if ident in given:
            raise PairFileError(f"{path}: given twice to --pairs (also as {given[ident]})")
        given[ident] = path
        rows = dump([path], positive_arg)
        scheme = rows[0]["scheme"] if rows else "positive-only"
        if scheme == "custom" and positive is None:
            # the benchmark would count none of them positive; training on nothing silently helps no one
            odd = next(r for r in rows if r["positive"] is None)
            raise PairFileError(
                f"{odd['where']}: label {json.dumps(odd['label'], ensure_ascii=False)}: the file's "
                f"labels fit neither the binary scheme (1/paraphrase vs 0/not/not_paraphrase) nor "
                f"the Turku one (1-4, optional < or >, flags i/s); name the positive labels with "
                f"--positive"
            )
        name, n = f"pairs:{Path(path).name}", 2
        while name in sources:
            name, n = f"pairs:{Path(path).name}#{n}", n + 1
        sources[name] = [
            Pair(r["s1"], r["s2"], 1, name, {"where": r["where"], "label": r["label"]})
            for r in rows
            if r["positive"] is True
        ]
        info[name] = {
            "path": path,
            "records": len(rows),
            "label_scheme": scheme,
            "positives": len(sources[name]),
            "positive_labels": positive if positive is not None else "scheme default",
        }
        if not sources[name]:
            log(f"WARNING: {path}: no positive pairs ({scheme} labels), nothing to train on in it")
    return sources, info


# ---------------------------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------------------------


def load_validation(data: Path) -> dict[str, list[Pair]]:
    """Every evaluation pair in the data folder; training pairs that touch any of their sentences are dropped."""
    held = mrpc_heldout_lines(HELDOUT_JSON)
    mrpc = read_source(data, "mrpc")
    val = {
        "parasci-acl-val": read_source(data, "parasci-acl-val"),
        "multipit-expert-val": read_source(data, "multipit-expert-val"),
        "mrpc-heldout": [p for p in mrpc if p.meta["line"] in held],
    }
    assert len(val["mrpc-heldout"]) == len(held), "mrpc-heldout.json does not match mrpc/train.tsv"
    return val


def forbidden_sentences(data: Path, val: dict[str, list[Pair]], nmr_too: bool = True) -> set[str]:
    keys = {norm_key(s) for v in val.values() for p in v for s in (p.s1, p.s2)}
    extra = read_source(data, "parasci-arxiv-val") + read_source(data, "multipit-auto-val")
    keys |= {norm_key(s) for p in extra for s in (p.s1, p.s2)}
    if nmr_too:
        keys |= {norm_key(s) for s in nmr_sentences(data)}
    return keys


def read_sources(data: Path) -> dict[str, list[Pair]]:
    held = mrpc_heldout_lines(HELDOUT_JSON)
    mrpc = read_source(data, "mrpc")
    return {
        "parasci-acl": read_source(data, "parasci-acl"),
        "multipit-auto": read_source(data, "multipit-auto"),
        "mrpc": [p for p in mrpc if p.label == 1 and p.meta["line"] not in held],
        "multipit-expert": [p for p in read_source(data, "multipit-expert") if p.label == 1],
    }


def allocate(avail: dict[str, int], max_pairs: int) -> dict[str, int]:
    """MRPC, MultiPIT expert and --pairs files whole; the rest split evenly between ParaSCI-ACL and MultiPIT_Auto."""
    big = [k for k in ("parasci-acl", "multipit-auto") if k in avail]
    take = {k: n for k, n in avail.items() if k not in big}
    if max_pairs <= 0:
        return dict(avail)
    rest = max(0, max_pairs - sum(take.values()))
    half = rest // 2
    a = {k: min(avail[k], half) for k in big}
    left = rest - sum(a.values())
    for k in big:  # a source that runs short hands its share to the other
        extra = min(left, avail[k] - a[k])
        a[k] += extra
        left -= extra
    take.update(a)
    return {k: take[k] for k in avail}


def bucket_of(row: dict) -> str:
    """A training row's batch domain (rows of train.jsonl written before --pairs carry none)."""
    return row.get("bucket") or BUCKET[row["source"]]


def extra_buckets(take: dict[str, int], batch: int) -> dict[str, str]:
    """--pairs sources: a domain of its own when a file fills a batch alone, else the shared EXTRA_BUCKET."""
    out = {n: n if k >= batch else EXTRA_BUCKET for n, k in take.items() if n not in BUCKET}
    small = sum(k for n, k in take.items() if out.get(n) == EXTRA_BUCKET)
    if 0 < small < batch:  # plan_batches drops a domain that cannot fill one batch
        log(
            f"WARNING: the --pairs files under {batch} pairs hold {small} pairs together, fewer than --batch "
            f"{batch}: they fill no batch and are not trained on"
        )
    return out


def build_data(args, work: Path) -> dict:
    data = Path(args.data)
    need = "parasci/acl/val.src" if args.no_default_data else "parasci/acl/train.src"
    if not (data / need).exists():
        sys.exit(f"training data not found under {data} (expected ../shared/data, see its README.md)")
    if args.no_default_data and not args.pairs:
        sys.exit("--no-default-data needs at least one --pairs file")
    rng = random.Random(args.seed)
    val = load_validation(data)
    forbidden = forbidden_sentences(data, val, not args.allow_nmr_overlap)
    raw = {} if args.no_default_data else read_sources(data)
    try:
        extra, pair_files = read_extra_sources(args.pairs, args.positive)
    except PairFileError as e:
        sys.exit(f"--pairs: {e}")
    raw.update(extra)
    sources = list(raw)  # built-ins first, in SOURCES order, then the --pairs files in the order given
    rows, stats = [], {"raw": {}, "dropped_val_overlap": {}, "dropped_same": {}, "dropped_repeat": {}, "usable": {}}
    neighbours: dict[str, dict[str, set[str]]] = {}
    usable: dict[str, list[Pair]] = {}
    for name in sources:
        ps = raw[name]
        ov = same = rep = 0
        seen, keep = set(), []
        nb: dict[str, set[str]] = defaultdict(set)
        for p in ps:
            k1, k2 = norm_key(p.s1), norm_key(p.s2)
            if k1 in forbidden or k2 in forbidden:
                ov += 1
                continue
            if k1 == k2:
                same += 1
                continue
            nb[k1].add(k2)
            nb[k2].add(k1)
            key = (k1, k2) if k1 < k2 else (k2, k1)
            if key in seen:
                rep += 1
                continue
            seen.add(key)
            keep.append(p)
        usable[name] = keep
        neighbours[name] = nb
        stats["raw"][name], stats["dropped_val_overlap"][name] = len(ps), ov
        stats["dropped_same"][name], stats["dropped_repeat"][name], stats["usable"][name] = same, rep, len(keep)
    take = allocate(stats["usable"], args.max_pairs)
    stats["used"] = take
    buckets = {**BUCKET, **extra_buckets(take, args.batch)}
    for name in sources:
        chosen = rng.sample(usable[name], take[name])
        nb = neighbours[name]
        for p in chosen:
            a, b = (p.s2, p.s1) if rng.random() < 0.5 else (p.s1, p.s2)
            k1, k2 = norm_key(a), norm_key(b)
            # sampler keys: the pair's own sentences, plus (neighbours mode) their known paraphrases
            keys = {k1, k2}
            if args.batch_exclude == "neighbours":
                keys |= nb.get(k1, set()) | nb.get(k2, set())
            rows.append({"source": name, "bucket": buckets[name], "s1": a, "s2": b, "keys": sorted(keys)})
    stats["total"] = len(rows)
    stats["sources"] = sources
    stats["buckets"] = {n: buckets[n] for n in sources}
    stats["pair_files"] = pair_files
    stats["validation"] = {k: {"pairs": len(v), "positives": sum(p.label for p in v)} for k, v in val.items()}
    stats["forbidden_sentences"] = len(forbidden)
    stats["mrpc_heldout_file"] = str(HELDOUT_JSON.relative_to(REPO))
    stats["batch_exclude"] = args.batch_exclude
    stats["keys_per_pair_mean"] = {
        n: round(sum(len(r["keys"]) for r in rows if r["source"] == n) / max(1, take[n]), 2) for n in sources
    }
    write_rows(work, rows, stats)
    return stats


# ---------------------------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------------------------


class KeyView:
    """What NoDuplicatesBatchSampler looks at: one row per pair, its values = the pair's sampler keys.

    The sampler compares the stringified values of a row's columns with those already in the batch; the number of
    columns may differ from row to row (it only iterates a row's items).
    """

    def __init__(self, rows: list[dict]):
        self.rows = rows
        self.column_names = ["keys"]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return {f"k{j}": k for j, k in enumerate(self.rows[i]["keys"])}


def plan_batches(rows: list[dict], args) -> tuple[list[list[int]], dict]:
    """Batches for all epochs, as indices into `rows` (the same ones for a given seed and data)."""
    import torch
    from sentence_transformers.base.sampler import NoDuplicatesBatchSampler, ProportionalBatchSampler
    from torch.utils.data import ConcatDataset

    buckets = sorted(set(BUCKET.values()) | {bucket_of(r) for r in rows})
    by_src = {n: [i for i, r in enumerate(rows) if bucket_of(r) == n] for n in buckets}
    by_src = {n: ix for n, ix in by_src.items() if len(ix) >= args.batch}
    views = [KeyView([rows[i] for i in ix]) for ix in by_src.values()]
    gen = torch.Generator()
    samplers = [
        NoDuplicatesBatchSampler(v, batch_size=args.batch, drop_last=True, generator=gen, seed=args.seed) for v in views
    ]
    concat = ConcatDataset(views)
    prop = ProportionalBatchSampler(concat, samplers, generator=gen, seed=args.seed)
    flat = [i for ix in by_src.values() for i in ix]  # ConcatDataset index -> row index
    batches, seen = [], set()
    for ep in range(args.epochs):
        prop.set_epoch(ep)
        for b in prop:
            batches.append([flat[i] for i in b])
            seen.update(batches[-1])
    per_bucket, per_src = defaultdict(int), defaultdict(int)
    for b in batches:
        per_bucket[bucket_of(rows[b[0]])] += 1
        for i in b:
            per_src[rows[i]["source"]] += 1
    info = {
        "batches": len(batches),
        "batches_per_bucket": dict(per_bucket),
        "pair_uses_per_source": dict(per_src),
        "pairs_seen_once_or_more": len(seen),
        "pairs_never_in_a_batch": len(rows) - len(seen),
    }
    return batches, info


def train(args, base: Path, work: Path, measure: bool = False) -> dict:
    """MultipleNegativesRankingLoss over the planned batches (loop.run); `measure`: the first steps only, timed."""
    import argparse
    import shutil

    import numpy as np
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    seed_all(args.seed)
    rows = read_rows(work)
    t_plan = time.time()
    batches, plan = plan_batches(rows, args)
    plan["plan_seconds"] = round(time.time() - t_plan, 1)
    log(f"batches: {plan}")
    run_args = argparse.Namespace(**{**vars(args), "max_steps": args.measure_steps}) if measure else args
    model = SentenceTransformer(str(base), device="cpu")
    model.max_seq_length = args.max_seq_length
    loss_fn = MultipleNegativesRankingLoss(model, scale=args.scale)
    count = {"tokens": 0, "truncated": 0}

    def loss_of(b):
        f1 = model.preprocess([rows[i]["s1"] for i in b])
        f2 = model.preprocess([rows[i]["s2"] for i in b])
        for f in (f1, f2):
            count["tokens"] += int(f["attention_mask"].sum())
            count["truncated"] += int((f["attention_mask"].sum(1) >= args.max_seq_length).sum())
        return loss_fn([f1, f2], None)

    log(f"train: {len(rows)} pairs, batch {args.batch}, max_seq_length {args.max_seq_length}")
    r = loop.run(model, batches, loss_of, run_args, work, tag=lambda b: bucket_of(rows[b[0]]))
    losses, steps, train_s = r.pop("losses"), r["steps"], r["train_seconds"]
    step_times = r.pop("step_times")
    info = {
        **r,
        "pairs_per_second": round(steps * args.batch / train_s, 1),
        "tokens_per_second": round(count["tokens"] / train_s, 1),
        "sequences_truncated": count["truncated"],
        "sequences": 2 * steps * args.batch,
        "final_loss_last50": round(float(np.mean(losses[-50:])), 4),
        "first_loss_first50": round(float(np.mean(losses[:50])), 4),
        "loss_curve": loop.curve(losses, args.log_every),
        "plan": plan,
        "hyperparameters": hyperparameters(args),
        "command": command(args),
    }
    if measure:
        # the first two steps are slower (allocator warm-up) and left out of the rate
        med = float(np.mean(step_times[2:] if len(step_times) > 4 else step_times))
        info["mean_seconds_per_step"] = round(med, 3)
        info["estimated_full_minutes"] = round(med * plan["batches"] / 60, 1)
        write_json(work / "measure.json", info, indent=1)
        log(
            f"measure: {steps} steps, mean {med:.2f}s/step (steps 3+), {args.batch / med:.1f} pairs/s; "
            f"the planned {plan['batches']} steps would take ~{info['estimated_full_minutes']} min"
        )
        return info
    model.max_seq_length = args.export_max_seq_length  # inference keeps the base model's 256-token window
    ck = work / "checkpoint"
    if ck.exists():
        shutil.rmtree(ck)
    model.save(str(ck), create_model_card=False)
    write_json(work / "train_info.json", info, indent=1)
    log(f"trained in {train_s / 60:.1f} min -> {ck}")
    return info


HYPER = [
    "seed",
    "epochs",
    "batch",
    "lr",
    "warmup",
    "weight_decay",
    "scale",
    "max_seq_length",
    "export_max_seq_length",
    "max_pairs",
    "batch_exclude",
    "allow_nmr_overlap",
    "threads",
    "opset",
    "max_steps",
    "max_minutes",
    "pairs",
    "positive",
    "no_default_data",
]


def hyperparameters(args) -> dict:
    return {k: getattr(args, k) for k in HYPER}


def command(args) -> str:
    from .card import command_line
    from .sbert_cli import parser

    return command_line("sbert", hyperparameters(args), parser().parse_args([]))
