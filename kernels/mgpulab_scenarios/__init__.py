"""The scenario catalog: one guided, measured experiment per source article.

``SCENARIOS`` (id -> Scenario), :func:`get`, :func:`validate`, :func:`render`,
:func:`run` (headless: runs every experiment and computes every claim's
verdict from that run's evidence), :func:`catalog` (JSON-able descriptions).
Importing this package does not import torch; the scenario modules do, on
first use.
"""
from __future__ import annotations

import importlib
import time
from typing import Any, Dict, List, Optional

from .core import VERDICTS, ParameterError, check_verdict, render_text

__all__ = ["IDS", "SCENARIOS", "get", "validate", "render", "run", "catalog", "ParameterError", "VERDICTS",
           "UnknownScenario"]

IDS = ("dp-basics", "dp-not-starting", "params-not-updated", "incomplete-results-gil", "hangs")
_MODULES = {"dp-basics": "dp_basics", "dp-not-starting": "dp_not_starting",
            "params-not-updated": "params_not_updated", "incomplete-results-gil": "incomplete_results_gil",
            "hangs": "hangs"}


class UnknownScenario(KeyError):
    def __str__(self) -> str:
        return f"unknown scenario {self.args[0]!r} (known: {', '.join(IDS)})"


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


def render(template_id: str, params: Optional[Dict[str, Any]] = None) -> str:
    """Python source of cell ``<scenario>/<cell>`` with validated values as literals."""
    if not isinstance(template_id, str) or "/" not in template_id:
        raise KeyError(f"template id must be '<scenario>/<cell>', got {template_id!r}")
    scenario_id, cell_id = template_id.split("/", 1)
    scenario = get(scenario_id)
    values = scenario.validate(params)
    return render_text(scenario.cell(cell_id).template, values)


def notebook(scenario_id: str, params: Optional[Dict[str, Any]] = None) -> List[dict]:
    """The scenario as notebook cells (markdown, rendered experiments, a verdicts cell)."""
    from .as_notebook import notebook_cells
    return notebook_cells(get(scenario_id), params)


def show_verdicts(result: dict) -> None:
    """Prints each claim's quote, verdict and evidence (the headless runner's text)."""
    from .cli import format_text
    print(format_text(result))


def catalog() -> List[dict]:
    return [get(i).to_dict() for i in IDS]


def run(scenario_id: str, params: Optional[Dict[str, Any]] = None,
        experiments: Optional[List[str]] = None) -> dict:
    """Run a scenario headless: ``{scenario, title, source, deviceMode, params, experiments, claims}``."""
    scenario = get(scenario_id)
    values = scenario.validate(params)
    from .common import mode_label
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
        if not ev:  # the experiment raised: no verdict rather than a made-up one
            verdict, explanation = None, "experiment failed: no evidence (see the experiment's error)"
        else:
            verdict, explanation = check_verdict(claim.verdict(ev))
        claims.append({"id": claim.id, "quote": claim.quote, "experiment": claim.experiment,
                       "verdict": verdict, "explanation": explanation, "evidence": ev})
    return {"scenario": scenario.id, "title": scenario.title, "source": scenario.source,
            "deviceMode": f"{mode_label(n, 'DataParallel')}; DDP: {mode_label(n, 'DDP')}"
            if n > 1 else mode_label(1, "DataParallel"),
            "params": values, "experiments": results, "claims": claims}
