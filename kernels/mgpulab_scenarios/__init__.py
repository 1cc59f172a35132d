"""The scenario catalog: one guided, measured experiment per source article.

``SCENARIOS`` (id -> Scenario), :func:`get`, :func:`validate`, :func:`render`
(a cell's source), :func:`render_template` (source and template),
:func:`notebook` (the scenario as cells), :func:`run` (the verdicts cell:
every claim's verdict from the evidence the experiment cells recorded, see
:mod:`mgpulab_scenarios.evidence`),
:func:`show_verdicts`, :func:`catalog` (JSON-able descriptions). The
long-lived catalog process for the server is :mod:`mgpulab_scenarios.service`.
Importing this package does not import torch; the scenario modules do, on
first use.
"""
from __future__ import annotations

import importlib
from typing import Any, Dict, List, Optional, Tuple

from . import evidence as _evidence
from .core import STATUSES, VERDICTS, VERDICTS_CELL, ParameterError, check_verdict, short_repr

__all__ = ["IDS", "SCENARIOS", "get", "validate", "render", "render_template", "notebook", "run", "show_verdicts",
           "catalog", "experiment_of", "ParameterError", "STATUSES", "VERDICTS", "UnknownScenario", "UnknownTemplate"]

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
    if not scenario.has_cell(cell_id) and cell_id not in scenario.markdown_ids():
        raise UnknownTemplate(f"scenario {scenario_id!r} has no cell {short_repr(cell_id)} "
                              f"(cells: {', '.join(scenario.cell_ids())}; markdown: "
                              f"{', '.join(scenario.markdown_ids())})")
    return scenario, cell_id


def render_template(template_id: str, params: Optional[Dict[str, Any]] = None) -> dict:
    """``{source, template}`` of cell ``<scenario>/<cell>`` (``<scenario>/verdicts`` and the markdown cells
    included, see :mod:`mgpulab_scenarios.as_notebook`).

    ``template`` is ``{id, parameters, fields, question}``: every validated
    value of the scenario, the parameter descriptions the cell's source uses,
    and the step's "predict first" question on the step's first cell; a
    markdown cell has no fields and no question, and a step's explanation
    also ``revealAfter`` (claim ids).
    """
    scenario, cell_id = _split_template_id(template_id)
    if cell_id in scenario.markdown_ids():
        from .as_notebook import markdown_cell
        cell = markdown_cell(scenario, cell_id, params)
        return {"source": cell["source"], "template": cell["template"]}
    return scenario.render_cell(cell_id, params)


def render(template_id: str, params: Optional[Dict[str, Any]] = None) -> str:
    """The source of cell ``<scenario>/<cell>`` with validated values (Python literals in code; escaped text
    in markdown)."""
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
    # The article by its title: its file name in the seeds folder means nothing to a reader.
    shown.report["sourceTitle"] = getattr(SCENARIOS.get(result.get("scenario", "")), "source_title", "") or result.get("source", "")
    if not display(shown):
        print(shown.text)


def catalog() -> List[dict]:
    return [get(i).to_dict() for i in IDS]


def experiment_of(template_id: str) -> Tuple[Any, List[str]]:
    """(the experiment cell ``<scenario>/<cell>`` records, the parameters its template uses)."""
    scenario, cell_id = _split_template_id(template_id)
    if cell_id == VERDICTS_CELL:
        raise UnknownTemplate(f"{template_id} is the verdicts cell: it reads evidence, it records none")
    try:
        experiment = scenario.experiment(cell_id)
    except KeyError:
        raise UnknownTemplate(f"cell {template_id} runs no experiment of scenario {scenario.id!r}") from None
    return experiment, scenario.used(cell_id)


_evidence.set_resolver(experiment_of)



def _describe_values(values: Dict[str, Any], names: List[str]) -> str:
    return ", ".join(f"{name}={values[name]!r}" if isinstance(values[name], str) else f"{name}={values[name]}"
                     for name in names)


def _lookup(scenario: Any, experiment: Any, values: Dict[str, Any]) -> Tuple[str, Any, Optional[str]]:
    """(status, record, why): "measured" with the record the verdicts may read, "failed" with what broke in
    the run with the form's values, or "needs-run" with what to run and why — never evidence from a run
    with other values than the form's, nor from a run that broke."""
    record = _evidence.latest(f"{scenario.id}/{experiment.id}")
    used = scenario.used(experiment.id)
    wanted = {name: values[name] for name in used}
    run_it = f"Run the cell '{experiment.title}'"
    if record is None:
        return "needs-run", None, f"{run_it} (it has not run with {_describe_values(wanted, used)})"
    if record.params != wanted:
        differ = [name for name in used if record.params.get(name, object()) != wanted[name]]
        ran = _describe_values({**wanted, **record.params}, differ)
        return "needs-run", record, (f"{run_it} (it ran with {ran}; the form now says "
                                     f"{_describe_values(wanted, differ)})")
    if record.status == "failed":
        return "failed", record, f"experiment failed: {record.error}"
    if record.status != "done":
        where = f"execution {record.execution_id}" if record.execution_id else "its last execution"
        return "needs-run", record, f"{run_it} again (its last run, {where}, did not finish)"
    return "measured", record, None


def run(scenario_id: str, params: Optional[Dict[str, Any]] = None,
        experiments: Optional[List[str]] = None) -> dict:
    """The verdicts of a scenario: ``{scenario, title, source, deviceMode, params, experiments, claims}``.

    An experiment recorded by its cell (``Experiment.evidence``) is read from
    the evidence registry (:mod:`mgpulab_scenarios.evidence`): the latest run
    of its cell, if it ran with the values given here; otherwise its claims
    get no verdict but status "needs-run" and a sentence naming the cell to
    run. Each claim: ``{id, quote, experiment, verdict, status, explanation,
    evidence, numbers, run}`` — ``run`` names the cell and execution the
    numbers came from and the values they ran with; ``numbers`` is the
    evidence flattened to ``{label, value, source?}`` scalars, those the
    verdict read first (see :mod:`mgpulab_scenarios.report`). Nothing is
    measured here: :mod:`mgpulab_scenarios.headless` runs the cells first when
    there is no notebook.
    """
    scenario = get(scenario_id)
    values = scenario.validate(params)
    from .common import mode_label
    from .report import call_tracked, numbers, spreads
    n = next((values[k] for k in ("devices", "world_size") if k in values), 1)
    needed = {claim.experiment for claim in scenario.claims}
    results = []
    found: Dict[str, dict] = {}
    for exp in scenario.experiments:
        if experiments is not None and exp.id not in experiments:
            continue
        entry: Dict[str, Any] = {"id": exp.id, "title": exp.title, "variants": list(exp.variants),
                                 "needed": exp.id in needed}
        status, record, why = _lookup(scenario, exp, values)
        measured = status == "measured"
        entry.update(status=status, seconds=record.seconds if measured or status == "failed" else 0.0,
                     evidence=record.evidence if measured else {},
                     error=record.error if status == "failed" else None,
                     run=record.describe() if record is not None else None, why=why,
                     sources=record.sources if measured else {})
        found[exp.id] = entry
        results.append(entry)
    claims = []
    for claim in scenario.claims:
        if claim.experiment not in found:
            continue
        entry = found[claim.experiment]
        ev = entry["evidence"]
        reads: list = []
        status = entry["status"]
        if status in ("needs-run", "failed"):  # nothing ran with these values, or the run broke: no verdict
            verdict, explanation = None, entry["why"]
        elif not ev:  # the experiment raised: no verdict rather than a made-up one
            verdict, explanation, status = None, "experiment failed: no evidence (see the experiment's error)", "failed"
        else:
            try:  # note which evidence the verdict reads: those numbers are shown first
                outcome, reads = call_tracked(claim.verdict, ev)
            except Exception:  # noqa: BLE001 - the plain call below says what went wrong
                outcome, reads = claim.verdict(ev), []
            verdict, explanation = check_verdict(outcome)
        claims.append({"id": claim.id, "quote": claim.quote, "experiment": claim.experiment,
                       "verdict": verdict, "status": status, "explanation": explanation, "evidence": ev,
                       "numbers": numbers(ev, reads, sources=entry["sources"]),
                       "spreads": spreads(ev, reads),
                       "run": entry["run"] if status in ("measured", "failed") else None})
    return {"scenario": scenario.id, "title": scenario.title, "source": scenario.source,
            "deviceMode": f"{mode_label(n, 'DataParallel', values)}; DDP: {mode_label(n, 'DDP', values)}"
            if n > 1 else mode_label(1, "DataParallel", values),
            "params": values, "experiments": results, "claims": claims}


def _judge_steps_as_they_end() -> None:
    """In the lab kernel, each experiment cell's claims are judged when it ends (see :mod:`.step_verdicts`)."""
    from . import step_verdicts
    step_verdicts.install(SCENARIOS, run)


_judge_steps_as_they_end()
