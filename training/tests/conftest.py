"""Shared paths and fixtures of the kit's tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "test" / "fixtures"


@pytest.fixture(scope="session")
def golden() -> dict:
    """test/fixtures/calibration-golden.json: the figures both sides' calibration math must give."""
    return json.loads((FIXTURES / "calibration-golden.json").read_text())
