"""A scenario without the lab: execute its experiment cells in-process, in notebook order, then its verdicts.

The cells are the participant's cells, rendered with the same values and
executed as they are (each in a fresh namespace, as cell ``<scenario>/<cell>``
with a new execution id): they record their evidence, and the verdicts are
computed from it by :func:`mgpulab_scenarios.run` — one path, the same code
the participant runs. Used by the command line (``cli.py``) and the tests.
"""
from __future__ import annotations

import secrets
import time
import traceback
from typing import Any, Dict, List, Optional

from . import evidence, get, run


def run_cells(scenario_id: str, values: Dict[str, Any], only: Optional[List[str]] = None) -> Dict[str, dict]:
    """Execute each experiment cell of the scenario (or those in ``only``); ``{cell id: {seconds, error,
    executionId}}``. A cell that raises is reported, and the next cell still runs."""
    scenario = get(scenario_id)
    values = scenario.validate(values)
    done: Dict[str, dict] = {}
    for step in scenario.steps:
        for cell in step.cells:
            if only is not None and cell.id not in only:
                continue
            template_id = f"{scenario_id}/{cell.id}"
            source = scenario.render_cell(cell.id, values)["source"]
            execution_id = f"cli-{secrets.token_hex(6)}"
            t0 = time.perf_counter()
            error = None
            with evidence.executing(template_id, execution_id):
                try:
                    exec(compile(source, f"<{template_id}>", "exec"), {"__name__": "__cell__"})  # noqa: S102
                except Exception as err:  # noqa: BLE001 - reported per cell, the others still run
                    error = f"{type(err).__name__}: {err}"
                    traceback.print_exc()
                evidence.cell_ended(execution_id, "ok" if error is None else "error", error)  # as the kernel does
            done[cell.id] = {"seconds": round(time.perf_counter() - t0, 3), "error": error,
                             "executionId": execution_id}
    return done


def run_scenario(scenario_id: str, values: Optional[Dict[str, Any]] = None,
                 only: Optional[List[str]] = None) -> dict:
    """Run the experiment cells, then the verdicts from their evidence (:func:`mgpulab_scenarios.run`'s
    document: an experiment whose run broke — its cell raised, or a launch ended in a way it does not
    provoke — has its error, and its claims "experiment failed", as in a notebook)."""
    checked = get(scenario_id).validate(values)
    cells = run_cells(scenario_id, checked, only)
    doc = run(scenario_id, checked, experiments=only)
    for experiment in doc["experiments"]:
        cell = cells.get(experiment["id"])
        if cell is None:
            continue
        experiment["seconds"] = cell["seconds"]
        if cell["error"] is not None and experiment["error"] is None:  # raised before it started recording
            experiment.update(status="failed", error=f"the cell raised {cell['error']}")
            for claim in doc["claims"]:
                if claim["experiment"] == experiment["id"]:
                    claim.update(status="failed", verdict=None, explanation=f"experiment failed: {experiment['error']}")
    return doc
