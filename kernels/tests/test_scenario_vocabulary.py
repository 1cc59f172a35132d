"""The words every scenario piece shares (mgpulab_scenarios.vocabulary)."""
from __future__ import annotations

import pytest

from mgpulab_scenarios import core
from mgpulab_scenarios.vocabulary import STATUSES, VERDICTS, VERDICTS_CELL, check_verdict


def test_check_verdict_accepts_the_four_verdicts_only_and_makes_the_explanation_text():
    for verdict in VERDICTS:
        assert check_verdict((verdict, 3)) == (verdict, "3")
    with pytest.raises(ValueError, match="verdict must be one of"):
        check_verdict(("maybe", "why"))


def test_the_model_speaks_the_same_words():
    assert (core.VERDICTS, core.STATUSES, core.VERDICTS_CELL) == (VERDICTS, STATUSES, VERDICTS_CELL)
    assert STATUSES == ("measured", "needs-run", "failed")
