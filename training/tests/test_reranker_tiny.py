"""The cross-encoder pipeline on a tiny model: a few training steps (reranker.train), the export stage
(ONNX, int8 variants, the label cut, the model directory), then the same pairs scored by the kit and by
paramine's TypeScript runtime (`paramine bench classify --scores`): P(paraphrase) within 1e-4, in either order."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from paramine_train import reranker, reranker_cli, reranker_export
from paramine_train.calibrate import score_pairs
from paramine_train.common import write_rows
from paramine_train.pairs import Pair

from conftest import REPO
from tiny import demo_pairs, make_base

CLI = REPO / "dist" / "cli.js"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("reranker")
    base = make_base(root / "base")
    work, out = root / "work", root / "model"
    train = demo_pairs(96, 0)
    # negatives: each verse against the next pair's paraphrase
    rows = [{"s1": a, "s2": b, "label": 1} for a, b, _ in train[:48]]
    rows += [{"s1": train[i][0], "s2": train[i + 1][1], "label": 0} for i in range(48, 95)]
    write_rows(work, rows, {"pairs": len(rows)})
    val = {"demo": [Pair(a, b, y, "demo") for a, b, y in demo_pairs(40, 200)]}
    args = reranker_cli.parser().parse_args(
        ["--batch", "8", "--max-len", "64", "--max-steps", "6", "--threads", "2", "--seed", "3", "--lr", "1e-3"]
    )
    info = reranker.train(args, base, work, out, val, evaluate=lambda model, tok, pairs: {})
    report = reranker_export.export(args, work, out, val, reranker_export.metrics)
    return {"out": out, "info": info, "report": report, "root": root}


def test_training_ran_and_export_wrote_a_model_directory(trained):
    assert trained["info"]["steps"] == 6
    out = trained["out"]
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["paramine"]["positive_labels"] == ["paraphrase"]
    assert 0.05 <= cfg["paramine"]["threshold"] <= 0.95
    assert (out / "model.onnx").stat().st_size > 0
    assert trained["report"]["onnx_parity_max_abs_logit_diff"]["demo"] < 1e-4


@pytest.mark.skipif(not CLI.exists() or shutil.which("node") is None, reason="needs node and dist/ (npm run build:ts)")
def test_typescript_runtime_gives_the_same_probabilities(trained):
    out, root = trained["out"], trained["root"]
    pairs = [(a, b, y) for a, b, y in demo_pairs(30, 400)]
    pairs += [(b, a, y) for a, b, y in pairs[:10]]  # both orders of some: one score per unordered pair
    tsv = root / "pairs.tsv"
    tsv.write_text("s1\ts2\tlabel\n" + "".join(f"{a}\t{b}\t{y}\n" for a, b, y in pairs), encoding="utf-8")
    scores = root / "scores.jsonl"
    subprocess.run(
        ["node", str(CLI), "bench", "classify", "--pairs", str(tsv), "--reranker", str(out), "--scores", str(scores)],
        check=True,
        cwd=REPO,
        capture_output=True,
    )
    ts = [json.loads(line)["probabilities"]["paraphrase"] for line in scores.read_text().splitlines()]
    py = score_pairs(out, [(a, b) for a, b, _ in pairs], threads=2)
    assert len(ts) == len(py) == len(pairs)
    worst = max(abs(a - b) for a, b in zip(ts, py))
    print(f"parity: {len(py)} pairs, P in [{min(py):.4f}, {max(py):.4f}], max |P_ts - P_kit| = {worst:.2e}")
    assert worst <= 1e-4, f"max |P_ts - P_kit| = {worst:.2e}"
    assert ts[30:] == ts[:10], "a pair and its swap score the same"
    assert max(py) - min(py) > 0.05, f"the tiny model's scores spread over [{min(py):.3f}, {max(py):.3f}]"
