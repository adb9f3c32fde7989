"""paramine_client/models.py is what generate.py writes from openapi.yaml today (as openapi.yaml is what the
service's schemas give: test/server/openapi.test.ts)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def test_models_match_the_contract(tmp_path):
    spec = importlib.util.spec_from_file_location("generate", HERE / "generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    out = tmp_path / "models.py"
    gen.generate(out)
    committed = (HERE / "paramine_client" / "models.py").read_text(encoding="utf-8")
    assert out.read_text(encoding="utf-8") == committed, (
        "paramine_client/models.py is stale: run `npm run client:python` after `npm run openapi`"
    )
