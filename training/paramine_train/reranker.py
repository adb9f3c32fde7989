"""Cross-encoder pipeline (paramine-train reranker): training data with mined hard negatives, and training.
Export, evaluation and calibration are in reranker_export.py, the model card in reranker_card.py."""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

from . import loop
from .common import log, read_jsonl, read_rows, seed_all, write_json, write_rows
from .encode import SentenceEncoder
from .pairs import Pair, UnionFind, mrpc_split, norm_key, read_source

ID2LABEL = {0: "not_paraphrase", 1: "paraphrase"}
LABEL2ID = {v: k for k, v in ID2LABEL.items()}
TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"]


def load_validation(data: Path, args) -> tuple[dict[str, list[Pair]], list[Pair], list[Pair]]:
    mrpc = read_source(data, "mrpc")
    mrpc_train, mrpc_held = mrpc_split(mrpc, args.mrpc_heldout, args.seed)
    val = {
        "multipit-expert-val": read_source(data, "multipit-expert-val"),
        "mrpc-heldout": mrpc_held,
    }
    return val, mrpc_train, mrpc


def mine_negatives(
    enc: SentenceEncoder,
    positives: list[Pair],
    pool_pairs: list[Pair],
    group_pairs: list[Pair],
    forbidden: set[str],
    rng: random.Random,
    args,
    source: str,
) -> tuple[list[Pair], dict]:
    """`--mine-per-positive` hard negatives (default one) per positive, from a pool of same-source sentences.

    Candidates: the top `--mine-topk` pool neighbours of s1 (cosine, base SBERT) that are not in s1's paraphrase
    group (connected component of all pairs of that source), not s1/s2 themselves, and score below
    (1 - margin) * cos(s1, s2) (guards against unlabeled paraphrases). The negative is drawn at random from the
    first `--mine-pick` candidates (without repeats; at least as many as it draws).
    """
    import numpy as np

    if not positives:  # e.g. --n-auto 0 (a teacher on the labeled data only)
        return [], {"pool": 0, "positives": 0, "mined": 0, "no_candidate": 0}
    uf = UnionFind()
    for p in group_pairs:
        uf.union(norm_key(p.s1), norm_key(p.s2))
    pool, seen = [], set()
    for p in list(pool_pairs) + list(positives):
        for s in (p.s1, p.s2):
            k = norm_key(s)
            if k not in seen and k not in forbidden:
                seen.add(k)
                pool.append(s)
    pool_keys = [norm_key(s) for s in pool]
    pool_groups = [uf.find(k) for k in pool_keys]
    log(f"mining {source}: {len(positives)} positives, pool {len(pool)} sentences")
    pool_vec = enc.encode(pool, batch=128, progress=True)
    index = {k: i for i, k in enumerate(pool_keys)}
    q1 = np.stack([pool_vec[index[norm_key(p.s1)]] for p in positives])
    q2 = np.stack([pool_vec[index[norm_key(p.s2)]] for p in positives])
    pos_cos = (q1 * q2).sum(1)
    out, stats = [], {"pool": len(pool), "positives": len(positives), "mined": 0, "no_candidate": 0, "neg_cos": []}
    for b in range(0, len(positives), 1024):
        sims = q1[b : b + 1024] @ pool_vec.T
        top = np.argpartition(-sims, args.mine_topk, axis=1)[:, : args.mine_topk]
        for j in range(sims.shape[0]):
            i = b + j
            p = positives[i]
            k1, k2 = norm_key(p.s1), norm_key(p.s2)
            g = uf.find(k1)
            cand = sorted(top[j], key=lambda c: -sims[j, c])
            limit = (1.0 - args.mine_margin) * pos_cos[i]
            ok = [c for c in cand if pool_keys[c] not in (k1, k2) and pool_groups[c] != g and sims[j, c] < limit]
            if not ok:
                stats["no_candidate"] += 1
                continue
            n = args.mine_per_positive
            first = ok[: max(args.mine_pick, n)]
            # one negative: the draw earlier recipes made (their rows stay reproducible)
            for c in [rng.choice(first)] if n == 1 else rng.sample(first, min(n, len(first))):
                out.append(Pair(p.s1, pool[c], 0, f"mined-{source}", {"cos": float(sims[j, c])}))
                stats["neg_cos"].append(float(sims[j, c]))
    nc = np.array(stats.pop("neg_cos") or [0.0])
    stats.update(
        mined=len(out),
        neg_cos_mean=round(float(nc.mean()), 4),
        neg_cos_p90=round(float(np.quantile(nc, 0.9)), 4),
        pos_cos_mean=round(float(pos_cos.mean()), 4),
    )
    log(f"  {source}: {stats}")
    return out, stats


def write_heldout(path: Path, held: list[Pair], total: int, args):
    """The held-out MRPC rows, so the benchmark (`bench classify --heldout`) reuses exactly this split.

    A file already there that lists the same rows is kept as it is (older ones also carry MRPC's row ids)."""
    lines = sorted(p.meta["line"] for p in held)
    old = json.loads(path.read_text()) if path.exists() else None
    if old and old.get("lines") == lines:
        return
    heldout = {
        "file": "mrpc/train.tsv",
        "rule": f"seeded split: rows (data rows in file order, header excluded) shuffled with Python "
        f"random.Random({args.seed}).shuffle(list(range({total}))); the first "
        f"round({args.mrpc_heldout} * {total}) = {len(held)} are held out. 'line' is the 1-based "
        f"line number in the file (header = line 1).",
        "seed": args.seed,
        "fraction": args.mrpc_heldout,
        "rows_total": total,
        "count": len(held),
        "positives": sum(p.label for p in held),
        "lines": lines,
        "pairs": [{"line": p.meta["line"], "label": p.label} for p in sorted(held, key=lambda p: p.meta["line"])],
    }
    # one line per list entry keeps the file short and diffable
    text = (
        "{\n"
        + ",\n".join(
            f" {json.dumps(k)}: "
            + ("[\n  " + ",\n  ".join(json.dumps(x) for x in v) + "\n ]" if k == "pairs" else json.dumps(v))
            for k, v in heldout.items()
        )
        + "\n}\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def relabel(pairs: list[Pair], labels_file: str | None) -> list[Pair]:
    """`pairs` with the labels of `labels_file` (JSON lines s1/s2/label, gzip too) where it has the pair, either
    way round; the others keep theirs. None: the pairs as they are."""
    if labels_file is None:
        return pairs
    table = {frozenset((norm_key(r["s1"]), norm_key(r["s2"]))): int(r["label"]) for r in read_jsonl(labels_file)}
    out = [
        Pair(p.s1, p.s2, table.get(frozenset((norm_key(p.s1), norm_key(p.s2))), p.label), p.source, p.meta)
        for p in pairs
    ]
    changed = sum(a.label != b.label for a, b in zip(pairs, out))
    log(f"{labels_file}: {len(table)} labels, {changed} of {len(pairs)} pairs changed")
    return out


def build_data(args, base: Path, work: Path, out: Path):
    data = Path(args.data)
    if not (data / "mrpc/train.tsv").exists():
        sys.exit(f"training data not found under {data} (expected ../shared/data, see its README.md)")
    rng = random.Random(args.seed)
    val, mrpc_train, mrpc_all = load_validation(data, args)

    write_heldout(out / "mrpc-heldout.json", val["mrpc-heldout"], len(mrpc_all), args)

    forbidden = {norm_key(s) for v in val.values() for p in v for s in (p.s1, p.s2)}

    def clean(pairs: list[Pair]) -> list[Pair]:
        return [
            p
            for p in pairs
            if norm_key(p.s1) not in forbidden and norm_key(p.s2) not in forbidden and norm_key(p.s1) != norm_key(p.s2)
        ]

    expert = read_source(data, "multipit-expert")
    auto_all = relabel(read_source(data, "multipit-auto"), args.auto_labels)
    parasci_all = read_source(data, "parasci-acl")
    raw_counts = {
        "mrpc-train-part": len(mrpc_train),
        "multipit-expert-train": len(expert),
        "multipit-auto-train": len(auto_all),
        "parasci-acl-train": len(parasci_all),
    }
    mrpc_c, expert_c, auto_c, parasci_c = clean(mrpc_train), clean(expert), clean(auto_all), clean(parasci_all)
    dropped = {
        "mrpc-train-part": len(mrpc_train) - len(mrpc_c),
        "multipit-expert-train": len(expert) - len(expert_c),
        "multipit-auto-train": len(auto_all) - len(auto_c),
        "parasci-acl-train": len(parasci_all) - len(parasci_c),
    }
    log(f"raw {raw_counts}; dropped (overlap with validation or s1 == s2) {dropped}")

    auto_idx = list(range(len(auto_c)))
    rng.shuffle(auto_idx)
    auto_sub = [auto_c[i] for i in auto_idx[: args.n_auto]]
    auto_pos = [p for p in auto_sub if p.label == 1]
    auto_neg = [p for p in auto_sub if p.label == 0]
    auto_pool = [auto_c[i] for i in auto_idx[args.n_auto : args.n_auto + args.auto_pool]]
    par_idx = list(range(len(parasci_c)))
    rng.shuffle(par_idx)
    par_pos = [parasci_c[i] for i in par_idx[: args.n_parasci]]
    par_pool = [parasci_c[i] for i in par_idx[args.n_parasci : args.n_parasci + args.parasci_pool]]
    mrpc_pos = [p for p in mrpc_c if p.label == 1]
    mrpc_neg = [p for p in mrpc_c if p.label == 0]
    exp_pos = [p for p in expert_c if p.label == 1]
    exp_neg = [p for p in expert_c if p.label == 0]
    mrpc_mine_src = rng.sample(mrpc_pos, min(args.n_mrpc_mined, len(mrpc_pos)))

    enc = SentenceEncoder(Path(args.mine_encoder) if args.mine_encoder else base, args.max_len)
    auto_groups = [p for p in auto_c if p.label == 1]
    mined_auto, st_auto = mine_negatives(enc, auto_pos, auto_pool, auto_groups, forbidden, rng, args, "multipit-auto")
    mined_par, st_par = mine_negatives(enc, par_pos, par_pool, parasci_c, forbidden, rng, args, "parasci-acl")
    mined_mrpc, st_mrpc = mine_negatives(enc, mrpc_mine_src, mrpc_c, mrpc_c, forbidden, rng, args, "mrpc")
    del enc

    parts = {
        "mrpc-train-part positives": mrpc_pos,
        "mrpc-train-part negatives (labeled)": mrpc_neg,
        "multipit-expert-train positives": exp_pos,
        "multipit-expert-train negatives (labeled)": exp_neg,
        "multipit-auto positives (subsample)": auto_pos,
        "multipit-auto negatives (teacher-relabeled)": auto_neg,
        "parasci-acl positives (subsample)": par_pos,
        "mined negatives multipit-auto": mined_auto,
        "mined negatives parasci-acl": mined_par,
        "mined negatives mrpc": mined_mrpc,
    }
    rows = []
    for name, ps in parts.items():
        reps = args.expert_repeat if name.startswith("multipit-expert") else 1
        for p in ps:
            first_swap = rng.random() < 0.5
            for r in range(reps):  # a repeat takes the order opposite to the copy before it
                a, b = (p.s2, p.s1) if first_swap ^ (r % 2 == 1) else (p.s1, p.s2)
                rows.append({"s1": a, "s2": b, "label": p.label, "source": name})
    rng.shuffle(rows)
    counts = {k: len(v) for k, v in parts.items()}
    stats = {
        "raw": raw_counts,
        "dropped_overlap": dropped,
        "parts": counts,
        "expert_repeat": args.expert_repeat,
        "train_rows": len(rows),
        "train_positive": sum(r["label"] for r in rows),
        "train_negative": sum(1 - r["label"] for r in rows),
        "mining": {"multipit-auto": st_auto, "parasci-acl": st_par, "mrpc": st_mrpc},
        "validation": {k: {"pairs": len(v), "positives": sum(p.label for p in v)} for k, v in val.items()},
    }
    write_rows(work, rows, stats)
    return stats


# ---------------------------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------------------------


def label_names(work: Path) -> dict[int, str]:
    """id -> label of the run: the data stage writes them (Turku); otherwise the binary pair."""
    p = work / "data_stats.json"
    stats = json.loads(p.read_text()) if p.exists() else {}
    return {int(k): v for k, v in stats.get("id2label", ID2LABEL).items()}


def length_grouped(lengths: list[int], batch: int, epochs: int, seed: int) -> list[list[int]]:
    """Shuffle, sort within mega-batches of 50 batches by length, shuffle the batch order (per epoch)."""
    g = random.Random(seed + 1)
    batches = []
    for _ in range(epochs):
        idx = list(range(len(lengths)))
        g.shuffle(idx)
        mega, eb = batch * 50, []
        for m in range(0, len(idx), mega):
            chunk = sorted(idx[m : m + mega], key=lambda i: lengths[i])
            eb += [chunk[b : b + batch] for b in range(0, len(chunk), batch)]
        g.shuffle(eb)
        batches += eb
    return batches


def train(args, base: Path, work: Path, out: Path, val: dict, evaluate) -> dict:
    """Fine-tunes `base` as a sequence classifier on WORK/train.jsonl.

    A row's target is its `label` (class id: cross-entropy) or its `soft` label distribution (a teacher's
    probabilities: cross-entropy against them, i.e. distillation). `evaluate(model, tok, pairs)` scores the first
    validation set at 1/3 and 2/3 of the steps (logged only: the final weights are kept whatever it says)."""
    import numpy as np
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    seed_all(args.seed)
    rows = read_rows(work)
    id2label = label_names(work)
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base,
        num_labels=len(id2label),
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
        attn_implementation="eager",
    )
    enc = tok([r["s1"] for r in rows], [r["s2"] for r in rows], truncation=True, max_length=args.max_len)
    keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc]
    batches = length_grouped([len(x) for x in enc["input_ids"]], args.batch, args.epochs, args.seed)
    soft = "soft" in rows[0]

    def loss_of(b):
        feats = tok.pad({k: [enc[k][i] for i in b] for k in keys}, return_tensors="pt").to(model.device)
        logits = model(**feats).logits.float()
        if soft:
            target = torch.tensor([rows[i]["soft"] for i in b], dtype=logits.dtype, device=logits.device)
            return -(target * torch.log_softmax(logits, -1)).sum(-1).mean()
        gold = torch.tensor([rows[i]["label"] for i in b], device=logits.device)
        return torch.nn.functional.cross_entropy(logits, gold)

    first = next(iter(val))
    total = min(len(batches), args.max_steps or len(batches))
    evals = {
        s: (lambda: {first: evaluate(model, tok, val[first])}) for s in {int(total * f) for f in (1 / 3, 2 / 3)} - {0}
    }
    log(
        f"train: {len(rows)} pairs, batch {args.batch}, max_len {args.max_len}, labels {id2label}"
        + (", soft targets (distillation)" if soft else "")
    )
    r = loop.run(model, batches, loss_of, args, work, evals=evals)
    losses = r.pop("losses")
    r.pop("step_times")
    ck = work / "checkpoint"
    if ck.exists():
        shutil.rmtree(ck)
    model.save_pretrained(ck)
    tok.save_pretrained(ck)
    for f in TOKENIZER_FILES:  # the base's own tokenizer files, as the runtime reads them
        if (base / f).exists():
            shutil.copy2(base / f, ck / f)
    info = {
        **r,
        "final_loss_last50": round(float(np.mean(losses[-50:])), 4),
        "loss_curve_every50": loop.curve(losses, 50),
    }
    write_json(work / "train_info.json", info, indent=1)
    log(f"trained in {info['train_seconds'] / 60:.1f} min -> {ck}")
    return info
