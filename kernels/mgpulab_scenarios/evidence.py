"""What each experiment cell measured, recorded by the cell itself, for the verdicts cell to read.

An experiment cell starts a recording with the parameter values it runs with,
runs its experiment (logging metrics for its charts as usual) and finishes
the recording with the facts it observed::

    run = evidence.start("dp-basics/scaling", batch_size=64, devices=4, ...)
    ...                          # lab.log / lab.StepTimer / lab.launch(..., emit=True)
    run.add_ranks(result)        # a launch's ranks: the metric messages they sent
    run.finish(gathered_rows=64) # facts that are not metrics

While it records, every metric message this process sends is seen through a
frames tap (:func:`mgpulab_wire.frames.add_tap`): exactly what the charts get.
A launch's ranks send their frames from their own processes, so the rank
functions return the messages they sent and :meth:`Run.add_ranks` adds them.
:meth:`Run.finish` computes the experiment's evidence with the scenario's
function for that cell (``Experiment.evidence``) from those series
(:class:`Observed`, the charts' statistics from :mod:`mgpulab_scenarios.stats`)
and the facts, and records it in this process's registry with the cell id and
execution id the kernel ran it as (:func:`current_execution`), the parameter
values, the time, and, for each number read from a metric series, where it
came from (:class:`Source`: variant tag, metric, ranks, steps, statistic), so
a test can recompute it from the stored series of that execution.

The registry keeps the latest attempt per template id. An attempt whose run
broke is ``failed``, with what broke: the cell raised (told at the end of
the cell, :func:`cell_ended`, by the catalog's end-of-cell hook in the lab
kernel and by the headless runner), its evidence could not be computed, or one of
its launches ended in a way the experiment does not provoke on purpose
(``Experiment.provokes``; every ``lab.launch`` made while it records is
heard, :mod:`mgpulab._launch_events`). Its claims then get "experiment
failed" with that error, never a verdict. An attempt that never finished
because it was interrupted stays ``running``: the verdicts cell then says to
run the cell again rather than read older numbers.
"""
from __future__ import annotations

import contextlib
import datetime
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from mgpulab import _launch_events
from mgpulab.outcome import describe as describe_outcome
from mgpulab_wire import frames

from . import stats
from .core import fmt

MAX_MESSAGES = 200_000  # a recording that never finishes must not grow without bound


# -- where a number came from ------------------------------------------------------------------

@dataclass(frozen=True)
class Source:
    """How to recompute a number from a cell's stored metric series.

    ``statistic``: ``mean`` (the charts' step mean per rank, then the mean over
    ``ranks``), ``peak`` (largest value over ranks and all steps), ``first`` /
    ``last`` / ``value`` (the value at the first, last or only step of
    ``steps``, averaged over ``ranks``), ``min`` / ``median`` / ``max`` (of the
    per-step values — each the mean over ``ranks`` at that step — over
    ``steps``, the warm-up left out as in means), ``speedup`` (the speed-up
    chart's value of ``tag`` against ``baseline``, on ``basis`` "sample" or
    "step").
    """

    tag: str
    metric: str
    ranks: Tuple[int, ...]
    steps: Tuple[int, ...]
    statistic: str
    baseline: Optional[str] = None
    basis: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"tag": self.tag, "metric": self.metric, "ranks": list(self.ranks),
                               "steps": list(self.steps), "statistic": self.statistic}
        if self.baseline is not None:
            out["baseline"] = self.baseline
            out["basis"] = self.basis
        return out


class Measured(float):
    """A number read from the cell's own metric series, carrying its :class:`Source`.

    Arithmetic on it gives a plain float: a derived number has no single source.
    """

    source: Source

    def __new__(cls, value: float, source: Source) -> "Measured":
        obj = super().__new__(cls, value)
        obj.source = source
        return obj

    def __reduce__(self) -> Any:
        return (Measured, (float(self), self.source))


# -- reading a cell's series ------------------------------------------------------------------

class Observed:
    """What a cell saw: its parameter values, its metric series and its facts; statistics as the charts'."""

    def __init__(self, params: Mapping[str, Any], metrics: stats.MetricSet, facts: Mapping[str, Any]) -> None:
        self.params = dict(params)
        self.metrics = metrics
        self.facts = dict(facts)

    def tags(self) -> List[str]:
        return self.metrics.tags()

    def ranks(self, tag: str, metric: str) -> List[int]:
        return self.metrics.ranks(tag, metric)

    def _series(self, tag: str, metric: str, ranks: Optional[Sequence[int]]) -> List[Tuple[int, stats.Series]]:
        chosen = self.ranks(tag, metric) if ranks is None else list(ranks)
        out = []
        for rank in chosen:
            series = self.metrics.get(tag, rank, metric)
            if series is not None and len(series):
                out.append((rank, series))
        return out

    def mean(self, tag: str, metric: str, ranks: Optional[Sequence[int]] = None) -> Optional[Measured]:
        """The charts' mean over steps of each rank, averaged over ``ranks`` (default: every rank that logged it)."""
        means: List[float] = []
        used: List[int] = []
        steps: Set[int] = set()
        for rank, series in self._series(tag, metric, ranks):
            value = stats.step_mean(series)
            if value is None:
                continue
            means.append(value)
            used.append(rank)
            steps.update(s for s, _ in stats.used_points(series))
        if not means:
            return None
        return Measured(sum(means) / len(means), Source(tag, metric, tuple(used), tuple(sorted(steps)), "mean"))

    def peak(self, tag: str, metric: str, ranks: Optional[Sequence[int]] = None) -> Optional[Measured]:
        best: Optional[float] = None
        used: List[int] = []
        steps: Set[int] = set()
        for rank, series in self._series(tag, metric, ranks):
            value = stats.peak(series)
            if value is None:
                continue
            used.append(rank)
            steps.update(series.steps)
            best = value if best is None else max(best, value)
        if best is None:
            return None
        return Measured(best, Source(tag, metric, tuple(used), tuple(sorted(steps)), "peak"))

    def _at(self, tag: str, metric: str, ranks: Optional[Sequence[int]], pick: str) -> Optional[Measured]:
        found = self._series(tag, metric, ranks)
        if not found:
            return None
        steps = sorted({s for _, series in found for s, v in series.points if v is not None})
        if not steps:
            return None
        step = steps[0] if pick == "first" else steps[-1]
        values = [v for _, series in found for s, v in series.points if s == step and v is not None]
        used = tuple(rank for rank, series in found if any(s == step and v is not None for s, v in series.points))
        statistic = "value" if len(steps) == 1 else pick
        return Measured(sum(values) / len(values), Source(tag, metric, used, (step,), statistic))

    def first(self, tag: str, metric: str, ranks: Optional[Sequence[int]] = None) -> Optional[Measured]:
        """The value at the first step that has one (mean over ``ranks`` there)."""
        return self._at(tag, metric, ranks, "first")

    def last(self, tag: str, metric: str, ranks: Optional[Sequence[int]] = None) -> Optional[Measured]:
        """The value at the last step that has one (mean over ``ranks`` there)."""
        return self._at(tag, metric, ranks, "last")

    def values(self, tag: str, metric: str, ranks: Optional[Sequence[int]] = None,
               warmup: bool = True) -> List[Tuple[int, float]]:
        """Per step, the mean over ``ranks`` of the values there; ``warmup=False`` leaves out
        the first step of each series as means do."""
        by_step: Dict[int, List[float]] = {}
        for _, series in self._series(tag, metric, ranks):
            points: Sequence[Tuple[int, Optional[float]]] = series.points
            if not warmup:
                points = stats.used_points(series)
            for s, v in points:
                if v is not None:
                    by_step.setdefault(s, []).append(v)
        return [(s, sum(vs) / len(vs)) for s, vs in sorted(by_step.items())]

    def spread(self, tag: str, metric: str, ranks: Optional[Sequence[int]] = None) -> Optional[Dict[str, Any]]:
        """``{n, min, median, max, mean}`` of the per-step values after the warm-up (see :meth:`values`);
        min/median/max/mean are :class:`Measured`. None without values."""
        found = self._series(tag, metric, ranks)
        points = self.values(tag, metric, ranks, warmup=False)
        if not points:
            return None
        spread = stats.spread([v for _, v in points])
        assert spread is not None
        used = tuple(rank for rank, _ in found)
        steps = tuple(s for s, _ in points)
        mean = self.mean(tag, metric, ranks)
        return {"n": spread.n,
                "min": Measured(spread.min, Source(tag, metric, used, steps, "min")),
                "median": Measured(spread.median, Source(tag, metric, used, steps, "median")),
                "max": Measured(spread.max, Source(tag, metric, used, steps, "max")),
                "mean": mean if mean is not None else Measured(spread.mean, Source(tag, metric, used, steps, "mean"))}

    def speedup(self, tag: str, baseline: str) -> Optional[Measured]:
        value = stats.speedup(self.metrics, tag, baseline)
        timed = stats.variant_time(self.metrics, tag)
        if value is None or timed is None:
            return None
        return Measured(value, Source(tag, "step_ms", timed.ranks, timed.steps, "speedup", baseline,
                                      stats.speedup_basis(self.metrics)))


def spread_text(s: Optional[Mapping[str, Any]], unit: str = "ms") -> str:
    """An evidence spread as a verdict sentence says it: mean, then median, min, max and n."""
    if not s:
        return "no timing"
    return f"{fmt(s['mean'])} {unit} (median {fmt(s['median'])}, min {fmt(s['min'])}, max {fmt(s['max'])}, n={s['n']})"


def compare_spreads(a: Optional[Mapping[str, Any]], b: Optional[Mapping[str, Any]],
                    unit: str = "ms") -> Optional[stats.Comparison]:
    """The noise rule (:func:`stats.compare`) on two evidence spreads; None when either has no timing."""
    sa, sb = as_spread(a), as_spread(b)
    return stats.compare(sa, sb, unit) if sa is not None and sb is not None else None


def as_spread(value: Optional[Mapping[str, Any]]) -> Optional[stats.Spread]:
    """An evidence spread dict (``Observed.spread``) as a :class:`stats.Spread`."""
    if not value:
        return None
    return stats.Spread(int(value["n"]), float(value["min"]), float(value["median"]), float(value["max"]),
                        float(value["mean"]))


# -- which execution ------------------------------------------------------------------------

_override = threading.local()


@dataclass(frozen=True)
class Execution:
    cell_id: Optional[str]
    execution_id: Optional[str]
    count: Optional[int]


def current_execution() -> Execution:
    """The cell id and execution id this code runs as: the headless runner's (:func:`executing`), else the
    lab kernel's (from the execute request), else unknown (None)."""
    mine = getattr(_override, "execution", None)
    if mine is not None:
        return mine
    kernel = sys.modules.get("mgpulab_kernel.kernel")
    context = kernel.current_execution() if kernel is not None else None
    if context is not None:
        return Execution(context.cell_id, context.execution_id, context.count)
    return Execution(None, None, None)


@contextlib.contextmanager
def executing(cell_id: str, execution_id: str, count: Optional[int] = None) -> Iterator[None]:
    """Run a block as cell ``cell_id``'s execution ``execution_id`` (the headless runner's cells)."""
    previous = getattr(_override, "execution", None)
    _override.execution = Execution(cell_id, execution_id, count)
    try:
        yield
    finally:
        _override.execution = previous


# -- the registry ---------------------------------------------------------------------------

@dataclass
class Record:
    """One attempt of an experiment cell: ``status`` "running" until it finished, then "done", or "failed"
    (``error`` says what broke)."""

    template_id: str
    params: Dict[str, Any]
    cell_id: Optional[str]
    execution_id: Optional[str]
    count: Optional[int]
    started_at: str
    status: str = "running"
    finished_at: Optional[str] = None
    seconds: float = 0.0  # from start to finish
    evidence: Dict[str, Any] = field(default_factory=dict)
    sources: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    error: Optional[str] = None
    launches: List[Dict[str, Any]] = field(default_factory=list)  # {outcome, status, summary} of each launch

    def describe(self) -> Dict[str, Any]:
        """The JSON a report names the run by."""
        return {"templateId": self.template_id, "cellId": self.cell_id, "executionId": self.execution_id,
                "count": self.count, "recordedAt": self.finished_at or self.started_at, "params": dict(self.params)}


_registry: Dict[str, Record] = {}
_lock = threading.Lock()


def latest(template_id: str) -> Optional[Record]:
    """The latest attempt of ``template_id`` in this process (None if the cell never ran here)."""
    with _lock:
        return _registry.get(template_id)


def clear() -> None:
    """Forget every recording (a fresh kernel has none)."""
    with _lock:
        _registry.clear()


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- a recording ----------------------------------------------------------------------------

_active: Optional["Run"] = None
Resolver = Callable[[str], Tuple[Any, List[str]]]
_resolver: Optional[Resolver] = None


def set_resolver(resolver: Resolver) -> None:
    """How a template id becomes (its experiment, the parameters its cell uses): the catalog's
    ``experiment_of``, set when the package is imported (this module does not import the catalog)."""
    global _resolver
    _resolver = resolver


def start(template_id: str, **params: Any) -> "Run":
    """Start recording cell ``<scenario>/<cell>`` run with ``params`` (the values of the placeholders it uses)."""
    global _active
    if _active is not None:  # an earlier cell that never finished: stop feeding it
        _active._stop()
    run = Run(template_id, params)
    _active = run
    return run


class Run:
    """One recording: a frames tap collecting metric messages, then :meth:`finish`."""

    def __init__(self, template_id: str, params: Mapping[str, Any]) -> None:
        if _resolver is None:
            raise RuntimeError("import mgpulab_scenarios before recording evidence")
        self.experiment, used = _resolver(template_id)
        given, wanted = set(params), set(used)
        if given != wanted:
            raise ValueError(f"evidence for {template_id} must name exactly the parameters its cell uses: "
                             f"missing {sorted(wanted - given)}, unexpected {sorted(given - wanted)}")
        self.template_id = template_id
        self.params = dict(params)
        self.messages: List[Mapping[str, Any]] = []
        where = current_execution()
        self.record = Record(template_id, dict(params), where.cell_id, where.execution_id, where.count, _now())
        with _lock:
            _registry[template_id] = self.record
        self._started = time.perf_counter()
        self._tapping = True
        frames.add_tap(self._tap)
        self._stop_listening = _launch_events.listen(self._launched)

    def _launched(self, result: Any) -> None:
        self.record.launches.append({"outcome": result.outcome, "status": result.status,
                                     "summary": str(result.summary)})

    def _tap(self, message: Mapping[str, Any]) -> None:
        if message.get("type") == "metric" and len(self.messages) < MAX_MESSAGES:
            self.messages.append(message)

    def _stop(self) -> None:
        if self._tapping:
            frames.remove_tap(self._tap)
            self._stop_listening()
            self._tapping = False

    def _fail(self, error: str) -> None:
        self.record.status, self.record.error = "failed", error
        self.record.finished_at = _now()
        self.record.seconds = round(time.perf_counter() - self._started, 3)

    def add_ranks(self, result: Any) -> None:
        """Add the metric messages a launch's ranks sent (each rank function returns them as ``series``)."""
        for value in getattr(result, "results", None) or []:
            if isinstance(value, dict):
                for message in value.get("series") or []:
                    self._tap(message)

    def finish(self, **facts: Any) -> Dict[str, Any]:
        """Compute and record the evidence; returns it (plain JSON-able values)."""
        global _active
        metrics_module = sys.modules.get("mgpulab.metrics")
        if metrics_module is not None:
            metrics_module.flush_deferred(True)  # CUDA values still on their way to a frame
        self._stop()
        if _active is self:
            _active = None
        observed = Observed(self.params, stats.MetricSet(self.messages), facts)
        broke = unexpected_launch(self.record.launches, self.experiment.provokes)
        try:
            raw = self.experiment.evidence(observed)
        except Exception as error:
            self._fail(broke or f"its evidence could not be computed: {type(error).__name__}: {error}")
            raise
        evidence, sources = _plain(raw)
        self.record.evidence, self.record.sources = evidence, sources
        self.record.finished_at = _now()
        self.record.seconds = round(time.perf_counter() - self._started, 3)
        self.record.status = "done" if broke is None else "failed"
        self.record.error = broke
        where = self.record.execution_id or "an unnamed execution"
        if broke is None:
            print(f"[evidence] recorded for the verdicts: {self.experiment.title} ({where})")
        else:
            print(f"[evidence] experiment failed, no verdicts from this run: {broke} ({where})")
        return evidence


def unexpected_launch(launches: Sequence[Mapping[str, Any]], provokes: Sequence[str]) -> Optional[str]:
    """What broke, when a launch ended in a way the experiment does not provoke on purpose (None: none did)."""
    for launch in launches:
        outcome = launch["outcome"]
        if outcome == "ok" or outcome in provokes:
            continue
        expected = (" (it provokes " + " or ".join(describe_outcome(o) for o in provokes) + ", not this)"
                    if provokes else "")
        return f"a launch ended in {describe_outcome(outcome)}{expected}: {launch['summary']}"
    return None


def cell_ended(execution_id: Optional[str], status: str, error: Optional[str]) -> None:
    """The cell of execution ``execution_id`` ended (status ok | error | interrupted). The recording it
    started stops listening, and one that raised before it finished is failed with the error; an
    interrupted one stays unfinished (the verdicts cell asks to run it again)."""
    global _active
    run = _active
    if run is None or run.record.execution_id != execution_id:
        return
    run._stop()
    _active = None
    if status == "error" and run.record.status == "running":
        run._fail(f"the cell raised {error}" if error else "the cell raised an error")


def _plain(value: Any) -> Tuple[Any, Dict[str, Dict[str, Any]]]:
    """Evidence with :class:`Measured` numbers as plain floats, and ``{label: {value, ...source}}`` for them."""
    sources: Dict[str, Dict[str, Any]] = {}

    def walk(obj: Any, label: str) -> Any:
        if isinstance(obj, Measured):
            sources[label] = {"value": float(obj), **obj.source.to_dict()}
            return float(obj)
        if isinstance(obj, dict):
            return {str(k): walk(v, f"{label}.{k}" if label else str(k)) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [walk(v, f"{label}[{i}]") for i, v in enumerate(obj)]
        if isinstance(obj, float):
            return float(obj)
        return obj

    return walk(value, ""), sources


Evidence = Dict[str, Any]
EvidenceFunction = Callable[[Observed], Evidence]
