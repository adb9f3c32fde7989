"""Writes paramine_client/models.py from the contract, ../../openapi.yaml (itself generated from the service's zod
schemas): pydantic models of every request and answer, by datamodel-code-generator (pinned in pyproject.toml).

    npm run client:python        # or: .venv/bin/python clients/python/generate.py

tests/test_contract.py fails when the committed file differs from what this writes, as test/server/openapi.test.ts
does for openapi.yaml.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONTRACT = HERE.parents[1] / "openapi.yaml"
MODELS = HERE / "paramine_client" / "models.py"
HEADER = '"""The contract\'s models: generated from openapi.yaml by clients/python/generate.py - do not edit."""\n\n'


def generate(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "models.py"
        subprocess.run(
            [sys.executable, "-m", "datamodel_code_generator", "--input", str(CONTRACT)]
            + ["--input-file-type", "openapi", "--output", str(raw)]
            + ["--output-model-type", "pydantic_v2.BaseModel", "--target-python-version", "3.11"]
            + ["--use-standard-collections", "--use-union-operator", "--disable-timestamp"]
            # inline schemas named after their parent (JobRequestScope, not Scope1) and no one-field wrappers
            + ["--parent-scoped-naming", "--collapse-root-models"]
            # answers from a newer service keep their new fields; the service checks requests itself
            + ["--extra-fields", "allow"]
            + ["--formatters", "ruff-format", "ruff-check"],
            check=True,
            capture_output=True,
        )
        text = raw.read_text(encoding="utf-8")
    # the generator's own header names the input by the path it was given
    body = text.split("\n\n", 1)[1] if text.startswith("#") else text
    out.write_text(HEADER + body.lstrip("\n"), encoding="utf-8")


if __name__ == "__main__":
    generate(MODELS)
    print(f"{MODELS.relative_to(HERE.parents[1])} from {CONTRACT.name}")
