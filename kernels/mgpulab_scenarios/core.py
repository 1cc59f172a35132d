"""Scenario model: a scenario's steps, templated cells, experiments and claims, and the host it runs on.

A scenario is data: parameters (typed, ranged: :mod:`.parameters`), steps
(markdown, an optional "predict first" question, templated code cells),
experiments (one per experiment cell: the function that turns what the cell
recorded into a JSON-able evidence dict, see :mod:`mgpulab_scenarios.evidence`)
and claims (an article's sentence quoted verbatim plus a ``verdict(evidence)``
function that computes holds | does-not-hold | partly | inconclusive from the
run's own numbers). The pieces are :mod:`.parts`; the definition is checked
when it is built (:mod:`.definition_checks`).

Templates use ``{{name}}`` placeholders, filled with validated values as
inert literals by :mod:`.rendering`. A template is a real Python file in
``templates/`` (so the linter and the type checker read it), where a
placeholder is written ``PARAM.name`` (typed in ``templates/placeholders.py``):
:func:`load_template` reads it as ``{{name}}`` text, without its first line
(the import of ``PARAM``). Device counts are bounded by what this host serves
(:func:`device_limit`, :class:`DeviceLimit`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .definition_checks import check_definition
from .parameters import Parameter, ParameterError
from .parts import Cell, Claim, Experiment, Step
from .rendering import PLACEHOLDER, render_text, verdicts_template
from .vocabulary import (INTRO_CELL, STATUSES, VERDICTS, VERDICTS_ABOUT_CELL, VERDICTS_CELL, Evidence, Verdict,
                         check_verdict)
from .wording import clip, fmt, short_repr

# The model's own names, and those of its pieces (parameters, rendering, vocabulary, wording) that scenario
# modules and tests import from here.
__all__ = ["Cell", "Step", "Claim", "Experiment", "Scenario", "Host", "this_host", "device_limit", "DeviceLimit",
           "at_most_devices", "PLACEMENT", "load_template", "TEMPLATES_DIR", "TEMPLATE_HEADER", "sequence_max",
           "Parameter", "ParameterError", "render_text", "Evidence", "Verdict", "VERDICTS", "STATUSES",
           "VERDICTS_CELL", "INTRO_CELL", "VERDICTS_ABOUT_CELL", "check_verdict", "clip", "fmt", "short_repr"]

TEMPLATES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
TEMPLATE_HEADER = ("from mgpulab_scenarios.templates.placeholders import PARAM"
                   "  # the template's placeholders: this line is not rendered\n")
_PARAM_REFERENCE = re.compile(r"\bPARAM\.([A-Za-z_][A-Za-z0-9_]*)\b")


@dataclass
class Scenario:
    id: str
    title: str
    source: str  # article file name in shared/seeds
    summary: str
    parameters: Tuple[Parameter, ...]
    steps: Tuple[Step, ...]
    experiments: Tuple[Experiment, ...]
    claims: Tuple[Claim, ...]
    source_title: str = ""  # the article's title (the seeds folder is not there at run time)
    constraints: Tuple[Callable[[Dict[str, Any]], Optional[str]], ...] = ()
    # Per step with a question, parallel to its choices: choice i is what a run measured when each claim
    # named in outcomes[i] got one of the verdicts listed there ({}: no run shows it). The prediction is
    # then judged right or wrong beside those claims only (the question's claims become these).
    outcomes: Dict[str, Tuple[Dict[str, Tuple[str, ...]], ...]] = field(default_factory=dict)
    _params: Dict[str, Parameter] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._params = {p.name: p for p in self.parameters}
        check_definition(self.id, self.parameters, self.steps, self.experiments, self.claims, self.outcomes,
                         self.markdown_ids())  # a definition bug fails at import

    def parameter(self, name: str) -> Parameter:
        return self._params[name]

    def effective(self, parameter: Parameter) -> Parameter:
        """The parameter as this host allows it: device counts capped at :func:`device_limit`
        (for placement 'auto'; another placement is checked by :class:`DeviceLimit` when chosen)."""
        if not any(isinstance(c, DeviceLimit) and parameter.name in c.names for c in self.constraints):
            return parameter
        limit = device_limit()
        if parameter.min is not None and limit < parameter.min:
            return parameter  # nothing fits: validation says so
        top = limit if parameter.max is None else min(parameter.max, limit)
        return replace(parameter, max=top, default=min(parameter.default, top))

    def parameters_here(self) -> List[Parameter]:
        return [self.effective(p) for p in self.parameters]

    def validate(self, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        params = dict(params or {})
        unknown = sorted((name for name in params if name not in self._params), key=str)
        if unknown:
            shown = ", ".join(name if isinstance(name, str) and len(name) <= 40 and name.isprintable()
                              else short_repr(name, 40) for name in unknown[:5])
            if len(unknown) > 5:
                shown += f" and {len(unknown) - 5} more"
            raise ParameterError(f"unknown parameter(s) for scenario {self.id!r}: {shown} "
                                 f"(known: {', '.join(self._params)})")
        values = {p.name: p.check(params[p.name]) if p.name in params else self.effective(p).default
                  for p in self.parameters}
        for constraint in self.constraints:
            problem = constraint(values)
            if problem:
                raise ParameterError(problem)
        return values

    def cell(self, cell_id: str) -> Cell:
        for step in self.steps:
            for cell in step.cells:
                if cell.id == cell_id:
                    return cell
        raise KeyError(f"scenario {self.id!r} has no cell {cell_id!r}")

    def markdown_ids(self) -> List[str]:
        """The templated markdown cells, in notebook order: the intro, each step's text (``about-<step>``) and
        explanation (``explain-<step>``, when it has one), and the verdicts cell's heading."""
        ids = [INTRO_CELL]
        for step in self.steps:
            ids.append(f"about-{step.id}")
            if step.explanation:
                ids.append(f"explain-{step.id}")
        return ids + [VERDICTS_ABOUT_CELL]

    def has_cell(self, cell_id: str) -> bool:
        return cell_id == VERDICTS_CELL or any(c.id == cell_id for s in self.steps for c in s.cells)

    def cell_ids(self) -> List[str]:
        """Every templated cell of the scenario, in notebook order, the verdicts cell last."""
        return [c.id for s in self.steps for c in s.cells] + [VERDICTS_CELL]

    def cell_source(self, cell_id: str) -> str:
        """The cell's template text (the verdicts cell's uses every parameter)."""
        if cell_id == VERDICTS_CELL:
            return verdicts_template(self.id, [p.name for p in self.parameters])
        return self.cell(cell_id).template

    def experiment(self, experiment_id: str) -> Experiment:
        for experiment in self.experiments:
            if experiment.id == experiment_id:
                return experiment
        raise KeyError(f"scenario {self.id!r} has no experiment {experiment_id!r}")

    def used(self, cell_id: str) -> List[str]:
        """Names of the parameters the cell's template uses, in the scenario's order."""
        used = set(PLACEHOLDER.findall(self.cell_source(cell_id)))
        return [p.name for p in self.parameters if p.name in used]

    def fields(self, cell_id: str) -> List[dict]:
        """``Parameter.to_dict()`` of the parameters the cell's template uses, in the scenario's order."""
        used = set(PLACEHOLDER.findall(self.cell_source(cell_id)))
        return [p.to_dict() for p in self.parameters_here() if p.name in used]

    def question_dict(self, step: Step, values: Dict[str, Any]) -> Optional[dict]:
        """The step's "predict first" question, filled in, as a template carries it (None without one)."""
        if step.question is None:
            return None
        text, choices = self.question(step, values)
        question: Dict[str, Any] = {"id": f"{self.id}/{step.id}", "text": text, "choices": choices,
                                    "claims": list(step.claims)}
        outcomes = self.outcomes.get(step.id)
        if outcomes:
            question["claims"] = list(dict.fromkeys(claim for outcome in outcomes for claim in outcome))
            question["outcomes"] = [{claim: list(verdicts) for claim, verdicts in outcome.items()}
                                    for outcome in outcomes]
        return question

    def template(self, cell_id: str, params: Optional[Dict[str, Any]] = None) -> dict:
        """``{id, parameters, fields, question}`` of a templated cell, values validated.

        ``parameters`` are all the scenario's values (so changing any one
        re-renders every cell); ``question`` is the step's question on the
        step's first cell, None elsewhere and on the verdicts cell.
        """
        if not self.has_cell(cell_id):
            raise KeyError(f"scenario {self.id!r} has no cell {cell_id!r}")
        values = self.validate(params)
        question = None
        for step in self.steps:
            if step.cells and step.cells[0].id == cell_id:
                question = self.question_dict(step, values)
        return {"id": f"{self.id}/{cell_id}", "parameters": values, "fields": self.fields(cell_id),
                "question": question}

    def render_cell(self, cell_id: str, params: Optional[Dict[str, Any]] = None) -> dict:
        """``{source, template}``: the cell's Python source with validated literals, and its template."""
        template = self.template(cell_id, params)
        return {"source": render_text(self.cell_source(cell_id), template["parameters"]), "template": template}

    def question(self, step: Step, values: Optional[Dict[str, Any]] = None) -> Tuple[Optional[str], List[str]]:
        """The step's "predict first" question and choices with validated parameter values filled in."""
        values = self.validate(values)
        if step.question is None:
            return None, []
        return step.question.format(**values), [choice.format(**values) for choice in step.choices]

    def to_dict(self, values: Optional[Dict[str, Any]] = None) -> dict:
        """JSON-able description; questions are filled in with ``values`` (defaults when None)."""
        questions = {s.id: self.question(s, values) for s in self.steps}
        return {
            "id": self.id, "title": self.title, "source": self.source, "sourceTitle": self.source_title,
            "summary": self.summary,
            "parameters": [p.to_dict() for p in self.parameters_here()],
            "steps": [{"id": s.id, "markdown": s.markdown, "question": questions[s.id][0],
                       "choices": questions[s.id][1],
                       "claims": list(s.claims),
                       "cells": [{"templateId": f"{self.id}/{c.id}", "template": c.template} for c in s.cells]}
                      for s in self.steps],
            "experiments": [{"id": e.id, "title": e.title, "variants": list(e.variants),
                             "metrics": list(e.metrics), "chart": e.chart} for e in self.experiments],
            "claims": [{"id": c.id, "quote": c.quote, "experiment": c.experiment} for c in self.claims],
        }


def load_template(name: str) -> str:
    """``templates/<name>.py`` as template text: its header line dropped, ``PARAM.x`` as ``{{x}}``.

    Read once, when a scenario module is imported; rendering works on the text.
    """
    path = os.path.join(TEMPLATES_DIR, f"{name}.py")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if not text.startswith(TEMPLATE_HEADER):
        raise ValueError(f"{path}: a template starts with the line {TEMPLATE_HEADER.strip()!r}")
    body = text[len(TEMPLATE_HEADER):]
    if "{{" in body or "}}" in body or re.search(r"\bPARAM\b", _PARAM_REFERENCE.sub("", body)):
        raise ValueError(f"{path}: write a placeholder as PARAM.<name>, and PARAM nowhere else ('{{{{' would be one too)")
    return _PARAM_REFERENCE.sub(r"{{\1}}", body)


PLACEMENT = Parameter(
    "placement", "choice", "auto",
    "where the devices run — auto: the GPUs (one per device when there are enough, else the devices share "
    "them: virtual devices on CUDA streams for DataParallel, gloo ranks for DDP), the CPU emulation on a host "
    "without a GPU; cpu: the CPU emulation even on a GPU host", choices=("auto", "cpu"))


@dataclass(frozen=True)
class Host:
    """The facts the device plan needs about the host that validates (and runs) a scenario."""

    gpus: int
    cores: int


def this_host() -> Host:
    from mgpulab import devices
    return Host(devices.cuda_device_count(), devices.host_cores())


def device_limit(placement: str = "auto") -> int:
    """Devices a scenario may ask for here with ``placement`` (the plan's bound, for both engines)."""
    from mgpulab import plan
    host = this_host()
    top = plan.largest("DataParallel", host.gpus, placement=placement, cores=host.cores)
    assert top is not None
    return top


class DeviceLimit:
    """Constraint: the named device counts are ones the device plan serves here, for DataParallel
    and for DDP, with the scenario's ``placement``; the refusal names the largest value that works.

    A scenario also lowers those parameters' defaults and maxima to the limit
    (see :meth:`Scenario.effective`), so its defaults are valid on any host.
    """

    def __init__(self, *names: str) -> None:
        self.names = names

    def __call__(self, values: Dict[str, Any]) -> Optional[str]:
        from mgpulab import plan
        host = this_host()
        where = values.get("placement", "auto")
        for name in self.names:
            for engine in ("DataParallel", "DDP"):
                try:
                    plan.plan(values[name], engine, host.gpus, placement=where, cores=host.cores, limits=True)
                except plan.PlanError as err:
                    return (f"parameter {name!r} = {values[name]} exceeds the devices available here: {err}; "
                            f"allowed range [1, {err.largest}]")
        return None


def at_most_devices(*names: str) -> DeviceLimit:
    return DeviceLimit(*names)


def sequence_max(values: Sequence[float]) -> float:
    return max(values) if values else 0.0
