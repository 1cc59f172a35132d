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

This module is the recording and its registry (process state: the active run, the latest attempt per
cell); how one run's series are read into numbers with their sources is :mod:`.observed`.
"""
from __future__ import annotations

import contextlib
import datetime
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from mgpulab import _launch_events
from mgpulab.outcome import describe as describe_outcome
from mgpulab_wire import frames

from . import stats
# The reading of a run's series lives in .observed; these names stay importable from here, as before.
from .observed import Evidence, EvidenceFunction, Measured, Observed, Source, plain

__all__ = ["Evidence", "EvidenceFunction", "Measured", "Observed", "Source", "Execution", "current_execution",
           "executing", "Record", "latest", "clear", "set_resolver", "start", "Run", "unexpected_launch",
           "cell_ended"]

MAX_MESSAGES = 200_000  # a recording that never finishes must not grow without bound


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
        evidence, sources = plain(raw)
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
