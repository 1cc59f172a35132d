"""What a scenario's definition must pass when it is built (mgpulab_scenarios.definition_checks)."""
from __future__ import annotations

import pytest

from mgpulab_scenarios.core import Cell, Claim, Experiment, Parameter, Scenario, Step


def _scenario(**changes):
    parts = dict(
        id="demo", title="Demo", source="demo.txt", summary="",
        parameters=(Parameter("n", "int", 2, "n", 1, 4),),
        steps=(Step("run", "Run {{n}}.", (Cell("run", "x = {{n}}"),), "How many?", ("one", "two"), ("c",)),),
        experiments=(Experiment("run", "Run", ("a",), evidence=lambda observed: {}),),
        claims=(Claim("c", "quote", "run", lambda evidence: ("holds", "")),),
        outcomes={"run": ({"c": ("holds",)}, {})})
    parts.update(changes)
    return Scenario(**parts)


def test_a_consistent_definition_builds():
    assert _scenario().cell_ids() == ["run", "verdicts"]


@pytest.mark.parametrize("changes, piece", [
    ({"parameters": (Parameter("n", "int", 9, "n", 1, 4),)}, "must be an int"),
    ({"claims": (Claim("c", "quote", "elsewhere", lambda evidence: ("holds", "")),)}, r"'demo', 'c'"),
    ({"steps": (Step("run", "Run {{m}}.", (Cell("run", "x = 1"),), "How many?", ("one", "two")),)}, r"'run', 'm'"),
    ({"steps": (Step("run", "Run.", (Cell("run", "x = {{n}}"), Cell("run", "y = 1"))),), "outcomes": {}},
     r"\['run', 'run'\]"),
    ({"steps": (Step("run", "Run.", (Cell("run", "x = 1"), Cell("verdicts", "y = 1"))),), "outcomes": {}},
     "reserved"),
    ({"outcomes": {"run": ({"c": ("holds",)},)}}, "one outcome per choice"),
    ({"outcomes": {"run": ({"c": ("sure",)}, {})}}, r"'run', 'c'"),
    ({"experiments": (Experiment("run", "Run", ("a",), evidence=lambda observed: {}, provokes=("oops",)),)}, "oops"),
])
def test_an_inconsistent_definition_fails_naming_the_scenario_and_the_piece(changes, piece):
    with pytest.raises((AssertionError, ValueError), match=piece):
        _scenario(**changes)
