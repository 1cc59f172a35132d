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

import json
import sys
from typing import Any, Dict, List, Optional, Tuple

from . import evidence
from .report import VERDICTS_MIME, format_text, verdict_report

STEP_SCOPE = "step"


class StepVerdicts:
    """The claims one experiment cell decided, as a display object."""

    def __init__(self, result: dict) -> None:
        from . import SCENARIOS
        scenario = SCENARIOS.get(result.get("scenario", ""))
        self.report = {**verdict_report(result), "scope": STEP_SCOPE,
                       "sourceTitle": getattr(scenario, "source_title", "") or result.get("source", "")}
        self.text = format_text(result)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Dict[str, str]:
        return {"text/plain": self.text,
                VERDICTS_MIME: json.dumps(self.report, ensure_ascii=False, allow_nan=False, default=str)}

    def __repr__(self) -> str:
        return self.text


def recorded_by(count: Optional[int], execution_id: Optional[str]) -> List[Tuple[str, str, evidence.Record]]:
    """``(scenario id, experiment id, record)`` of each experiment this execution started recording.

    Only scenarios already loaded in this process are looked at (a cell that
    recorded evidence has loaded its scenario); ``count`` is the kernel's
    execution counter, unique in a kernel, and the execution id must agree.
    """
    from . import SCENARIOS  # the registry: loaded scenarios only, nothing imported here
    found = []
    for scenario_id in list(SCENARIOS.keys()):
        scenario = SCENARIOS[scenario_id]
        for experiment in scenario.experiments:
            record = evidence.latest(f"{scenario_id}/{experiment.id}")
            if record is None or count is None or record.count != count or record.execution_id != execution_id:
                continue
            found.append((scenario_id, experiment.id, record))
    return found


def judge(scenario_id: str, experiment_id: str, record: evidence.Record) -> dict:
    """The verdicts cell's document for this one experiment, with the values the cell ran with."""
    from . import run
    return run(scenario_id, dict(record.params), experiments=[experiment_id])


def _at_cell_end(execution: Any, status: str) -> None:  # noqa: ARG001 - a failed cell is judged too (no verdict, its reason)
    from .report import display
    for scenario_id, experiment_id, record in recorded_by(execution.count, execution.execution_id):
        display(StepVerdicts(judge(scenario_id, experiment_id, record)))


def install() -> None:
    """Judge experiment cells as they end, when running inside the lab kernel (no-op elsewhere)."""
    kernel = sys.modules.get("mgpulab_kernel.kernel")
    if kernel is not None and hasattr(kernel, "on_cell_end"):
        kernel.on_cell_end(_at_cell_end)
