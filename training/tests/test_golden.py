"""The kit's calibration math against the golden file the TypeScript suite reads too
(test/rerank/calibration-golden.test.ts): a change on one side alone fails one of the two."""

from __future__ import annotations

import pytest

from paramine_train.calibrate import canonical_pair
from paramine_train.label_calibration import fit_platt, logit, reliability, rescale_ranking
from paramine_train.reranker_export import choose_threshold


def test_platt_fit(golden):
    g = golden["platt"]
    a, b = fit_platt(logit(g["scores"]), g["gold"], [1.0] * len(g["gold"]))
    assert a == pytest.approx(g["expected"]["a"], abs=1e-6)
    assert b == pytest.approx(g["expected"]["b"], abs=1e-6)


def test_reliability(golden):
    g = golden["reliability"]
    r = reliability(g["scores"], g["gold"])
    # the kit writes its figures rounded to 4 places
    assert r["ece"] == pytest.approx(g["expected"]["ece"], abs=5e-5)
    assert r["brier"] == pytest.approx(g["expected"]["brier"], abs=5e-5)


def test_rescale_ranking(golden):
    for case in golden["rescale"]:
        got = rescale_ranking(case["ranking"], case["old"], case["new"])
        assert got["w_logit"] == pytest.approx(case["expected"]["w_logit"], abs=1e-6)
        assert got["bias"] == pytest.approx(case["expected"]["bias"], abs=1e-6)
        assert got["w_cosine"] == case["ranking"]["w_cosine"]


def test_label_cut(golden):
    for g in golden["cut"]:
        cut, at = choose_threshold({"set": g["scores"]}, {"set": g["gold"]})
        assert cut == g["expected"]["cut"]
        assert at["set"]["f1"] == g["expected"]["f1"]


def test_canonical_pair_order(golden):
    wrong = [c for c in golden["pair_order"] if list(canonical_pair(c["a"], c["b"], c["order"])) != c["expected"]]
    assert wrong == []
    assert len(golden["pair_order"]) > 100


def test_golden_is_not_trivial(golden):
    """The fixed inputs exercise the math: a slope away from 1, a cut off the report's 0.05 grid."""
    assert abs(golden["platt"]["expected"]["a"] - 1) > 0.1
    assert round(golden["cut"][0]["expected"]["cut"] * 100) % 5 != 0
    assert golden["cut"][1]["expected"]["cut"] == 0.72
