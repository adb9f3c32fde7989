"""The SBERT pipeline on a tiny model: planned batches and a few MultipleNegativesRankingLoss steps
(sbert.train), the export stage (ONNX fp32 and int8 model directories in the layout paramine serves), and its
parity stage: paramine's TypeScript encoder (dist/encode, through node) against sentence-transformers' encode of
the same checkpoint."""

from __future__ import annotations

import json
import shutil

import pytest

from paramine_train import sbert, sbert_cli, sbert_export
from paramine_train.common import write_rows

from conftest import REPO
from tiny import demo_pairs, make_base


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("sbert")
    base = make_base(root / "base", seed=9)
    work, out, out_q = root / "work", root / "fp32", root / "int8"
    pairs = demo_pairs(64, 0)
    rows = [
        {"source": "mrpc", "bucket": "news", "s1": a, "s2": b, "keys": sorted({a.lower(), b.lower()})}
        for a, b, _ in pairs
    ]
    write_rows(work, rows, {"pairs": len(rows)})
    args = sbert_cli.parser().parse_args(
        ["--batch", "8", "--max-steps", "4", "--max-seq-length", "32", "--export-max-seq-length", "64"]
        + ["--threads", "2", "--seed", "4", "--out", str(out), "--out-q", str(out_q), "--work", str(work)]
    )
    info = sbert.train(args, base, work)
    # The export and parity stages sample sentences from ../shared/data's validation sets; here, the demo's.
    sentences = [s for a, b, _ in demo_pairs(24, 500) for s in (a, b)] + ["Café naïve façade — résumé", "ok", ""]
    mp = pytest.MonkeyPatch()
    mp.setattr(sbert_export, "sample_sentences", lambda data, n, seed: sentences[:n])
    mp.setattr(sbert_export, "parity_sentences", lambda data, seed: sentences)
    try:
        args.export_check_sentences = min(args.export_check_sentences, len(sentences))
        export = sbert_export.export(args, work)
        parity = sbert_export.parity(args, base, work)
    finally:
        mp.undo()
    return {"info": info, "export": export, "parity": parity, "out": out, "out_q": out_q}


def test_training_ran_and_both_directories_were_written(exported):
    assert exported["info"]["steps"] == 4
    for d, graph in ((exported["out"], "model.onnx"), (exported["out_q"], "onnx/model_quantized.onnx")):
        assert (d / graph).stat().st_size > 0
        assert json.loads((d / "1_Pooling/config.json").read_text())["pooling_mode_mean_tokens"] is True
    assert exported["export"]["fidelity"]["onnx_fp32_vs_pytorch_max_abs_token_diff"] < 1e-4


@pytest.mark.skipif(
    not (REPO / "dist/encode/index.js").exists() or shutil.which("node") is None,
    reason="needs node and dist/ (npm run build:ts)",
)
def test_typescript_encoder_gives_the_same_vectors(exported):
    p = exported["parity"]
    fp32, int8 = p[exported["out"].name], p[exported["out_q"].name]
    assert fp32["max_abs_diff"] <= 1e-4, fp32
    assert fp32["min_cos"] >= 0.9999, fp32
    assert int8["min_cos"] >= 0.95, int8  # int8 against the fp32 checkpoint: close, not equal
