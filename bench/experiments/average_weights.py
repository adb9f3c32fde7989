#!/usr/bin/env python3
"""Weight-space interpolation of two cross-encoders of the same shape (WiSE-FT, Wortsman et al. 2022): the weights
(1 - t) * A + t * B, written as a work directory that `paramine-train reranker --stage export` and `--stage calibrate`
take as they are (checkpoint/, plus the data and training reports of B, the fine-tuned end, with the average
recorded in train_info.json).

A is typically the model B was fine-tuned from (for a graph-only paramine model, the dequantized copy the train
stage leaves in <work>/base-float), so t = 0 is the base and t = 1 the fine-tuned model:

    .venv/bin/python bench/experiments/average_weights.py \
        --a build/ft-parasci/base-float --b build/ft-parasci/checkpoint \
      --b-work build/ft-parasci --t 0.5 --work build/wise50
"""

import argparse
import json
import shutil
import sys
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, type=Path, help="checkpoint directory at t = 0 (safetensors)")
    ap.add_argument("--b", required=True, type=Path, help="checkpoint directory at t = 1 (safetensors)")
    ap.add_argument("--b-work", required=True, type=Path, help="B's train work dir (data_stats.json, train_info.json)")
    ap.add_argument("--t", type=float, default=0.5, help="weight of B, in [0, 1]")
    ap.add_argument("--work", required=True, type=Path, help="work directory to write")
    a = ap.parse_args()
    if not 0 <= a.t <= 1:
        ap.error("--t must lie in [0, 1]")
    from safetensors.torch import load_file, save_file

    wa, wb = load_file(str(a.a / "model.safetensors")), load_file(str(a.b / "model.safetensors"))
    if wa.keys() != wb.keys() or any(wa[k].shape != wb[k].shape for k in wa):
        diff = sorted(set(wa) ^ set(wb)) or [k for k in wa if wa[k].shape != wb[k].shape]
        print(f"average_weights: the two checkpoints differ in shape or names: {diff[:5]}", file=sys.stderr)
        return 2
    ck = a.work / "checkpoint"
    ck.mkdir(parents=True, exist_ok=True)
    for f in a.b.iterdir():  # config and tokenizer from B (the same architecture, checked above)
        if f.is_file() and f.name != "model.safetensors":
            shutil.copy2(f, ck / f.name)
    mixed = {k: ((1 - a.t) * wa[k].float() + a.t * wb[k].float()).to(wb[k].dtype).contiguous() for k in wb}
    save_file(mixed, str(ck / "model.safetensors"), metadata={"format": "pt"})
    shutil.copy2(a.b_work / "data_stats.json", a.work / "data_stats.json")
    info = json.loads((a.b_work / "train_info.json").read_text())
    info["weight_average"] = {"a": str(a.a), "b": str(a.b), "t": a.t}
    (a.work / "train_info.json").write_text(json.dumps(info, indent=1) + "\n")
    print(f"average_weights: {len(mixed)} tensors, (1 - {a.t}) * {a.a} + {a.t} * {a.b} -> {ck}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
