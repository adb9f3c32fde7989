"""Inference: one sentence encoder (pooling from the model's 1_Pooling/config.json, then L2) on PyTorch or ONNX
Runtime, and cross-encoder scoring of sentence pairs. Dimensions come from the model, never from constants."""

from __future__ import annotations

import json
import time
from pathlib import Path

from .common import log

ONNX_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


def read_pooling(model_dir: Path) -> str:
    """`mean` (the default, as paramine's encoder), `cls` or `max`, from 1_Pooling/config.json when present.

    sentence-transformers 6 writes {"pooling_mode": "mean"}; older versions the pooling_mode_* flags."""
    cfg = Path(model_dir) / "1_Pooling/config.json"
    if not cfg.exists():
        return "mean"
    c = json.loads(cfg.read_text())
    if "pooling_mode" in c:
        mode = c["pooling_mode"]
    else:
        on = [m for m in ("cls_token", "mean_tokens", "max_tokens") if c.get(f"pooling_mode_{m}")]
        mode = {"cls_token": "cls", "mean_tokens": "mean", "max_tokens": "max"}[on[0]] if len(on) == 1 else "?"
    if mode not in ("mean", "cls", "max"):
        raise ValueError(f"{cfg}: unsupported pooling {c}")
    return mode


def pool(hidden, mask, mode: str):
    """Token embeddings [n, t, d] + attention mask [n, t] -> L2-normalized sentence vectors [n, d] (NumPy)."""
    import numpy as np

    m = mask[..., None].astype(np.float32)
    if mode == "cls":
        v = hidden[:, 0]
    elif mode == "max":
        v = np.where(m > 0, hidden, -np.inf).max(1)
    else:
        v = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
    return v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)


# MatMulInteger(a: uint8[m, k], b: int8[k, n]) -> int32[m, n]: the runtime's probe (src/models/int8-kernels.ts).
INT8_PROBE = (
    "CAg6cQoYCgFhCgFiEgF5Ig1NYXRNdWxJbnRlZ2VyEhBzYXR1cmF0aW9uX3Byb2JlWhUKAWESEAoOCAISCgoDEgFtCgMSAWtaFQoBYhIQCg4IAxIKCgMSAWsK"
    "AxIBbmIVCgF5EhAKDggGEgoKAxIBbQoDEgFuQgQKABAN"
)
_saturates: bool | None = None


def int8_saturates() -> bool:
    """Whether this CPU's u8s8 kernels saturate (x86-64 AVX2 / AVX-512 without VNNI: VPMADDUBSW adds two
    u8*s8 products into an int16). Asked by behaviour once per process, as the TypeScript runtime does."""
    global _saturates
    if _saturates is None:
        import base64

        import numpy as np
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(base64.b64decode(INT8_PROBE), so, providers=["CPUExecutionProvider"])
        k = 256
        y = sess.run(None, {"a": np.full((8, k), 255, np.uint8), "b": np.full((k, 64), 127, np.int8)})[0]
        _saturates = bool((y != 255 * 127 * k).any())
    return _saturates


def ort_session(path: Path, threads: int):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    # no busy-waiting between ops: on 2 cores shared with other work, spinning threads only steal time
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if int8_saturates():
        # exact u8u8 kernels where u8s8 ones saturate (the graph's int8 weights are then read as u8 + 128)
        so.add_session_config_entry("session.x64quantprecision", "1")
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def served_batch(path: Path, batch: int) -> int:
    """The batch a graph is scored in here: 1 where it quantizes its activations at run time, as the service
    scores such a graph (src/models/runtime.ts: the scale of a batch's activations would otherwise make a pair's
    probability, and so the label cut chosen on it, depend on the pairs it was batched with); else `batch`."""
    import mmap

    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:  # no copy of a large graph
        return 1 if m.find(b"DynamicQuantizeLinear") != -1 else batch


def has_torch_weights(model_dir: Path) -> bool:
    """Whether a model directory holds PyTorch weights (paramine's committed models are ONNX graphs only)."""
    return any(Path(model_dir).glob("*.safetensors")) or any(Path(model_dir).glob("*.bin"))


def graph_of(model_dir: Path) -> Path:
    """The ONNX graph of a model directory without PyTorch weights (paramine's layouts: model.onnx or onnx/*.onnx)."""
    graphs = sorted([*model_dir.glob("model.onnx"), *model_dir.glob("onnx/*.onnx")])
    if not graphs:
        raise SystemExit(f"{model_dir}: neither PyTorch weights (*.safetensors, *.bin) nor an ONNX graph")
    return graphs[0]


class SentenceEncoder:
    """Tokenizer + a token-embedding model (PyTorch AutoModel or an ONNX graph) + pooling + L2.

    `SentenceEncoder(dir)` runs the PyTorch weights in `dir`, or its ONNX graph where it has no weights (paramine's
    committed encoders, e.g. the service's default, are graphs only); `onnx=PATH` runs that graph instead, with the
    tokenizer and pooling config of `dir`. Sentences are batched by length; the result keeps the input order."""

    def __init__(self, model_dir: Path, max_len: int = 128, onnx: Path | None = None, threads: int = 2):
        from transformers import AutoTokenizer

        if onnx is None and not has_torch_weights(model_dir):
            onnx = graph_of(Path(model_dir))
        self.tok = AutoTokenizer.from_pretrained(str(model_dir))
        self.max_len = max_len
        self.mode = read_pooling(model_dir)
        if onnx is not None:
            self.sess = ort_session(onnx, threads)
            self.names = [i.name for i in self.sess.get_inputs()]
            self.model = None
        else:
            from transformers import AutoModel

            self.model = AutoModel.from_pretrained(str(model_dir)).eval()

    def hidden(self, enc):
        if self.model is None:
            feed = {k: enc[k].astype("int64") for k in self.names}
            return self.sess.run(None, feed)[0]
        import torch

        with torch.inference_mode():
            return self.model(**{k: torch.from_numpy(v) for k, v in enc.items()}).last_hidden_state.numpy()

    def encode(self, sents: list[str], batch: int = 64, progress: bool = False):
        import numpy as np

        order = sorted(range(len(sents)), key=lambda i: len(sents[i]))
        out, t0 = None, time.time()
        for b in range(0, len(order), batch):
            ids = order[b : b + batch]
            enc = dict(
                self.tok(
                    [sents[i] for i in ids], truncation=True, max_length=self.max_len, padding=True, return_tensors="np"
                )
            )
            v = pool(self.hidden(enc), enc["attention_mask"], self.mode)
            if out is None:
                out = np.zeros((len(sents), v.shape[1]), dtype=np.float32)
            out[ids] = v
            if progress and (b // batch) % 50 == 0:
                log(f"  encoded {b + len(ids)}/{len(sents)} ({(b + len(ids)) / (time.time() - t0 + 1e-9):.0f}/s)")
        return out


# ---------------------------------------------------------------------------------------------------------------
# cross-encoders
# ---------------------------------------------------------------------------------------------------------------


def pair_batches(tok, pairs, batch: int, max_len: int):
    """Length-sorted batches of (s1, s2) pairs (anything with .s1/.s2), as int64 NumPy inputs."""
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i].s1) + len(pairs[i].s2))
    for b in range(0, len(order), batch):
        ids = order[b : b + batch]
        enc = tok(
            [pairs[i].s1 for i in ids],
            [pairs[i].s2 for i in ids],
            truncation=True,
            max_length=max_len,
            padding=True,
            return_tensors="np",
        )
        yield ids, {k: enc[k].astype("int64") for k in ONNX_INPUTS if k in enc}


def predict_torch(model, tok, pairs, max_len: int, batch: int = 64):
    """Logits [n, labels] of a PyTorch sequence classifier (put in eval mode; the caller restores train mode), on
    the device the model is on (bf16 autocast on a GPU, where the batch grows 8-fold)."""
    import numpy as np
    import torch

    from .common import autocast

    dev = model.device
    out = np.zeros((len(pairs), model.config.num_labels), dtype=np.float32)
    model.eval()
    with torch.inference_mode(), autocast(dev):
        for ids, enc in pair_batches(tok, pairs, batch * (8 if dev.type == "cuda" else 1), max_len):
            feed = {k: torch.from_numpy(v).to(dev) for k, v in enc.items()}
            out[ids] = model(**feed).logits.float().cpu().numpy()
    return out


def predict_onnx(path: Path, tok, pairs, max_len: int, threads: int, batch: int = 64):
    """Logits of an ONNX cross-encoder graph, and the seconds the scoring took."""
    import numpy as np

    sess = ort_session(path, threads)
    names = {i.name for i in sess.get_inputs()}
    out, t0 = None, time.time()
    for ids, enc in pair_batches(tok, pairs, served_batch(path, batch), max_len):
        logits = sess.run(["logits"], {k: v for k, v in enc.items() if k in names})[0]
        if out is None:
            out = np.zeros((len(pairs), logits.shape[1]), dtype=np.float32)
        out[ids] = logits
    return out, time.time() - t0


def softmax(logits):
    import numpy as np

    z = np.asarray(logits, dtype=np.float64)
    z = np.exp(z - z.max(1, keepdims=True))
    return z / z.sum(1, keepdims=True)
