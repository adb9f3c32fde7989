"""ONNX export (TorchScript exporter, dynamic batch/sequence axes), graph facts for the card, and int8 dynamic
quantization in both weight-scale variants (per-channel, per-tensor); the caller keeps the one closer to fp32."""

from __future__ import annotations

from pathlib import Path

from .common import sha256

INT8_VARIANTS = (("int8-per-channel", True), ("int8-per-tensor", False))


def wrapped(model, output: str, names: list[str]):
    """The model with plain tensor inputs (in `names` order) and one output (`logits`, `last_hidden_state`)."""
    import torch

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *inputs):
            return getattr(self.m(**dict(zip(names, inputs))), output)

    return Wrap(model).eval()


def export_onnx(model, tok, output: str, path: Path, opset: int, pairs: bool, dyn_out_seq: bool):
    """Exports `model` (its `output` attribute: logits or last_hidden_state) to `path`.

    Returns the input names and the wrapped module (a reference for parity checks).

    Inputs are those the tokenizer gives (BERT: input_ids, attention_mask, token_type_ids; MPNet: no
    token_type_ids), int64 with dynamic batch and sequence axes."""
    import onnx
    import torch

    if pairs:
        dummy = tok(
            ["a first example sentence", "and a second one"],
            ["its pair", "another pair here, longer"],
            padding=True,
            return_tensors="pt",
        )
    else:
        dummy = tok(
            ["a first example sentence", "and a second one, a little longer"], padding=True, return_tensors="pt"
        )
    names = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in dummy]
    batch, seq = ("batch", "sequence") if pairs else ("batch_size", "sequence_length")
    dyn = {k: {0: batch, 1: seq} for k in names}
    dyn[output] = {0: batch, 1: seq} if dyn_out_seq else {0: batch}
    wrap = wrapped(model, output, names)
    torch.onnx.export(
        wrap,
        tuple(dummy[k] for k in names),
        str(path),
        input_names=names,
        output_names=[output],
        dynamic_axes=dyn,
        opset_version=opset,
        dynamo=False,
        do_constant_folding=True,
    )
    wrap.eval()  # export restores the wrapper's original mode; make sure dropout is off for any reference
    onnx.checker.check_model(str(path))
    return names, wrap


def quantize(fp32: Path, work: Path) -> dict[str, Path]:
    """int8 dynamic quantization of `fp32`, both variants, as WORK/model-<variant>.onnx.

    quantize_dynamic also quantizes the word-embedding Gather, which is what shrinks a MiniLM graph to ~23 MB."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = {}
    for name, per_channel in INT8_VARIANTS:
        path = Path(work) / f"model-{name}.onnx"
        quantize_dynamic(str(fp32), str(path), weight_type=QuantType.QInt8, per_channel=per_channel)
        out[name] = path
    return out


def graph_info(path: Path) -> dict:
    import onnx

    m = onnx.load(str(path), load_external_data=False)
    return {
        "ir_version": m.ir_version,
        "opsets": {(o.domain or "ai.onnx"): o.version for o in m.opset_import},
        "inputs": [i.name for i in m.graph.input],
        "outputs": [o.name for o in m.graph.output],
    }


def file_info(path: Path, **extra) -> dict:
    return {"sha256": sha256(path), "bytes": Path(path).stat().st_size, **extra}
