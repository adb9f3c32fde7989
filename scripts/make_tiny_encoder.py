#!/usr/bin/env python3
"""Builds test/fixtures/tiny-encoder/: a 16-d sentence encoder for tests that need a second, different
model (dimension and sha256 checks). Not trained: token ids hashed into a small random table, output
`last_hidden_state` [batch, seq, 16]; paramine mean-pools it as for any SBERT model.

    .venv/bin/python scripts/make_tiny_encoder.py
"""
import json
import shutil
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "test" / "fixtures" / "tiny-encoder"
TOKENIZER_FROM = ROOT / "test" / "fixtures" / "tiny-turku"
BUCKETS, HIDDEN = 97, 16


def main() -> None:
    rng = np.random.default_rng(7)
    table = numpy_helper.from_array(rng.standard_normal((BUCKETS, HIDDEN)).astype(np.float32), "table")
    buckets = numpy_helper.from_array(np.array(BUCKETS, dtype=np.int64), "buckets")
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])
    types = helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "seq"])
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", HIDDEN])
    graph = helper.make_graph(
        [
            helper.make_node("Mod", ["input_ids", "buckets"], ["hashed"]),
            helper.make_node("Gather", ["table", "hashed"], ["last_hidden_state"]),
        ],
        "tiny_encoder",
        [ids, mask, types],
        [out],
        [table, buckets],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "1_Pooling").mkdir(exist_ok=True)
    onnx.save(model, OUT / "model.onnx")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(TOKENIZER_FROM / name, OUT / name)
    config = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": HIDDEN, "max_position_embeddings": 512}
    (OUT / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    pooling = {"word_embedding_dimension": HIDDEN, "pooling_mode_mean_tokens": True}
    (OUT / "1_Pooling" / "config.json").write_text(json.dumps(pooling, indent=2) + "\n")


if __name__ == "__main__":
    main()
