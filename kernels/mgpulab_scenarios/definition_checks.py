"""The checks a scenario's definition must pass when its module is imported: defaults in range, every
claim's experiment and every experiment's cell present, cell ids unique and none reserved, every
placeholder a parameter, one tell and one outcome per choice, outcomes naming real claims and verdicts.

Separate from the model (:mod:`.core`): these run once, on the authored data, and say which scenario and
which piece is wrong; the model's methods then rely on them.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from mgpulab.outcome import OUTCOMES

from .parameters import Parameter
from .parts import Claim, Experiment, Step
from .rendering import PLACEHOLDER
from .vocabulary import VERDICTS, VERDICTS_CELL


def check_definition(scenario_id: str, parameters: Sequence[Parameter], steps: Sequence[Step],
                     experiments: Sequence[Experiment], claims: Sequence[Claim],
                     outcomes: Mapping[str, Sequence[Mapping[str, Sequence[str]]]],
                     markdown_ids: Sequence[str]) -> None:
    """Raise AssertionError naming the scenario and the piece when its definition is inconsistent."""
    names = {p.name for p in parameters}
    for p in parameters:
        p.check(p.default)  # a definition bug fails at import
    experiment_ids = {e.id for e in experiments}
    for claim in claims:
        assert claim.experiment in experiment_ids, (scenario_id, claim.id)
    cell_ids = [cell.id for step in steps for cell in step.cells]
    assert len(cell_ids) == len(set(cell_ids)), (scenario_id, cell_ids)
    for experiment in experiments:  # an experiment is run (and recorded) by the cell of the same id
        assert experiment.id in cell_ids, (scenario_id, experiment.id)
        assert set(experiment.provokes) <= set(OUTCOMES) - {"ok"}, (scenario_id, experiment.id, experiment.provokes)
    assert VERDICTS_CELL not in cell_ids, (scenario_id, "the verdicts cell id is reserved")
    assert not set(cell_ids) & set(markdown_ids), (scenario_id, "a code cell id is a markdown cell's")
    for step in steps:
        for cell in step.cells:
            for name in PLACEHOLDER.findall(cell.template):
                assert name in names, (scenario_id, cell.id, name)
        for name in PLACEHOLDER.findall(step.markdown + step.explanation):
            assert name in names, (scenario_id, step.id, name)
        assert len(step.tells) in (0, len(step.choices)), (scenario_id, step.id, "tells: one tuple per choice")
    claim_ids = {claim.id for claim in claims}
    by_id = {step.id: step for step in steps}
    for step_id, choices in outcomes.items():
        assert step_id in by_id and by_id[step_id].question is not None, (scenario_id, step_id, "outcomes of no question")
        assert len(choices) == len(by_id[step_id].choices), (scenario_id, step_id, "one outcome per choice")
        for outcome in choices:
            for claim_id, verdicts in outcome.items():
                assert claim_id in claim_ids and set(verdicts) <= set(VERDICTS), (scenario_id, step_id, claim_id)
