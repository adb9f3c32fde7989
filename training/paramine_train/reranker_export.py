"""Cross-encoder pipeline, after training: ONNX export + int8, evaluation of PyTorch / ONNX fp32 / int8 on the
validation sets, the model directory (config.json with the `paramine` label-scheme block) and metrics."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from .common import library_versions, log, rel
from .encode import predict_onnx, predict_torch, softmax
from .export import export_onnx, file_info, graph_info, quantize
from .reranker import TOKENIZER_FILES


def metrics(logits, labels, positive: int = 1) -> dict:
    """Binary paraphrase metrics of the arg-max label (class `positive` vs the rest), plus the best-threshold F1
    on P(positive) as a diagnostic (chosen on the same data, so optimistic)."""
    import numpy as np

    logits = np.asarray(logits, dtype=np.float64)
    labels = np.asarray(labels) == positive
    pred = logits.argmax(1) == positive
    tp, fp, fn = int((pred & labels).sum()), int((pred & ~labels).sum()), int((~pred & labels).sum())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    prob = softmax(logits)[:, positive]
    best = (0.0, 0.5)
    for t in np.unique(np.round(prob, 4)):
        pr = prob >= t
        tp_, fp_, fn_ = (pr & labels).sum(), (pr & ~labels).sum(), (~pr & labels).sum()
        f = 2 * tp_ / (2 * tp_ + fp_ + fn_) if tp_ else 0.0
        if f > best[0]:
            best = (float(f), float(t))
    return {
        "n": int(len(labels)),
        "accuracy": round(float((pred == labels).mean()), 4),
        "precision": round(prec, 4),
        "recall": round(rec, 4),
        "f1": round(f1, 4),
        "best_threshold_f1_diagnostic": round(best[0], 4),
        "best_threshold_diagnostic": round(best[1], 4),
    }


def at_threshold(prob, labels, t: float) -> dict:
    """Binary metrics of the label cut `P(positive) >= t`."""
    import numpy as np

    labels = np.asarray(labels) == 1
    pred = np.asarray(prob) >= t
    tp, fp, fn = int((pred & labels).sum()), int((pred & ~labels).sum()), int((~pred & labels).sum())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return {
        "n": int(len(labels)),
        "accuracy": round(float((pred == labels).mean()), 4),
        "precision": round(prec, 4),
        "recall": round(rec, 4),
        "f1": round(2 * prec * rec / (prec + rec) if prec + rec else 0.0, 4),
    }


def choose_threshold(probs: dict, labels: dict) -> tuple[float, dict]:
    """The label cut on P(paraphrase) with the best mean F1 over the validation sets (each set counts once,
    whatever its size), searched on a 0.01 grid; ties go to the higher cut (fewer false positives)."""
    import numpy as np

    best_t, best_f = 0.5, -1.0
    for t in np.round(np.arange(0.05, 0.96, 0.01), 2):
        f = float(np.mean([at_threshold(probs[v], labels[v], t)["f1"] for v in probs]))
        if f >= best_f:
            best_t, best_f = float(t), f
    return best_t, {v: at_threshold(probs[v], labels[v], best_t) for v in probs}


def evaluate_torch(args, metric=metrics):
    """The callable the training loop uses for its interim evaluations."""

    def run(model, tok, pairs):
        return metric(predict_torch(model, tok, pairs, args.max_len), [p.label for p in pairs])

    return run


def score_all(args, model, tok, fp32: Path, variants: dict, val: dict, metric) -> tuple[dict, dict]:
    """Metrics of PyTorch, ONNX fp32 and each int8 variant on every validation set; ONNX-vs-PyTorch parity."""
    import numpy as np

    results, parity = {}, {}
    for vname, pairs in val.items():
        y = [p.label for p in pairs]
        t0 = time.time()
        lt = predict_torch(model, tok, pairs, args.max_len)
        results.setdefault("pytorch-fp32", {})[vname] = metric(lt, y)
        log(f"pytorch {vname}: {results['pytorch-fp32'][vname]} ({time.time() - t0:.1f}s)")
        lo, sec = predict_onnx(fp32, tok, pairs, args.max_len, args.threads)
        results.setdefault("onnx-fp32", {})[vname] = metric(lo, y) | {"seconds": round(sec, 1)}
        parity[vname] = float(np.abs(lo - lt).max())
        log(f"onnx-fp32 {vname}: {results['onnx-fp32'][vname]}; max |logit diff| vs pytorch {parity[vname]:.2e}")
        for name, path in variants.items():
            lq, sec = predict_onnx(path, tok, pairs, args.max_len, args.threads)
            results.setdefault(f"onnx-{name}", {})[vname] = metric(lq, y) | {
                "seconds": round(sec, 1),
                "max_abs_logit_diff_vs_fp32": round(float(np.abs(lq - lo).max()), 4),
                "argmax_agreement_vs_fp32": round(float((lq.argmax(1) == lo.argmax(1)).mean()), 4),
            }
            log(f"onnx-{name} {vname}: {results[f'onnx-{name}'][vname]}")
    return results, parity


def paramine_block(id2label: dict, scheme: str) -> dict:
    """config.json's `paramine` object: the label scheme and its positive labels (read by src/text/labels.ts)."""
    if scheme == "turku":
        positive = [lb for lb in id2label.values() if lb[:1] in ("3", "4")]
    else:
        positive = [lb for lb in id2label.values() if lb.lower() in ("1", "paraphrase")]
    return {"label_scheme": scheme, "positive_labels": positive}


def write_model_dir(args, ck: Path, out: Path, graph: Path, scheme: str, threshold: float | None = None):
    """model.onnx, the tokenizer files (truncating where training did) and config.json with the paramine block."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.onnx"):
        stale.unlink()
    shutil.copy2(graph, out / "model.onnx")
    for f in TOKENIZER_FILES:
        if (ck / f).exists():
            shutil.copy2(ck / f, out / f)
    tok_cfg = json.loads((out / "tokenizer_config.json").read_text())
    tok_cfg["model_max_length"] = args.max_len  # inference truncates where training did
    (out / "tokenizer_config.json").write_text(json.dumps(tok_cfg))
    cfg = json.loads((ck / "config.json").read_text())
    old = json.loads((out / "config.json").read_text()) if (out / "config.json").exists() else {}
    id2label = {str(k): v for k, v in cfg["id2label"].items()}
    cfg["id2label"] = id2label
    cfg["label2id"] = {v: int(k) for k, v in id2label.items()}
    cfg["paramine"] = paramine_block(id2label, scheme)
    if threshold is not None:
        cfg["paramine"]["threshold"] = threshold
    if "calibration" in old.get("paramine", {}) and args.stage != "all":
        cfg["paramine"]["calibration"] = old["paramine"]["calibration"]  # kept until the calibrate stage redoes it
    (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")


def export(args, work: Path, out: Path, val: dict, metric, scheme: str = "binary") -> dict:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    ck = work / "checkpoint"
    tok = AutoTokenizer.from_pretrained(ck)
    model = AutoModelForSequenceClassification.from_pretrained(ck, attn_implementation="eager").eval()
    fp32 = work / "model-fp32.onnx"
    export_onnx(model, tok, "logits", fp32, args.opset, pairs=True, dyn_out_seq=False)
    variants = quantize(fp32, work)
    results, parity = score_all(args, model, tok, fp32, variants, val, metric)

    # of the int8 variants that stay within --int8-tolerance F1 points of fp32 on every set, the one closest to fp32
    # (mean arg-max agreement over the validation sets: F1 differences between the variants are within noise on a
    # few hundred pairs); when none holds, fp32 is the committed graph instead
    def agreement(k):
        return sum(results[k][v]["argmax_agreement_vs_fp32"] for v in val) / len(val)

    def within(n):
        return all(results["onnx-fp32"][v]["f1"] - results[f"onnx-{n}"][v]["f1"] <= args.int8_tolerance for v in val)

    holding = [n for n in variants if within(n)]
    best = max(holding or variants, key=lambda n: agreement(f"onnx-{n}"))
    holds = bool(holding)
    committed = variants[best] if holds else fp32
    log(f"int8 variant {best} {'holds' if holds else 'does NOT hold'} accuracy; {committed.name} becomes model.onnx")
    threshold, at = None, None
    if scheme == "binary":  # the label cut, chosen on val for F1 with the graph that is committed
        probs = {
            v: softmax(predict_onnx(committed, tok, pairs, args.max_len, args.threads)[0])[:, 1]
            for v, pairs in val.items()
        }
        threshold, at = choose_threshold(probs, {v: [p.label for p in pairs] for v, pairs in val.items()})
        log(f"label threshold {threshold} (best mean F1 over {list(val)}): {at}")
    write_model_dir(args, ck, out, committed, scheme, threshold)
    files = {
        "model.onnx": file_info(out / "model.onnx", variant=best if holds else "fp32", committed=True),
        "model-fp32.onnx": file_info(fp32, variant="fp32", committed=False, where=rel(fp32)),
    }
    for name, path in variants.items():
        files[f"model-{name}.onnx"] = file_info(path, variant=name, committed=path == committed)
    report = {
        "parameters": int(model.num_parameters()),
        "results": results,
        "onnx_parity_max_abs_logit_diff": parity,
        "threshold": threshold,
        "at_threshold": at,
        "committed_variant": best if holds else "fp32",
        "graph": graph_info(out / "model.onnx"),
        "files": files,
        "data": json.loads((work / "data_stats.json").read_text()),
        "training": json.loads((work / "train_info.json").read_text()),
        "versions": library_versions(),
    }
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    log(f"model directory {out}: {size / 1e6:.1f} MB")
    return report
