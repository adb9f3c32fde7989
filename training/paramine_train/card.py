"""The model-card writer: README.md (the card's text) and metrics.json (every number in it) into a model
directory, with the helpers both cards use (the reproducing command, Markdown tables, the files table)."""

from __future__ import annotations

import shlex
from pathlib import Path

from .common import log, write_json


def command_line(command: str, hyper: dict, defaults) -> str:
    """`nice -n 10 paramine-train COMMAND --flag value ...`: the flags that differ from the defaults."""

    def value(x):  # flags stand alone; lists take their items one by one, quoted for the shell
        if isinstance(x, bool):
            return ""
        return "".join(f" {shlex.quote(str(y))}" for y in (x if isinstance(x, list) else [x]))

    extra = " ".join(
        f"--{k.replace('_', '-')}{value(hyper[k])}"
        for k in hyper
        if hasattr(defaults, k) and hyper.get(k) != getattr(defaults, k)
    )
    return f"nice -n 10 paramine-train {command}" + (" " + extra if extra else "")


def table(head: list[str], rows: list[list]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def versions_line(v: dict) -> str:
    return ", ".join(f"{k} {x}" for k, x in v.items())


def reproduce(command: str, versions: dict) -> str:
    return f"""## Reproduce

```
python3 -m venv .venv && .venv/bin/pip install -e training
npm run build:ts    # the scripts read pair files through `paramine pairs dump`
{command}
```

Library versions used: {versions_line(versions)}. PyTorch is the PyPI wheel, run on CPU."""


def write(out: Path, text: str, report: dict):
    """README.md and metrics.json into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "metrics.json", report, indent=1)
    (out / "README.md").write_text(text, encoding="utf-8")
    log(f"card: {out / 'README.md'}")
