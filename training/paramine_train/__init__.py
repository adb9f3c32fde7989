"""paramine's training package: the shared parts of paramine-train sbert and paramine-train reranker.

- common:  paths, logging, seeds, hashes, library versions, base model location
- pairs:   labeled pairs, read through paramine's own TypeScript reader (`paramine pairs dump`), and the shared
           data folder's sources and validation splits
- encode:  one mean/CLS pooling sentence encoder (reads 1_Pooling/config.json) on PyTorch or ONNX Runtime, and
           cross-encoder inference
- loop:    the training loop both scripts use (AdamW, linear warm-up/decay, --max-minutes, resumable checkpoints)
- export:  ONNX export, parity check and int8 dynamic quantization
- card:    the model-card writer (README.md + metrics.json) and its table helpers
- sbert, sbert_card, reranker, reranker_card: the two pipelines behind the thin entry points
"""
