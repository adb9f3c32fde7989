"""`paramine-train COMMAND ...` (or `python -m paramine_train COMMAND ...`): the kit's commands, each with the
flags its script had. `paramine-train COMMAND --help` lists them."""

from __future__ import annotations

import importlib
import sys

# command -> (module, what it does); modules load only when their command runs (torch is slow to import)
COMMANDS = {
    "reranker": ("reranker_cli", "train, export and calibrate the paraphrase cross-encoder"),
    "sbert": ("sbert_cli", "fine-tune, export and evaluate the SBERT bi-encoder"),
    "span": ("span", "train and export the sub-sentence span model"),
    "score-pairs": ("score_pairs", "score sentence pairs with a cross-encoder, resumably (distillation targets)"),
    "relabel-auto": ("auto_relabeled", "MultiPIT_Auto relabeled by a teacher's scores (MultiPIT's label cleaning)"),
    "convert": ("convert", "convert packaged weights (TF1 BERT, sentence-transformers) into model directories"),
    # a GPU round (docs/training.md "On a GPU machine"): inputs written here, the round there, its results back here
    "gpu-inputs": ("gpu_inputs", "write a GPU round's inputs where node and ../shared/data are"),
    "gpu-round": ("gpu_round", "on the GPU machine: teacher sweep, cleaning and students in one command"),
    "gpu-import": ("gpu_import", "make what a GPU round returned into reranker work folders here"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {c.ljust(width)}  {what}" for c, (_, what) in COMMANDS.items()]
    return "usage: paramine-train COMMAND [options]\n\ncommands:\n" + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(usage())
        return
    if args[0] not in COMMANDS:
        sys.exit(f"paramine-train: unknown command {args[0]!r}\n\n{usage()}")
    module, _ = COMMANDS[args[0]]
    sys.argv = [f"paramine-train {args[0]}", *args[1:]]
    importlib.import_module(f"paramine_train.{module}").main()


if __name__ == "__main__":
    main()
