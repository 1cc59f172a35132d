"""The pieces a scenario is authored from: its steps (markdown, a "predict first" question, templated code
cells), its experiments (what each experiment cell measures) and its claims (a quoted sentence and the
function that judges it).

Separate from the model (:mod:`.core`) that assembles them: the definition checks read these pieces
without the model, and the model adds the behaviour (validation, templates, the notebook's view).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple

from .vocabulary import Evidence, Verdict


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
