"""The checks a scenario's definition must pass when its module is imported: defaults in range, every
claim's experiment and every experiment's cell present, cell ids unique and none reserved, every
placeholder a parameter, one tell and one outcome per choice, outcomes naming real claims and verdicts.

Separate from the model (:mod:`.core`): these run once, on the authored data, and say which scenario and
which piece is wrong; the model's methods then rely on them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from mgpulab.outcome import OUTCOMES

from .rendering import PLACEHOLDER
from .vocabulary import VERDICTS, VERDICTS_CELL

if TYPE_CHECKING:
    from .core import Scenario


def check_definition(scenario: "Scenario") -> None:
    """Raise AssertionError naming the scenario and the piece when its definition is inconsistent."""
    names = {p.name for p in scenario.parameters}
    for p in scenario.parameters:
        p.check(p.default)  # a definition bug fails at import
    experiments = {e.id for e in scenario.experiments}
    for claim in scenario.claims:
        assert claim.experiment in experiments, (scenario.id, claim.id)
    cell_ids = [cell.id for step in scenario.steps for cell in step.cells]
    assert len(cell_ids) == len(set(cell_ids)), (scenario.id, cell_ids)
    for experiment in scenario.experiments:  # an experiment is run (and recorded) by the cell of the same id
        assert experiment.id in cell_ids, (scenario.id, experiment.id)
        assert set(experiment.provokes) <= set(OUTCOMES) - {"ok"}, (scenario.id, experiment.id, experiment.provokes)
    assert VERDICTS_CELL not in cell_ids, (scenario.id, "the verdicts cell id is reserved")
    assert not set(cell_ids) & set(scenario.markdown_ids()), (scenario.id, "a code cell id is a markdown cell's")
    for step in scenario.steps:
        for cell in step.cells:
            for name in PLACEHOLDER.findall(cell.template):
                assert name in names, (scenario.id, cell.id, name)
        for name in PLACEHOLDER.findall(step.markdown + step.explanation):
            assert name in names, (scenario.id, step.id, name)
        assert len(step.tells) in (0, len(step.choices)), (scenario.id, step.id, "tells: one tuple per choice")
    claim_ids = {claim.id for claim in scenario.claims}
    steps = {step.id: step for step in scenario.steps}
    for step_id, outcomes in scenario.outcomes.items():
        assert step_id in steps and steps[step_id].question is not None, (scenario.id, step_id, "outcomes of no question")
        assert len(outcomes) == len(steps[step_id].choices), (scenario.id, step_id, "one outcome per choice")
        for outcome in outcomes:
            for claim_id, verdicts in outcome.items():
                assert claim_id in claim_ids and set(verdicts) <= set(VERDICTS), (scenario.id, step_id, claim_id)
