#!/usr/bin/env python3
"""#28's teacher -> relabel -> distil round in one go on a GPU machine (where a session has one): the same
training code as on the CPU (paramine-train reranker --stage train runs on CUDA when it is there, bf16 autocast).

1. teachers: a small sweep of cross-encoders on --teacher-base over the labeled rows (and, in one arm, the
   MultiPIT_Auto pairs an earlier teacher relabeled), in parallel; each scored on the validation sets; the best
   mean of (MultiPIT expert val F1 at its best cut, MRPC held-out accuracy) is the teacher.
2. the teacher scores the candidate pairs paramine mined (sentence table + id pairs) and relabels MultiPIT_Auto
   train (label = p >= --relabel, the paper's lambda 0.25).
3. students on --student-base, in parallel: soft targets on the candidates + the cleaned auto pairs + the labeled
   rows; and the same with the auto pairs' original labels (all paraphrases), to show what the cleaning does.
4. OUT: metrics.json, scores.npz (teacher p of every candidate and auto pair, float16, input order), the chosen
   student's weights (float16 safetensors + tokenizer, as tar parts of <= 15 MiB), log.

Inputs (--inputs, written by paramine-train gpu-inputs on the machine with node and the data):
  labeled.jsonl.gz   the binary recipe's labeled rows ({s1, s2, soft, source})
  relabeled-old.jsonl.gz   MultiPIT_Auto pairs an earlier teacher relabeled ({s1, s2, label})
  sentences.txt.gz + pairs.npy   candidate pairs as ids into the sentence table
  auto.jsonl.gz      MultiPIT_Auto train pairs ({s1, s2}), validation sentences already left out
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from .common import log, write_json
from .gpu_inputs import convert_weights

TEACHERS = {  # name -> (extra paramine-train reranker flags, use the earlier teacher's relabeled auto pairs)
    "t-lr2e5-e3": (["--lr", "2e-5", "--epochs", "3"], False),
    "t-lr3e5-e4": (["--lr", "3e-5", "--epochs", "4"], False),
    "t-lr2e5-e3-auto": (["--lr", "2e-5", "--epochs", "3"], True),
}


def read_gz(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def write_work(work: Path, rows: list[dict]):
    work.mkdir(parents=True, exist_ok=True)
    with open(work / "train.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    write_json(work / "data_stats.json", {"train_rows": len(rows)})


def train_parallel(runs: dict[str, list[str]], a, log_dir: Path) -> dict[str, float]:
    """paramine-train reranker --stage train for each run at once (one GPU shares them); seconds each took."""
    procs, t0 = {}, time.time()
    for name, flags in runs.items():
        cmd = [
            sys.executable,
            "-m",
            "paramine_train",
            "reranker",
            "--stage",
            "train",
            "--data",
            a.data,
            "--max-len",
            str(a.max_len),
            "--log-every",
            "200",
            "--max-minutes",
            a.max_minutes,
            *(["--max-steps", str(a.smoke)] if a.smoke else []),
            *flags,
        ]
        # the package from this checkout, installed or not
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        procs[name] = subprocess.Popen(
            cmd, stdout=open(log_dir / f"{name}.log", "w"), stderr=subprocess.STDOUT, env=env
        )
    took = {}
    for name, p in procs.items():
        if p.wait() != 0:
            raise RuntimeError(f"{name} failed: {(log_dir / f'{name}.log').read_text()[-3000:]}")
        took[name] = round(time.time() - t0, 1)
        log(f"{name} trained ({took[name]} s)")
    return took


def evaluate(ck: Path, val: dict, max_len: int) -> dict:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from paramine_train.common import torch_device
    from paramine_train.encode import predict_torch, softmax
    from paramine_train.reranker_export import choose_threshold, metrics

    tok = AutoTokenizer.from_pretrained(ck)
    model = AutoModelForSequenceClassification.from_pretrained(ck).to(torch_device())
    logits = {v: predict_torch(model, tok, pairs, max_len) for v, pairs in val.items()}
    labels = {v: [p.label for p in pairs] for v, pairs in val.items()}
    cut, at_cut = choose_threshold({v: softmax(lg)[:, 1] for v, lg in logits.items()}, labels)
    out = {v: metrics(logits[v], labels[v]) for v in val}
    mp, mr = out["multipit-expert-val"], out["mrpc-heldout"]
    return {
        "argmax": out,
        "threshold": cut,
        "at_threshold": at_cut,
        "select": round((mp["best_threshold_f1_diagnostic"] + mr["accuracy"]) / 2, 4),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--teacher-base", required=True)
    ap.add_argument("--student-base", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--data", required=True, help="the shared data folder (its validation files)")
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--relabel", type=float, default=0.25)
    ap.add_argument("--student-epochs", type=int, default=1)
    ap.add_argument("--student-lr", default="8e-5")
    ap.add_argument("--student-batch", default="128")
    ap.add_argument("--max-minutes", default="2.5", help="each training run stops there (a GPU lease is short)")
    ap.add_argument(
        "--smoke",
        type=int,
        default=0,
        metavar="N",
        help="a dry run: N steps a training run, N candidate and auto pairs (checks the script on a CPU)",
    )
    a = ap.parse_args()
    inp, work, out = Path(a.inputs), Path(a.work), Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    logs = work / "logs"  # joined into OUT/logs.txt at the end (few files come back from a GPU machine)
    logs.mkdir(parents=True, exist_ok=True)
    report: dict = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    import torch

    report["device"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"

    def save():
        write_json(out / "metrics.json", report)
        (out / "logs.txt").write_text(
            "".join(f"==> {f.name}\n{f.read_text()[-20000:]}\n" for f in sorted(logs.glob("*.log")))
        )

    try:
        run(a, inp, work, out, logs, report, save)
    finally:
        save()


def run(a, inp: Path, work: Path, out: Path, logs: Path, report: dict, save):
    for side in ("teacher_base", "student_base"):  # carried in float16: train from float32 copies
        src = Path(getattr(a, side))
        convert_weights(src, work / "bases" / src.name, "float32")
        setattr(a, side, str(work / "bases" / src.name))
    from paramine_train.reranker import load_validation

    val, _, _ = load_validation(Path(a.data), argparse.Namespace(mrpc_heldout=0.1, seed=13))
    labeled = read_gz(inp / "labeled.jsonl.gz")
    old = read_gz(inp / "relabeled-old.jsonl.gz")
    old_rows = [
        {"s1": r["s1"], "s2": r["s2"], "soft": [1.0 - r["label"], float(r["label"])], "source": "relabeled-old"}
        for r in old
    ]

    # 1. teachers
    runs = {}
    for name, (flags, with_auto) in TEACHERS.items():
        write_work(work / name, labeled + (old_rows if with_auto else []))
        runs[name] = [
            "--base",
            a.teacher_base,
            "--work",
            str(work / name),
            "--out",
            str(work / name / "out"),
            "--batch",
            "32",
            *flags,
        ]
    report["teacher_seconds"] = train_parallel(runs, a, logs)
    report["teachers"] = {n: evaluate(work / n / "checkpoint", val, a.max_len) for n in TEACHERS}
    best = max(TEACHERS, key=lambda n: report["teachers"][n]["select"])
    report["teacher"] = best
    log(f"teachers: { {n: r['select'] for n, r in report['teachers'].items()} } -> {best}")
    save()

    # 2. the teacher's scores
    import numpy as np

    from paramine_train.calibrate import score_pairs

    sents = gzip.open(inp / "sentences.txt.gz", "rt", encoding="utf-8").read().split("\n")
    ids = np.load(inp / "pairs.npy")
    cand = [(sents[i], sents[j]) for i, j in ids][: a.smoke or None]
    auto = [(r["s1"], r["s2"]) for r in read_gz(inp / "auto.jsonl.gz")][: a.smoke or None]
    t0 = time.time()
    p_cand = np.array(score_pairs(work / best / "checkpoint", cand, 16, batch=64), dtype=np.float32)
    p_auto = np.array(score_pairs(work / best / "checkpoint", auto, 16, batch=64), dtype=np.float32)
    report["scoring"] = {
        "pairs": len(cand) + len(auto),
        "seconds": round(time.time() - t0, 1),
        "candidates": len(cand),
        "candidate_mean_p": round(float(p_cand.mean()), 4),
        "auto": len(auto),
        "auto_flipped": int((p_auto < a.relabel).sum()),
        "lambda": a.relabel,
    }
    np.savez_compressed(out / "scores.npz", candidates=p_cand.astype(np.float16), auto=p_auto.astype(np.float16))
    log(f"scoring: {report['scoring']}")
    save()

    # 3. students: cleaned auto labels vs the original ones
    soft = [
        {"s1": s1, "s2": s2, "soft": [round(1 - float(p), 5), round(float(p), 5)], "source": "teacher"}
        for (s1, s2), p in zip(cand, p_cand)
    ]
    cleaned = [
        {"s1": s1, "s2": s2, "soft": [float(p < a.relabel), float(p >= a.relabel)], "source": "relabeled"}
        for (s1, s2), p in zip(auto, p_auto)
    ]
    raw = [{**r, "soft": [0.0, 1.0], "source": "auto-raw"} for r in cleaned]
    students = {"s-cleaned": soft + cleaned + labeled, "s-raw-auto": soft + raw + labeled}
    runs = {}
    for name, rows in students.items():
        random.Random(13).shuffle(rows)
        write_work(work / name, rows)
        runs[name] = [
            "--base",
            a.student_base,
            "--work",
            str(work / name),
            "--out",
            str(work / name / "out"),
            "--batch",
            a.student_batch,
            "--lr",
            a.student_lr,
            "--epochs",
            str(a.student_epochs),
        ]
    report["student_rows"] = {n: len(r) for n, r in students.items()}
    report["student_seconds"] = train_parallel(runs, a, logs)
    report["students"] = {n: evaluate(work / n / "checkpoint", val, a.max_len) for n in students}
    chosen = max(students, key=lambda n: report["students"][n]["select"])
    report["student"] = chosen
    save()

    # 4. the chosen student, float16, in parts small enough to come back
    pack = work / "pack" / chosen
    convert_weights(work / chosen / "checkpoint", pack, "float16")
    subprocess.run(
        f"tar -C {pack.parent} -cf - {chosen} | split -b 15M - {out}/student.tar.part-", shell=True, check=True
    )
    report["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    save()
    log("done")


if __name__ == "__main__":
    os.environ["TOKENIZERS_PARALLELISM"] = "true"
    main()
