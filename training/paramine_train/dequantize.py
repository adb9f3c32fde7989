"""A PyTorch starting point from a committed cross-encoder that has only its ONNX graph (paramine's int8 models):
every initializer back to float (int8 weights times their scales), under the parameter names of a Hugging Face
`BertForSequenceClassification`, so `paramine-train reranker --base models/NAME` can go on training a shipped model.

The TorchScript exporter names a layer's MatMul weight `onnx::MatMul_N`; the MatMulInteger that consumes it
produces `/m/<module path>/MatMul_output_0...`, which names the module. Weights of a Linear are stored transposed
(ONNX multiplies x @ W). A parity check against the graph itself (ONNX Runtime) guards the mapping."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from .common import log
from .encode import graph_of, predict_onnx, predict_torch
from .pairs import Pair
from .reranker import TOKENIZER_FILES


def _module_of_matmul(output: str) -> str | None:
    """`/m/bert/encoder/layer.0/attention/self/query/MatMul_output_0_output_quantized` -> the module's dotted path."""
    m = re.fullmatch(r"/m/(.+)/MatMul_output_0.*", output)
    return m.group(1).replace("/", ".") if m else None


def _param_name(init: str, matmul_module: dict[str, str]) -> tuple[str, bool] | None:
    """(PyTorch parameter name, stored transposed?) of a float initializer's base name; None for graph constants."""
    if init in matmul_module:
        return matmul_module[init] + ".weight", True
    if init.startswith("m."):
        name = init[2:]
        if name.endswith(".weight_Transposed"):
            return name.removesuffix("_Transposed"), True
        return name, False
    return None


def float_weights(graph: Path) -> dict:
    """Parameter name -> float32 numpy array, from an fp32 or dynamically quantized (int8) graph."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    g = onnx.load(str(graph)).graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    matmul_module = {}
    for n in g.node:
        if n.op_type in ("MatMulInteger", "MatMul") and len(n.input) > 1:
            module = _module_of_matmul(n.output[0])
            base = n.input[1].removesuffix("_quantized")
            if module and (base in inits or base + "_quantized" in inits):
                matmul_module[base] = module
    out = {}
    for name, arr in inits.items():
        if name.endswith(("_scale", "_zero_point")):
            continue
        base = name.removesuffix("_quantized")
        target = _param_name(base, matmul_module)
        if target is None:
            continue
        if name.endswith("_quantized"):
            scale, zero = inits[base + "_scale"], inits[base + "_zero_point"]
            # per-channel scales run along the output axis: the last of a transposed MatMul weight, the first
            # (a row per token) of a Gather table
            axis = -1 if target[1] else 0
            shape = [1] * arr.ndim
            if scale.ndim:
                shape[axis] = scale.shape[0]
            arr = (arr.astype(np.float32) - zero.astype(np.float32).reshape(shape)) * scale.astype(np.float32).reshape(
                shape
            )
        pname, transposed = target
        out[pname] = np.ascontiguousarray(arr.T if transposed else arr).astype(np.float32)
    return out


def torch_copy(model_dir: Path, dest: Path) -> Path:
    """DEST: config, tokenizer and float weights of MODEL_DIR's graph, loadable by from_pretrained (made once)."""
    import numpy as np
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    if (dest / "model.safetensors").exists():
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    cfg = json.loads((model_dir / "config.json").read_text())
    cfg.pop("paramine", None)
    (dest / "config.json").write_text(json.dumps(cfg, indent=2))
    for f in TOKENIZER_FILES:
        if (model_dir / f).exists():
            shutil.copy2(model_dir / f, dest / f)
    model = AutoModelForSequenceClassification.from_config(
        AutoConfig.from_pretrained(dest), attn_implementation="eager"
    ).eval()
    graph = graph_of(model_dir)
    weights = float_weights(graph)
    state = model.state_dict()
    missing = [k for k in state if k not in weights and not k.endswith("position_ids")]
    unknown = [k for k in weights if k not in state]
    if missing or unknown:
        raise SystemExit(
            f"{model_dir}: graph weights do not map onto {cfg['architectures']}: missing {missing[:5]}, "
            f"unknown {unknown[:5]}"
        )
    for k, v in weights.items():
        if tuple(state[k].shape) != v.shape:
            raise SystemExit(f"{model_dir}: {k} has shape {v.shape} in the graph, {tuple(state[k].shape)} in the model")
    model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()}, strict=False)
    if cfg.get("tie_word_embeddings") is not None:
        model.config.tie_word_embeddings = False  # a sequence classifier has no output embeddings to tie
    model.save_pretrained(dest)
    # parity: the float copy against the graph it came from, on a few pairs
    tok = AutoTokenizer.from_pretrained(dest)
    pairs = [
        Pair("A gentle answer turns away wrath.", "A soft answer turneth away wrath.", 1, "parity"),
        Pair("The cat sat on the mat.", "Stock markets fell sharply on Monday.", 0, "parity"),
        Pair("We train the model with a ranking loss.", "The model is trained using a ranking objective.", 1, "parity"),
    ]
    lt = predict_torch(model, tok, pairs, 128)
    lo, _ = predict_onnx(graph, tok, pairs, 128, 2)
    diff = float(np.abs(np.asarray(lt) - np.asarray(lo)).max())
    log(f"dequantized {model_dir} -> {dest}: max |logit diff| vs its graph {diff:.3f} on {len(pairs)} pairs")
    (dest / "dequantized.json").write_text(json.dumps({"from": str(model_dir), "max_abs_logit_diff": diff}) + "\n")
    if diff > 0.25:
        raise SystemExit(f"{model_dir}: the dequantized weights do not reproduce the graph (max logit diff {diff:.3f})")
    return dest
