"""SBERT pipeline, after training: ONNX export + int8, retrieval evaluation on the validation sets, and parity
with paramine's TypeScript encoder."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import time
from collections import defaultdict
from pathlib import Path

from .common import REPO, log, rel, write_json
from .encode import SentenceEncoder
from .export import export_onnx, file_info, graph_info, quantize
from .pairs import norm_key
from .sbert import load_validation

ONNX_OUTPUT = "last_hidden_state"  # as in models/all-minilm-l6-v2/model.onnx
# The config files of models/all-minilm-l6-v2 (src/models/catalog.ts writes the same ones): mirrored here so the
# fine-tuned directories read exactly like the base model's.
CONFIG_KEYS = [
    "architectures",
    "model_type",
    "attention_probs_dropout_prob",
    "hidden_act",
    "hidden_dropout_prob",
    "hidden_size",
    "initializer_range",
    "intermediate_size",
    "layer_norm_eps",
    "max_position_embeddings",
    "num_attention_heads",
    "num_hidden_layers",
    "pad_token_id",
    "position_embedding_type",
    "type_vocab_size",
    "vocab_size",
]
TOKENIZER_CONFIG = {
    "tokenizer_class": "BertTokenizer",
    "do_lower_case": True,
    "do_basic_tokenize": True,
    "tokenize_chinese_chars": True,
    "strip_accents": None,
    "model_max_length": 512,
    "unk_token": "[UNK]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
}
MODULES = [
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
]


def pooling_config(dim: int) -> dict:
    return {
        "word_embedding_dimension": dim,
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
    }


def write_model_files(ck: Path, out: Path, args):
    """Everything but the graph, as in models/all-minilm-l6-v2 (src/models/catalog.ts)."""
    cfg = json.loads((ck / "config.json").read_text())
    cfg["architectures"] = ["BertModel"]
    write_json(out / "config.json", {k: cfg[k] for k in CONFIG_KEYS if k in cfg})
    shutil.copy2(ck / "tokenizer.json", out / "tokenizer.json")
    write_json(out / "tokenizer_config.json", TOKENIZER_CONFIG)
    write_json(
        out / "sentence_bert_config.json", {"max_seq_length": args.export_max_seq_length, "do_lower_case": False}
    )
    write_json(out / "modules.json", MODULES)
    pool = json.loads((ck / "1_Pooling/config.json").read_text())
    # sentence-transformers 6 writes {"pooling_mode": "mean", ...}; older versions the pooling_mode_* flags
    assert pool.get("pooling_mode") == "mean" or (
        pool.get("pooling_mode_mean_tokens") and not pool.get("pooling_mode_cls_token")
    ), pool
    write_json(out / "1_Pooling/config.json", pooling_config(cfg["hidden_size"]))


class StEncoder:
    def __init__(self, path: Path, threads: int):
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(threads)
        self.model = SentenceTransformer(str(path), device="cpu")

    def encode(self, sents: list[str], batch: int = 64):
        return self.model.encode(sents, batch_size=batch, convert_to_numpy=True, normalize_embeddings=True)


def sample_sentences(data: Path, n: int, seed: int) -> list[str]:
    val = load_validation(data)
    pool = sorted({s for v in val.values() for p in v for s in (p.s1, p.s2)})
    return random.Random(seed).sample(pool, n)


def export(args, work: Path) -> dict:
    import numpy as np
    import torch
    from transformers import AutoModel, AutoTokenizer

    ck = work / "checkpoint"
    tok = AutoTokenizer.from_pretrained(str(ck))
    model = AutoModel.from_pretrained(str(ck), attn_implementation="eager", add_pooling_layer=False).eval()
    fp32 = work / "model-fp32.onnx"
    names, wrap = export_onnx(model, tok, ONNX_OUTPUT, fp32, args.opset, pairs=False, dyn_out_seq=True)
    variants = quantize(fp32, work)

    # fidelity on validation sentences: ONNX fp32 vs PyTorch (token level), int8 vs fp32 (pooled cosine)
    sents = sample_sentences(Path(args.data), args.export_check_sentences, args.seed)
    st = StEncoder(ck, args.threads)
    ref = st.encode(sents)
    enc32 = SentenceEncoder(ck, args.export_max_seq_length, onnx=fp32, threads=args.threads)
    v32 = enc32.encode(sents)
    with torch.inference_mode():
        e = tok(sents[:16], truncation=True, max_length=args.export_max_seq_length, padding=True, return_tensors="pt")
        ht = wrap(*(e[k] for k in names)).numpy()
    ho = enc32.sess.run([ONNX_OUTPUT], {k: e[k].numpy().astype("int64") for k in names})[0]
    fidelity = {
        "sentences": len(sents),
        "onnx_fp32_vs_pytorch_max_abs_token_diff": float(np.abs(ht - ho).max()),
        "onnx_fp32_vs_sentence_transformers_min_cos": float((ref * v32).sum(1).min()),
    }
    for name, path in variants.items():
        vq = SentenceEncoder(ck, args.export_max_seq_length, onnx=path, threads=args.threads).encode(sents)
        c = (vq * v32).sum(1)
        fidelity[name] = {"mean_cos_vs_fp32": round(float(c.mean()), 5), "min_cos_vs_fp32": round(float(c.min()), 5)}
    best = max(variants, key=lambda n: fidelity[n]["mean_cos_vs_fp32"])
    fidelity["kept_int8_variant"] = best
    log(f"fidelity: {fidelity}")

    out32, outq = Path(args.out), Path(args.out_q)
    for out in (out32, outq):
        if out.exists():
            for stale in list(out.glob("*.onnx")) + list(out.glob("onnx/*.onnx")):
                stale.unlink()
        write_model_files(ck, out, args)
    shutil.copy2(fp32, out32 / "model.onnx")
    (outq / "onnx").mkdir(parents=True, exist_ok=True)
    shutil.copy2(variants[best], outq / "onnx/model_quantized.onnx")
    graph = graph_info(fp32)
    files = {
        "fp32": {"dir": rel(out32), "file": "model.onnx", **file_info(out32 / "model.onnx")},
        "int8": {
            "dir": rel(outq),
            "file": "onnx/model_quantized.onnx",
            "variant": best,
            **file_info(outq / "onnx/model_quantized.onnx"),
        },
    }
    files["other-int8"] = {n: file_info(p) for n, p in variants.items() if n != best}
    info = {"graph": graph, "fidelity": fidelity, "files": files}
    write_json(work / "export_info.json", info, indent=1)
    log(f"exported: {json.dumps(files)}")
    return info


# ---------------------------------------------------------------------------------------------------------------
# evaluation: rank of the paraphrase among all candidates
# ---------------------------------------------------------------------------------------------------------------


def retrieval_tasks(data: Path) -> dict[str, dict]:
    """Queries, candidates (unique normalized sentences) and each query's gold candidates.

    parasci-acl-val: query = src of each pair, candidates = every val tgt; golds = the pair's tgt (other tgts of the
      same src are also accepted: they are not counted against it).
    multipit-expert-val: query = sentence1 of each positive pair, candidates = sentence2 of every positive pair.
    multipit-expert-val-all: the same queries, candidates = every sentence of the val file (both sides, positive and
      negative pairs: the negatives are same-topic tweets), the query itself excluded.
    mrpc-heldout: query = #1 of each held-out positive, candidates = #2 of every held-out pair (positive or not).
    """
    val = load_validation(data)
    tasks = {}

    def make(name, pairs, cand_sents, all_pos):
        cands, index = [], {}
        for s in cand_sents:
            k = norm_key(s)
            if k not in index:
                index[k] = len(cands)
                cands.append(s)
        gold_of = defaultdict(set)
        for p in all_pos:
            for a, b in ((p.s1, p.s2), (p.s2, p.s1)):
                if norm_key(b) in index:
                    gold_of[norm_key(a)].add(index[norm_key(b)])
        queries, gold, accept, self_idx = [], [], [], []
        for p in pairs:
            k = norm_key(p.s1)
            queries.append(p.s1)
            gold.append(index[norm_key(p.s2)])
            accept.append(sorted(gold_of[k]))
            self_idx.append(index.get(k, -1))
        tasks[name] = {"queries": queries, "candidates": cands, "gold": gold, "accept": accept, "self": self_idx}

    par = val["parasci-acl-val"]
    make("parasci-acl-val", [p for p in par if norm_key(p.s1) != norm_key(p.s2)], [p.s2 for p in par], par)
    exp_pos = [p for p in val["multipit-expert-val"] if p.label == 1]
    make("multipit-expert-val", exp_pos, [p.s2 for p in exp_pos], exp_pos)
    make("multipit-expert-val-all", exp_pos, [s for p in val["multipit-expert-val"] for s in (p.s1, p.s2)], exp_pos)
    mrpc_pos = [p for p in val["mrpc-heldout"] if p.label == 1]
    make("mrpc-heldout", mrpc_pos, [p.s2 for p in val["mrpc-heldout"]], mrpc_pos)
    return tasks


def rank_metrics(q, c, task) -> dict:
    import numpy as np

    sims = q @ c.T
    ranks = []
    for i in range(len(task["queries"])):
        row = sims[i].copy()
        g = task["gold"][i]
        target = row[g]
        others = [a for a in task["accept"][i] if a != g]
        if others:
            row[others] = -np.inf  # other correct answers do not count against this one
        if task["self"][i] >= 0:
            row[task["self"][i]] = -np.inf  # the query itself, where it is also a candidate
        ranks.append(1 + int((row > target).sum()))
    r = np.array(ranks)
    return {
        "queries": len(r),
        "candidates": len(task["candidates"]),
        "top1": round(float((r == 1).mean()), 4),
        "top10": round(float((r <= 10).mean()), 4),
        "mrr": round(float((1.0 / r).mean()), 4),
        "median_rank": float(np.median(r)),
    }


def evaluate(args, base: Path, work: Path) -> dict:
    tasks = retrieval_tasks(Path(args.data))
    if args.eval_limit:  # smoke tests: the first N queries of each task, against all of its candidates
        for t in tasks.values():
            for k in ("queries", "gold", "accept", "self"):
                t[k] = t[k][: args.eval_limit]
    encoders = {
        "base all-MiniLM-L6-v2 (sentence-transformers, fp32)": lambda: StEncoder(base, args.threads),
        "fine-tuned (sentence-transformers, fp32)": lambda: StEncoder(work / "checkpoint", args.threads),
    }
    base_q = REPO / "models/all-minilm-l6-v2-q/onnx/model_quantized.onnx"
    if base_q.exists():
        encoders["base all-minilm-l6-v2-q (ONNX int8, onnxruntime)"] = lambda: SentenceEncoder(
            base, args.export_max_seq_length, onnx=base_q, threads=args.threads
        )
    ft_q = Path(args.out_q) / "onnx/model_quantized.onnx"
    if ft_q.exists():
        encoders["fine-tuned -q (ONNX int8, onnxruntime)"] = lambda: SentenceEncoder(
            work / "checkpoint", args.export_max_seq_length, onnx=ft_q, threads=args.threads
        )
    sents = sorted({s for t in tasks.values() for s in t["queries"] + t["candidates"]})
    results = {}
    for name, make in encoders.items():
        t0 = time.time()
        enc = make()
        vec = dict(zip(sents, enc.encode(sents)))
        import numpy as np

        res = {}
        for tn, t in tasks.items():
            q = np.stack([vec[s] for s in t["queries"]])
            c = np.stack([vec[s] for s in t["candidates"]])
            res[tn] = rank_metrics(q, c, t)
        results[name] = res
        log(f"eval {name} ({len(sents)} sentences, {time.time() - t0:.0f}s): {json.dumps(res)}")
        del enc
    info = {"results": results, "sentences_encoded": len(sents)}
    write_json(work / "eval_info.json", info, indent=1)
    return info


# ---------------------------------------------------------------------------------------------------------------
# parity with the TypeScript encoder
# ---------------------------------------------------------------------------------------------------------------

NODE_ENCODE = """
import { readFileSync, writeFileSync } from 'node:fs';
const { Encoder } = await import(process.env.PARAMINE_ENCODE_URL);
const texts = JSON.parse(readFileSync(process.env.PARITY_IN, 'utf8'));
const out = {};
for (const dir of JSON.parse(process.env.PARITY_DIRS)) {
  const enc = await Encoder.open(dir, { worker: false });
  const v = await enc.encode(texts);
  out[dir] = { dim: enc.dim, onnxFile: enc.onnxFile, maxLength: enc.maxLength, pooling: enc.pooling,
               onnxSha256: enc.onnxSha256, vectors: Array.from(v) };
  await enc.close();
}
writeFileSync(process.env.PARITY_OUT, JSON.stringify(out));
"""


def parity_sentences(data: Path, seed: int) -> list[str]:
    """20 sentences: 16 from the validation sets, a 256-token-plus concatenation, accents, emoji, a short one."""
    val = load_validation(data)
    rng = random.Random(seed + 7)
    out = []
    for name, n in (("parasci-acl-val", 6), ("multipit-expert-val", 6), ("mrpc-heldout", 4)):
        out += rng.sample(sorted({s for p in val[name] for s in (p.s1, p.s2)}), n)
    out.append(" ".join(p.s1 for p in val["parasci-acl-val"][:14]))  # past the 256-token window
    out += ["Café naïve façade — résumé Übermaß", "lol 😂😂 this is 🔥 #NLP @someone", "ok"]
    return out


def _hidden(model_dir: Path) -> int | None:
    cfg = Path(model_dir) / "config.json"
    return json.loads(cfg.read_text()).get("hidden_size") if cfg.exists() else None


def parity(args, base: Path, work: Path) -> dict:
    import numpy as np

    dist = REPO / "dist/encode/index.js"
    if not dist.exists() or shutil.which("node") is None:
        msg = "skipped: needs node and dist/encode/index.js (npm run build:ts)"
        log(f"parity {msg}")
        return {"skipped": msg}
    sents = parity_sentences(Path(args.data), args.seed)
    ref = StEncoder(work / "checkpoint", args.threads).encode(sents)
    dirs = [str(Path(args.out).resolve()), str(Path(args.out_q).resolve())]
    base_q = REPO / "models/all-minilm-l6-v2-q"
    # context: the shipped int8 base vs its fp32 weights, when the base is that model (same width)
    if (base_q / "onnx/model_quantized.onnx").exists() and _hidden(base_q) == _hidden(base):
        dirs.append(str(base_q))
    pin, pout = work / "parity-in.json", work / "parity-out.json"
    write_json(pin, sents, indent=None)
    env = dict(
        os.environ,
        PARAMINE_ENCODE_URL=dist.resolve().as_uri(),
        PARITY_IN=str(pin),
        PARITY_OUT=str(pout),
        PARITY_DIRS=json.dumps(dirs),
    )
    t0 = time.time()
    subprocess.run(["node", "--input-type=module", "-e", NODE_ENCODE], check=True, env=env, cwd=REPO)
    got = json.loads(pout.read_text())
    res = {
        "sentences": len(sents),
        "reference": "sentence-transformers encode (normalize_embeddings=True, batch 64) "
        "of the fine-tuned checkpoint (of the base model for all-minilm-l6-v2-q)",
        "node_seconds": round(time.time() - t0, 1),
    }
    base_ref = StEncoder(base, args.threads).encode(sents) if len(dirs) > 2 else None
    for i, d in enumerate(dirs):
        g = got[d]
        r = ref if i < 2 else base_ref
        v = np.array(g["vectors"], dtype=np.float32).reshape(len(sents), g["dim"])
        cos = (v * r).sum(1) / (np.linalg.norm(v, axis=1) * np.linalg.norm(r, axis=1))
        res[Path(d).name] = {
            "onnxFile": g["onnxFile"],
            "maxLength": g["maxLength"],
            "pooling": g["pooling"],
            "dim": g["dim"],
            "min_cos": round(float(cos.min()), 6),
            "mean_cos": round(float(cos.mean()), 6),
            "max_abs_diff": float(np.abs(v - r).max()),
            "reference": "fine-tuned checkpoint" if i < 2 else "base all-MiniLM-L6-v2 (gt package)",
        }
    log(f"parity: {json.dumps(res)}")
    write_json(work / "parity_info.json", res, indent=1)
    return res


# ---------------------------------------------------------------------------------------------------------------
# model card
# ---------------------------------------------------------------------------------------------------------------
