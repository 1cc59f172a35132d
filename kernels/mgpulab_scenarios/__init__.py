"""The scenario catalog: one guided, measured experiment per source article.

``SCENARIOS`` (id -> Scenario), :func:`get`, :func:`validate`, :func:`render`
(a cell's source), :func:`render_template` (source and template),
:func:`notebook` (the scenario as cells), :func:`run` (headless: runs every
experiment and computes every claim's verdict from that run's evidence),
:func:`show_verdicts`, :func:`catalog` (JSON-able descriptions). The
long-lived catalog process for the server is :mod:`mgpulab_scenarios.service`.
Importing this package does not import torch; the scenario modules do, on
first use.
"""
from __future__ import annotations

import importlib
import time
from typing import Any, Dict, List, Optional, Tuple

from .core import VERDICTS, ParameterError, check_verdict, short_repr

__all__ = ["IDS", "SCENARIOS", "get", "validate", "render", "render_template", "notebook", "run", "show_verdicts",
           "catalog", "ParameterError", "VERDICTS", "UnknownScenario", "UnknownTemplate"]

IDS = ("dp-basics", "dp-not-starting", "params-not-updated", "incomplete-results-gil", "hangs")
_MODULES = {"dp-basics": "dp_basics", "dp-not-starting": "dp_not_starting",
            "params-not-updated": "params_not_updated", "incomplete-results-gil": "incomplete_results_gil",
            "hangs": "hangs"}


class UnknownScenario(KeyError):
    def __str__(self) -> str:
        return f"unknown scenario {short_repr(self.args[0])} (known: {', '.join(IDS)})"


class UnknownTemplate(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


class _Registry(dict):
    def __missing__(self, key: str) -> Any:
        if key not in _MODULES:
            raise UnknownScenario(key)
        scenario = importlib.import_module(f"{__name__}.{_MODULES[key]}").SCENARIO
        self[key] = scenario
        return scenario


SCENARIOS: Dict[str, Any] = _Registry()


def get(scenario_id: str) -> Any:
    if not isinstance(scenario_id, str) or scenario_id not in _MODULES:
        raise UnknownScenario(scenario_id)
    return SCENARIOS[scenario_id]


def validate(scenario_id: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Defaults merged with ``params``, each checked (type, range, cross-parameter limits)."""
    return get(scenario_id).validate(params)


def _split_template_id(template_id: Any) -> Tuple[Any, str]:
    if not isinstance(template_id, str) or template_id.count("/") != 1:
        raise UnknownTemplate(f"template id must be '<scenario>/<cell>', got {short_repr(template_id)}")
    scenario_id, cell_id = template_id.split("/", 1)
    scenario = get(scenario_id)
    if not scenario.has_cell(cell_id):
        raise UnknownTemplate(f"scenario {scenario_id!r} has no cell {short_repr(cell_id)} "
                              f"(cells: {', '.join(scenario.cell_ids())})")
    return scenario, cell_id


def render_template(template_id: str, params: Optional[Dict[str, Any]] = None) -> dict:
    """``{source, template}`` of cell ``<scenario>/<cell>`` (``<scenario>/verdicts`` included).

    ``template`` is ``{id, parameters, fields, question}``: every validated
    value of the scenario, the parameter descriptions the cell's source uses,
    and the step's "predict first" question on the step's first cell.
    """
    scenario, cell_id = _split_template_id(template_id)
    return scenario.render_cell(cell_id, params)


def render(template_id: str, params: Optional[Dict[str, Any]] = None) -> str:
    """Python source of cell ``<scenario>/<cell>`` with validated values as literals."""
    return render_template(template_id, params)["source"]


def notebook(scenario_id: str, params: Optional[Dict[str, Any]] = None) -> List[dict]:
    """The scenario as notebook cells (markdown, rendered experiments, a verdicts cell)."""
    from .as_notebook import notebook_cells
    return notebook_cells(get(scenario_id), params)


def show_verdicts(result: dict) -> None:
    """Each claim's quote, verdict and evidence.

    In the lab kernel: one display output with ``text/plain`` (the headless
    runner's text) and ``application/vnd.mgpulab.verdicts+json`` (see
    :mod:`mgpulab_scenarios.report`). Elsewhere: prints the text.
    """
    from .report import VerdictsDisplay, display
    shown = VerdictsDisplay(result)
    if not display(shown):
        print(shown.text)


def catalog() -> List[dict]:
    return [get(i).to_dict() for i in IDS]


def run(scenario_id: str, params: Optional[Dict[str, Any]] = None,
        experiments: Optional[List[str]] = None) -> dict:
    """Run a scenario headless: ``{scenario, title, source, deviceMode, params, experiments, claims}``.

    Each claim: ``{id, quote, experiment, verdict, explanation, evidence, numbers}`` — ``numbers``
    is the evidence flattened to ``{label, value}`` scalars, those the verdict read first
    (see :mod:`mgpulab_scenarios.report`).
    """
    scenario = get(scenario_id)
    values = scenario.validate(params)
    from .common import mode_label
    from .report import call_tracked, numbers
    n = next((values[k] for k in ("devices", "world_size") if k in values), 1)
    results = []
    evidence: Dict[str, Any] = {}
    for exp in scenario.experiments:
        if experiments is not None and exp.id not in experiments:
            continue
        t0 = time.perf_counter()
        try:
            ev = exp.run(values)
            error = None
        except Exception as err:  # an experiment bug must not hide the others' verdicts
            ev, error = {}, f"{type(err).__name__}: {err}"
        evidence[exp.id] = ev
        results.append({"id": exp.id, "title": exp.title, "variants": list(exp.variants),
                        "seconds": round(time.perf_counter() - t0, 3), "evidence": ev, "error": error})
    claims = []
    for claim in scenario.claims:
        if claim.experiment not in evidence:
            continue
        ev = evidence[claim.experiment]
        reads: list = []
        if not ev:  # the experiment raised: no verdict rather than a made-up one
            verdict, explanation = None, "experiment failed: no evidence (see the experiment's error)"
        else:
            try:  # note which evidence the verdict reads: those numbers are shown first
                outcome, reads = call_tracked(claim.verdict, ev)
            except Exception:  # noqa: BLE001 - the plain call below says what went wrong
                outcome, reads = claim.verdict(ev), []
            verdict, explanation = check_verdict(outcome)
        claims.append({"id": claim.id, "quote": claim.quote, "experiment": claim.experiment,
                       "verdict": verdict, "explanation": explanation, "evidence": ev,
                       "numbers": numbers(ev, reads)})
    return {"scenario": scenario.id, "title": scenario.title, "source": scenario.source,
            "deviceMode": f"{mode_label(n, 'DataParallel', values)}; DDP: {mode_label(n, 'DDP', values)}"
            if n > 1 else mode_label(1, "DataParallel", values),
            "params": values, "experiments": results, "claims": claims}
