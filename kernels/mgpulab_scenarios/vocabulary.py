"""The words every scenario piece shares: the verdicts a claim can get, the statuses of a claim in a report,
and the ids of the cells every scenario has.

Separate from the model (:mod:`.core`) so the pieces below it (the definition checks, the rendering) can
name them without importing the model.
"""
from __future__ import annotations

from typing import Any, Dict, Tuple

VERDICTS = ("holds", "does-not-hold", "partly", "inconclusive")
"""``inconclusive``: the measurement cannot decide (the spread is as large as the effect, or this host
cannot show it); the explanation gives the numbers and what to change."""

STATUSES = ("measured", "needs-run", "failed")
"""A claim's status in a report: ``measured`` (it has a verdict), ``needs-run`` (its experiment cell has not
run with the values shown: no verdict, the explanation names the cell), ``failed`` (its experiment failed)."""

Evidence = Dict[str, Any]

Verdict = Tuple[str, str]

VERDICTS_CELL = "verdicts"  # the cell id of every scenario's last cell (reads the evidence, shows verdicts)
INTRO_CELL = "intro"  # the markdown cell id of the scenario's introduction (with its parameter table)
VERDICTS_ABOUT_CELL = "about-verdicts"  # the markdown cell above the verdicts cell


def check_verdict(result: Any) -> Verdict:
    verdict, explanation = result
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    return verdict, str(explanation)
