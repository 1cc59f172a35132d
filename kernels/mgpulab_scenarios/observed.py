"""What a cell observed, read as the charts read it, and where each number came from.

:class:`Observed` is what an experiment's evidence function gets (its parameter values, its metric series,
its facts); the numbers it returns are :class:`Measured`, each carrying its :class:`Source` so a report can
show, and a test recompute, how it was read from the stored series. :func:`plain` turns such evidence into
JSON with the sources beside it.

Separate from :mod:`mgpulab_scenarios.evidence` (the recording and the registry of runs): this is the pure
reading of one run's series, with no process state.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from . import stats


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


def concurrency(spans: Sequence[Sequence[float]]) -> float:
    """How many of ``spans`` (``(start, end, ...)``: replica forwards, backward threads) ran at once on average:
    their summed durations over the time at least one ran (1.0: one after another; N: all N side by side)."""
    ordered = sorted((float(a), float(b)) for a, b, *_ in spans if b > a)
    if not ordered:
        return 1.0
    busy, (start, end) = 0.0, ordered[0]
    for a, b in ordered[1:]:
        if a > end:
            busy, start, end = busy + end - start, a, b
        else:
            end = max(end, b)
    busy += end - start
    return sum(b - a for a, b in ordered) / busy if busy > 0 else 1.0


def plain(value: Any) -> Tuple[Any, Dict[str, Dict[str, Any]]]:
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
