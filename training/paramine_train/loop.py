"""The training loop both pipelines use: AdamW (no decay on biases / LayerNorm), linear warm-up then linear decay
to 0, gradient clipping 1.0, logging, a --max-minutes stop, and resumable checkpoints (--checkpoint-minutes: the
model, optimizer, schedule, step and RNG state go to WORK/resume.pt; a later run with --resume continues there)."""

from __future__ import annotations

import time
from pathlib import Path

from .common import autocast, log, torch_device

NO_DECAY = ("bias", "LayerNorm.weight", "layer_norm.weight")


def add_loop_args(ap, log_every: int):
    ap.add_argument("--max-steps", type=int, default=0, help="stop after N steps (smoke tests)")
    ap.add_argument(
        "--max-minutes",
        type=float,
        default=0,
        help="stop training after this many minutes (0: off); the card says if it fired",
    )
    ap.add_argument(
        "--checkpoint-minutes",
        type=float,
        default=0,
        help="save a resumable state to WORK/resume.pt this often (0: off)",
    )
    ap.add_argument("--resume", action="store_true", help="continue from WORK/resume.pt when it exists")
    ap.add_argument("--log-every", type=int, default=log_every)


def optimizer(model, args, total: int):
    import torch

    named = list(model.named_parameters())
    params = [
        {"params": [p for n, p in named if not any(x in n for x in NO_DECAY)], "weight_decay": args.weight_decay},
        {"params": [p for n, p in named if any(x in n for x in NO_DECAY)], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(params, lr=args.lr)
    warm = max(1, int(args.warmup * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else max(0.0, (total - s) / max(1, total - warm))
    )
    return opt, sched, warm


def _save_state(path: Path, model, opt, sched, step: int, losses: list[float], elapsed: float):
    import torch

    tmp = path.with_suffix(".tmp")
    torch.save(
        {
            "model": model.state_dict(),
            "opt": opt.state_dict(),
            "sched": sched.state_dict(),
            "step": step,
            "losses": losses,
            "elapsed": elapsed,
            "rng": torch.get_rng_state(),
        },
        tmp,
    )
    tmp.replace(path)
    log(f"checkpoint: step {step} -> {path}")


def _load_state(path: Path, model, opt, sched) -> tuple[int, list[float], float]:
    import torch

    st = torch.load(path, weights_only=False)
    model.load_state_dict(st["model"])
    opt.load_state_dict(st["opt"])
    sched.load_state_dict(st["sched"])
    torch.set_rng_state(st["rng"])
    log(f"resumed from {path} at step {st['step']}")
    return st["step"], st["losses"], st["elapsed"]


def run(model, batches: list, loss_of, args, work: Path, evals: dict | None = None, tag=None) -> dict:
    """Trains `model` on `batches` (any objects; `loss_of(batch)` returns the loss tensor).

    `evals` maps a step to a callable run after it (its result is logged and kept); `tag(batch)` names a batch in
    the log. Returns timing, the loss curve and whether --max-minutes stopped it early."""
    import numpy as np
    import torch

    if args.max_steps:
        batches = batches[: args.max_steps]
    device = torch_device()
    model.to(device)
    total = len(batches)
    opt, sched, warm = optimizer(model, args, total)
    state = Path(work) / "resume.pt"
    start, losses, before = 0, [], 0.0
    if args.resume and state.exists():
        start, losses, before = _load_state(state, model, opt, sched)
    log(
        f"train: {total} steps, warmup {warm}, lr {args.lr}, {device}, threads {torch.get_num_threads()}"
        + (f", resuming at {start}" if start else "")
    )
    model.train()
    t0, last_ck, history, step_times, stopped = time.time(), time.time(), [], [], False
    for step in range(start + 1, total + 1):
        b = batches[step - 1]
        ts = time.time()
        with autocast(device):
            loss = loss_of(b)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
        step_times.append(time.time() - ts)
        el = time.time() - t0
        done = step - start
        if step % args.log_every == 0 or step == total:
            log(
                f"step {step}/{total}{f' [{tag(b)}]' if tag else ''} loss {np.mean(losses[-args.log_every :]):.4f} "
                f"lr {sched.get_last_lr()[0]:.2e} {el / done:.2f}s/step eta {el / done * (total - step) / 60:.1f} min"
            )
        if evals and step in evals:
            res = evals[step]()
            history.append({"step": step, "train_loss_last50": round(float(np.mean(losses[-50:])), 4), **res})
            log(f"eval step {step}: {res}")
            model.train()
        if args.checkpoint_minutes and time.time() - last_ck > args.checkpoint_minutes * 60 and step < total:
            _save_state(state, model, opt, sched, step, losses, before + el)
            last_ck = time.time()
        if args.max_minutes and before + el > args.max_minutes * 60 and step < total:
            log(f"STOP: --max-minutes {args.max_minutes} reached at step {step}/{total} (schedule not finished)")
            stopped = True
            break
    train_s = before + time.time() - t0
    steps = len(losses)
    model.eval()
    return {
        "steps_planned": total,
        "steps": steps,
        "stopped_early": stopped,
        "train_seconds": round(train_s, 1),
        "seconds_per_step": round(train_s / max(1, steps), 3),
        "losses": losses,
        "step_times": step_times,
        "eval_history": history,
        "resumed_at": start,
    }


def curve(losses: list[float], every: int) -> list[float]:
    import numpy as np

    return [round(float(np.mean(losses[i : i + every])), 4) for i in range(0, len(losses), every)]
