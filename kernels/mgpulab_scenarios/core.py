"""Scenario model: typed parameters, templated cells, claims with verdict functions.

A scenario is data: parameters (typed, ranged), steps (markdown, an optional
"predict first" question, templated code cells), experiments (one per
experiment cell: the function that turns what the cell recorded into a
JSON-able evidence dict, see :mod:`mgpulab_scenarios.evidence`) and claims
(an article's sentence quoted verbatim plus a ``verdict(evidence)`` function
that computes holds | does-not-hold | partly | inconclusive from the run's own
numbers).

Templates use ``{{name}}`` placeholders. :func:`render_text` inserts each
validated value as a Python literal (``repr`` of an int, float, bool, or a
string that is one of the parameter's allowed choices), so a parameter can
never inject code; an unknown placeholder is an error.

A template is a real Python file in ``templates/`` (so the linter and the type
checker read it), where a placeholder is written ``PARAM.name`` (typed in
``templates/placeholders.py``): :func:`load_template` reads it as the
``{{name}}`` text above, without its first line (the import of ``PARAM``).
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from mgpulab.outcome import OUTCOMES

VERDICTS = ("holds", "does-not-hold", "partly", "inconclusive")
"""``inconclusive``: the measurement cannot decide (the spread is as large as the effect, or this host
cannot show it); the explanation gives the numbers and what to change."""
STATUSES = ("measured", "needs-run", "failed")
"""A claim's status in a report: ``measured`` (it has a verdict), ``needs-run`` (its experiment cell has not
run with the values shown: no verdict, the explanation names the cell), ``failed`` (its experiment failed)."""
Evidence = Dict[str, Any]
Verdict = Tuple[str, str]

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

TEMPLATES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
TEMPLATE_HEADER = ("from mgpulab_scenarios.templates.placeholders import PARAM"
                   "  # the template's placeholders: this line is not rendered\n")
_PARAM_REFERENCE = re.compile(r"\bPARAM\.([A-Za-z_][A-Za-z0-9_]*)\b")


class ParameterError(ValueError):
    """A parameter value is missing, of the wrong type, or out of range."""


VERDICTS_CELL = "verdicts"  # the cell id of every scenario's last cell (reads the evidence, shows verdicts)
INTRO_CELL = "intro"  # the markdown cell id of the scenario's introduction (with its parameter table)
VERDICTS_ABOUT_CELL = "about-verdicts"  # the markdown cell above the verdicts cell


def clip(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, cut at a word boundary with an ellipsis, never mid-word."""
    text = str(text)
    if len(text) <= limit:
        return text
    cut = text[:max(0, limit - 1)]
    space = cut.rfind(" ")
    if space >= limit // 2:  # a boundary not too far back; else a very long "word" (a path) is cut
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr`` for error messages: one line, at most ``limit`` characters."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a value's repr must not break the error
        text = f"<{type(value).__name__}>"
    if len(text) > limit:
        text = text[:limit - 12] + f"… ({len(text)} chars)"
    return text


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str  # int | float | bool | choice
    default: Any
    help: str
    min: Optional[float] = None
    max: Optional[float] = None
    choices: Tuple[str, ...] = ()

    def allowed(self) -> str:
        if self.type == "bool":
            return "true or false"
        if self.type == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return f"a{'n' if self.type == 'int' else ''} {self.type} in [{self.min}, {self.max}]"

    def check(self, value: Any) -> Any:
        """The value as its Python type, or ParameterError naming the parameter and the allowed range."""
        bad = ParameterError(f"parameter {self.name!r} must be {self.allowed()}, got {short_repr(value)}")
        if self.type == "bool":
            if not isinstance(value, bool):
                raise bad
            return value
        if self.type == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise bad
            return value
        if self.type == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                else:
                    raise bad
            value = int(value)
        elif self.type == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise bad
            value = float(value)
            if not math.isfinite(value):
                raise bad
        else:  # pragma: no cover - definitions are checked at import
            raise bad
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            raise bad
        return value

    def parse(self, text: str) -> Any:
        """Parse command-line text (``name=value``) strictly, then :meth:`check` it."""
        text = text.strip()
        try:
            if self.type == "bool":
                lowered = text.lower()
                if lowered not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                value: Any = lowered in ("true", "1", "yes")
            elif self.type == "int":
                if not re.fullmatch(r"[+-]?\d+", text):
                    raise ValueError
                value = int(text)
            elif self.type == "float":
                if not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", text):
                    raise ValueError
                value = float(text)
            else:
                value = text
        except ValueError:
            raise ParameterError(f"parameter {self.name!r} must be {self.allowed()}, got {short_repr(text)}") from None
        return self.check(value)

    def to_dict(self) -> dict:
        out: Dict[str, Any] = {"name": self.name, "type": self.type, "default": self.default, "help": self.help}
        if self.type in ("int", "float"):
            out.update(min=self.min, max=self.max)
        if self.type == "choice":
            out["choices"] = list(self.choices)
        return out


@dataclass(frozen=True)
class Cell:
    """A templated code cell: ``template_id`` is global (``<scenario>/<cell>``)."""

    id: str
    template: str


@dataclass(frozen=True)
class Step:
    """A step of the scenario. ``markdown`` is what is shown before the prediction (the setup, the question's
    context); ``explanation`` is what would give the answer away: its own markdown cell, revealed after the
    verdicts of ``claims``. Both may quote parameter values as ``{{name}}`` (re-rendered with the form)."""

    id: str
    markdown: str
    cells: Tuple[Cell, ...] = ()
    question: Optional[str] = None
    choices: Tuple[str, ...] = ()
    claims: Tuple[str, ...] = ()  # claim ids this step's prediction is about
    explanation: str = ""
    # Per choice, words that would tell it when the choice's own words are too plain to look for ("yes",
    # "no", "K"): the give-away check (giveaways.py) looks for them in what is shown before predicting.
    tells: Tuple[Tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class Claim:
    id: str
    quote: str  # verbatim from the source article
    experiment: str  # id of the experiment whose evidence it reads
    verdict: Callable[[Evidence], Verdict]


@dataclass(frozen=True)
class Experiment:
    """What one experiment cell measures. ``id`` is the id of the cell that runs it; ``evidence`` computes
    the evidence from what that cell observed (:class:`mgpulab_scenarios.evidence.Observed`: its metric
    series and facts), when the cell finishes its recording.

    ``provokes``: how its launches may end on purpose besides ``ok`` (:data:`mgpulab.outcome.OUTCOMES`:
    ``hang``, ``failed:collective``…). A launch that ends any other way means the experiment failed: its
    claims get "experiment failed" with the error, never a verdict."""

    id: str
    title: str
    variants: Tuple[str, ...]
    evidence: Callable[[Any], Evidence]
    metrics: Tuple[str, ...] = ()
    chart: str = ""
    provokes: Tuple[str, ...] = ()


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
        for p in self.parameters:
            p.check(p.default)  # a definition bug fails at import
        experiments = {e.id for e in self.experiments}
        for claim in self.claims:
            assert claim.experiment in experiments, (self.id, claim.id)
        cell_ids = [cell.id for step in self.steps for cell in step.cells]
        assert len(cell_ids) == len(set(cell_ids)), (self.id, cell_ids)
        for experiment in self.experiments:  # an experiment is run (and recorded) by the cell of the same id
            assert experiment.id in cell_ids, (self.id, experiment.id)
            assert set(experiment.provokes) <= set(OUTCOMES) - {"ok"}, (self.id, experiment.id, experiment.provokes)
        assert VERDICTS_CELL not in cell_ids, (self.id, "the verdicts cell id is reserved")
        assert not set(cell_ids) & set(self.markdown_ids()), (self.id, "a code cell id is a markdown cell's")
        for step in self.steps:
            for cell in step.cells:
                for name in _PLACEHOLDER.findall(cell.template):
                    assert name in self._params, (self.id, cell.id, name)
            for name in _PLACEHOLDER.findall(step.markdown + step.explanation):
                assert name in self._params, (self.id, step.id, name)
            assert len(step.tells) in (0, len(step.choices)), (self.id, step.id, "tells: one tuple per choice")
        claim_ids = {claim.id for claim in self.claims}
        steps = {step.id: step for step in self.steps}
        for step_id, outcomes in self.outcomes.items():
            assert step_id in steps and steps[step_id].question is not None, (self.id, step_id, "outcomes of no question")
            assert len(outcomes) == len(steps[step_id].choices), (self.id, step_id, "one outcome per choice")
            for outcome in outcomes:
                for claim_id, verdicts in outcome.items():
                    assert claim_id in claim_ids and set(verdicts) <= set(VERDICTS), (self.id, step_id, claim_id)

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
            return verdicts_template(self)
        return self.cell(cell_id).template

    def experiment(self, experiment_id: str) -> Experiment:
        for experiment in self.experiments:
            if experiment.id == experiment_id:
                return experiment
        raise KeyError(f"scenario {self.id!r} has no experiment {experiment_id!r}")

    def used(self, cell_id: str) -> List[str]:
        """Names of the parameters the cell's template uses, in the scenario's order."""
        used = set(_PLACEHOLDER.findall(self.cell_source(cell_id)))
        return [p.name for p in self.parameters if p.name in used]

    def fields(self, cell_id: str) -> List[dict]:
        """``Parameter.to_dict()`` of the parameters the cell's template uses, in the scenario's order."""
        used = set(_PLACEHOLDER.findall(self.cell_source(cell_id)))
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


def literal(value: Any) -> str:
    """A validated value as Python source: only bool, int, finite float, or str."""
    if isinstance(value, bool) or isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ParameterError(f"non-finite float {value!r}")
        return repr(value)
    if isinstance(value, str):
        return repr(value)
    raise ParameterError(f"cannot render a {type(value).__name__} as a literal")


def dict_literal(values: Dict[str, Any]) -> str:
    """A flat dict of validated values as Python source."""
    return "{" + ", ".join(f"{literal(name)}: {literal(value)}" for name, value in values.items()) + "}"


def verdicts_template(scenario: "Scenario") -> str:
    """The verdicts cell: reads the evidence the experiment cells recorded with the cell's values (it never
    re-measures) and shows each claim's verdict, or which cell to run."""
    params = "{" + ", ".join(f"{literal(p.name)}: {{{{{p.name}}}}}" for p in scenario.parameters) + "}"
    return (f"import mgpulab_scenarios\n"
            f"mgpulab_scenarios.show_verdicts(mgpulab_scenarios.run({literal(scenario.id)}, {params}))\n")


def render_text(template: str, values: Dict[str, Any]) -> str:
    def sub(match: "re.Match[str]") -> str:
        name = match.group(1)
        if name not in values:
            raise ParameterError(f"template placeholder {name!r} has no parameter")
        return literal(values[name])
    return _PLACEHOLDER.sub(sub, template)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>~])")


def markdown_escape(text: str) -> str:
    """``text`` as literal markdown text: every character markdown could read as syntax backslash-escaped
    (``|`` too, so a table cell survives it), line breaks as spaces."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def table_cell(markdown: str) -> str:
    """Authored markdown as one table cell: ``|`` escaped (GFM splits cells on it, even inside a code span;
    ``\\|`` is kept as a literal ``|`` there too), line breaks as spaces. Other markdown stays markdown."""
    return re.sub(r"(?<!\\)\|", r"\\|", " ".join(str(markdown).split()))


def markdown_value(value: Any) -> str:
    """A validated value as markdown text (``True``, ``64``, ``0.05``, ``cpu``): escaped, never syntax."""
    return markdown_escape(str(value))


def render_markdown(template: str, values: Dict[str, Any]) -> str:
    """Markdown with its ``{{name}}`` placeholders replaced by the values, as escaped text."""
    def sub(match: "re.Match[str]") -> str:
        name = match.group(1)
        if name not in values:
            raise ParameterError(f"template placeholder {name!r} has no parameter")
        return markdown_value(values[name])
    return _PLACEHOLDER.sub(sub, template)


# -- helpers for verdict functions ------------------------------------------------------

def fmt(value: Any, digits: int = 3) -> str:
    if isinstance(value, float):
        if value == 0 or 1e-3 <= abs(value) < 1e6:
            return f"{value:.{digits}g}"
        return f"{value:.2e}"
    return str(value)


def check_verdict(result: Any) -> Verdict:
    verdict, explanation = result
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    return verdict, str(explanation)


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
