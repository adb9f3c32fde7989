#!/usr/bin/env python3
"""What paramine-train gpu-round sent back from a GPU machine, made into paramine-train reranker work folders
here, so the usual `--stage export` (ONNX, int8, card) and `--stage calibrate` run on them:

  RETURNED/metrics.json, RETURNED/<run>.log, RETURNED/student.tar.part-*, RETURNED/t-* (the teacher's tar parts)
  -> WORK/student-work and WORK/teacher-work: checkpoint/ (float32 again), data_stats.json, train_info.json

  paramine-train gpu-import --returned build/gpu/returned --work build/gpu \
      --labeled-stats build/student/data_stats.json
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

from .gpu_inputs import convert_weights

DISTILL_KEYS = (
    "task",
    "teacher",
    "candidate_pairs",
    "relabeled_pairs",
    "relabeled_negative",
    "candidate_pairs_dropped_val_overlap",
    "labeled_rows",
    "teacher_mean_p",
    "teacher_positive_share",
)
MADE = (
    "paramine-train gpu-round on an {device} ({date}{extra}), exported here with "
    "`paramine-train reranker --stage export"
    "{task}`; docs/training.md has the commands"
)


def train_info(log: Path, seconds: float, device: str) -> dict:
    """Steps, early stop and final loss from a run's log (paramine-train reranker's loop writes them there)."""
    text = log.read_text()
    planned = int(re.search(r"train: (\d+) steps", text).group(1))
    stop = re.search(r"STOP: .* at step (\d+)/", text)
    steps = int(stop.group(1)) if stop else planned
    loss = [float(x) for x in re.findall(r"loss (\d+\.\d+)", text)]
    return {
        "steps_planned": planned,
        "steps": steps,
        "stopped_early": bool(stop),
        "train_seconds": seconds,
        "seconds_per_step": round(seconds / steps, 3),
        "device": device,
        "eval_history": [],
        "final_loss_last50": loss[-1] if loss else None,
        "resumed_at": 0,
    }


def untar(parts: list[Path], into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as f:
        for p in sorted(parts):
            f.write(p.read_bytes())
        f.seek(0)
        subprocess.run(["tar", "-x", "-C", str(into)], stdin=f, check=True)
    return next(d for d in into.iterdir() if d.is_dir())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--returned", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument(
        "--labeled-stats", required=True, help="data_stats.json of the data stage the labeled rows came from"
    )
    a = ap.parse_args()
    ret, work = Path(a.returned), Path(a.work)
    m = json.loads((ret / "metrics.json").read_text())
    raw = json.loads(Path(a.labeled_stats).read_text())
    labeled = {k: v for k, v in raw.items() if k not in DISTILL_KEYS + ("train_rows",)}
    n_labeled = raw.get("labeled_rows", raw["train_rows"])  # a distill stage's stats name the labeled part
    date = m["started"][:10]
    sc = m["scoring"]
    import numpy as np

    p_cand = np.load(ret / "scores.npz")["candidates"].astype(np.float32)
    sides = {
        "teacher": (
            m["teacher"],
            "t-*",
            m["teacher_seconds"],
            {
                **labeled,
                "train_rows": n_labeled,
                "sweep": {
                    n: {k: r[k] for k in ("select", "threshold", "at_threshold")} for n, r in m["teachers"].items()
                },
                "made_by": MADE.format(
                    device=m["device"],
                    date=date,
                    task="",
                    extra=f"; the sweep arm {m['teacher']}, chosen by the mean of MultiPIT expert val "
                    "best-cut F1 and MRPC held-out accuracy",
                ),
            },
        ),
        "student": (
            m["student"],
            "student.tar.part-*",
            m["student_seconds"],
            {
                **labeled,
                "task": "distill",
                "teacher": f"models/paramine-paraphrase-mpnet-base ({m['teacher']})",
                "candidate_pairs": sc["candidates"],
                "relabeled_pairs": sc["auto"],
                "relabeled_negative": sc["auto_flipped"],
                "labeled_rows": n_labeled,
                "teacher_mean_p": sc["candidate_mean_p"],
                "teacher_positive_share": round(float((p_cand >= 0.5).mean()), 4),
                "train_rows": m["student_rows"][m["student"]],
                "cleaning": {
                    "lambda": sc["lambda"],
                    "flipped": sc["auto_flipped"],
                    "of": sc["auto"],
                    **{
                        f"student_with_{k}": r["at_threshold"]
                        for k, r in (
                            ("cleaned_auto", m["students"]["s-cleaned"]),
                            ("raw_auto", m["students"]["s-raw-auto"]),
                        )
                    },
                },
                "made_by": MADE.format(device=m["device"], date=date, task=" --task distill", extra=""),
            },
        ),
    }
    for side, (run, pattern, seconds, stats) in sides.items():
        w = work / f"{side}-work"
        src = untar(list(ret.glob(pattern)), work / "returned-untarred" / side)
        convert_weights(src, w / "checkpoint", "float32")
        (w / "data_stats.json").write_text(json.dumps(stats, indent=1))
        info = train_info(
            ret / f"{run}.log", seconds[run], f"{m['device']}, bf16 autocast, beside the other runs of its stage"
        )
        (w / "train_info.json").write_text(json.dumps(info, indent=1))
        print(f"{side}: {run} -> {w}")


if __name__ == "__main__":
    main()
