"""Claims judged as soon as the experiment cell that decides them finishes.

The verdicts cell is the scenario's report; but a class moves step by step,
and each participant (and the facilitator's console) should see "you
predicted X — measured Y" when the step's cell ends, not at the last step.
So at the end of every cell (the kernel's :func:`mgpulab_kernel.kernel.on_cell_end`
hook), each experiment whose evidence recording this execution started is
judged with :func:`mgpulab_scenarios.run` restricted to that experiment —
the very function the verdicts cell calls, so a claim has one verdict
whichever cell shows it, and an experiment whose run failed or did not finish
gives its claims no verdict but that status and its reason.

The result is one display output of the cell: a verdict report
(``VERDICTS_MIME``) marked ``"scope": "step"``, with a short ``text/plain``.
Outside the lab kernel (the catalog service, the headless runner) nothing is
installed.
"""
from __future__ import annotations

import functools
import json
import sys
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from . import evidence
from .report import VERDICTS_MIME, format_text, verdict_report

STEP_SCOPE = "step"


class StepVerdicts:
    """The claims one experiment cell decided, as a display object."""

    def __init__(self, result: dict, source_title: str = "") -> None:
        self.report = {**verdict_report(result), "scope": STEP_SCOPE,
                       "sourceTitle": source_title or str(result.get("source", ""))}
        self.text = format_text(result)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Dict[str, str]:
        return {"text/plain": self.text,
                VERDICTS_MIME: json.dumps(self.report, ensure_ascii=False, allow_nan=False, default=str)}

    def __repr__(self) -> str:
        return self.text


Run = Callable[..., dict]  # mgpulab_scenarios.run: given by the package (this module does not import it)


def recorded_by(scenarios: Mapping[str, Any], count: Optional[int],
                execution_id: Optional[str]) -> List[Tuple[str, str, evidence.Record]]:
    """``(scenario id, experiment id, record)`` of each experiment this execution started recording.

    ``scenarios`` is the catalog's registry of the scenarios loaded in this
    process (a cell that recorded evidence has loaded its scenario);
    ``count`` is the kernel's execution counter, unique in a kernel, and the
    execution id must agree.
    """
    found = []
    for scenario_id in list(scenarios.keys()):
        scenario = scenarios[scenario_id]
        for experiment in scenario.experiments:
            record = evidence.latest(f"{scenario_id}/{experiment.id}")
            if record is None or count is None or record.count != count or record.execution_id != execution_id:
                continue
            found.append((scenario_id, experiment.id, record))
    return found


def judge(run: Run, scenario_id: str, experiment_id: str, record: evidence.Record) -> dict:
    """The verdicts cell's document (``run``) for this one experiment, with the values the cell ran with."""
    return run(scenario_id, dict(record.params), experiments=[experiment_id])


def _at_cell_end(scenarios: Mapping[str, Any], run: Run, execution: Any, status: str, error: Optional[str]) -> None:
    from .report import display
    # First the recording this cell started learns how the cell ended (a cell that raised failed it), then
    # what it decided is judged: a failed experiment is judged too (no verdict, the reason).
    evidence.cell_ended(execution.execution_id, status, error)
    for scenario_id, experiment_id, record in recorded_by(scenarios, execution.count, execution.execution_id):
        title = getattr(scenarios.get(scenario_id), "source_title", "") if hasattr(scenarios, "get") else ""
        display(StepVerdicts(judge(run, scenario_id, experiment_id, record), title))


def install(scenarios: Mapping[str, Any], run: Run) -> None:
    """Judge experiment cells as they end with ``run`` (the verdicts cell's function), when running inside the
    lab kernel (no-op elsewhere); ``scenarios`` is the catalog's registry of loaded scenarios."""
    kernel = sys.modules.get("mgpulab_kernel.kernel")
    if kernel is not None and hasattr(kernel, "on_cell_end"):
        kernel.on_cell_end(functools.partial(_at_cell_end, scenarios, run))
