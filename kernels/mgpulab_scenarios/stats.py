"""The charts' statistics in Python, the noise rule, and the check for impossible speed-ups.

Pure functions over metric series (no torch), so a verdict's numbers are the
charts' numbers by construction. One statistic per number: a bar of the
charts is the **median** of its steps with their range (a mean let one
980 ms step among 3.4 ms ones draw a bar 70 times the typical step, and tell
the opposite story to a verdict that read the median):

* :func:`step_value` — ``server/core/charts/chart-stats.ts`` ``stepMedian``:
  the median over steps, leaving out the first (warm-up) step when the series
  has more than 2 steps; non-finite values (sent as null) are left out.
  :func:`peak` is the largest finite value, warm-up included (memory bars).
* :func:`variant_time` / :func:`speedup` — ``server/core/charts/chart-speedup.ts``:
  a variant's step time is the mean over its ranks of each rank's
  :func:`step_value` of ``step_ms``; its time per sample divides that by the
  sum over ranks of each rank's ``samples`` (their :func:`step_value`); the
  speed-up of a variant is the one-device variant's time per sample over its
  own (time per step when some variant logged no samples).
* :func:`spread_text` — how a verdict says a timing: the median first, with
  its range and count, as the chart draws it.
* A :class:`Series` keeps one value per step, sorted by step, the first value
  sent for a step winning (as the charts' series buffer does).

The noise rule (:func:`compare`) and :func:`impossible_speedup` decide when
a timing verdict must not be stated as a result; see their docs.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

WARMUP_RULE = "each bar is the median over steps, leaving out the first (warm-up) step when a series has more than 2"
# The statistic a chart's bar (and the verdict number about the same quantity) is.
BAR_STATISTIC = "median"

# -- series ------------------------------------------------------------------------------------


class Series:
    """One metric of one variant and rank: ``(step, value)`` sorted by step, one value per step
    (the first sent wins), None for a non-finite or missing value."""

    __slots__ = ("points",)

    def __init__(self, points: Iterable[Tuple[int, Optional[float]]] = ()) -> None:
        self.points: List[Tuple[int, Optional[float]]] = []
        for step, value in points:
            self.add(step, value)

    def add(self, step: int, value: Optional[float]) -> bool:
        clean = value if value is not None and math.isfinite(value) else None
        lo, hi = 0, len(self.points)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.points[mid][0] < step:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self.points) and self.points[lo][0] == step:
            return False
        self.points.insert(lo, (step, clean))
        return True

    def __len__(self) -> int:
        return len(self.points)

    @property
    def steps(self) -> List[int]:
        return [s for s, _ in self.points]


def skips_warmup(series: Series) -> bool:
    """Whether a mean of this series leaves out its first point (the charts' rule)."""
    return len(series) > 2


def used_points(series: Series) -> List[Tuple[int, float]]:
    """The (step, value) pairs a mean of this series uses: warm-up left out, finite values only."""
    points = series.points[1:] if skips_warmup(series) else series.points
    return [(s, v) for s, v in points if v is not None]


def step_mean(series: Optional[Series]) -> Optional[float]:
    """The mean over steps (warm-up excluded when more than 2 steps), None without a value. Not what a chart's
    bar draws (see :func:`step_value`): for counts and other quantities no chart shows."""
    if series is None:
        return None
    used = used_points(series)
    return sum(v for _, v in used) / len(used) if used else None


def step_value(series: Optional[Series]) -> Optional[float]:
    """The charts' value of a series: the median over steps (warm-up excluded when more than 2), None without one."""
    if series is None:
        return None
    used = [v for _, v in used_points(series)]
    return median(used) if used else None


def peak(series: Optional[Series]) -> Optional[float]:
    """The largest finite value, warm-up included (the charts' peaks)."""
    if series is None:
        return None
    values = [v for _, v in series.points if v is not None]
    return max(values) if values else None


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


class MetricSet:
    """Series by (variant tag, rank, metric name), from metric messages as the lab stores them.

    The tag is the message's ``runId`` ("" when untagged, as the charts key it).
    """

    def __init__(self, messages: Iterable[Mapping] = ()) -> None:
        self._series: Dict[Tuple[str, int, str], Series] = {}
        for message in messages:
            self.add(message)

    def add(self, message: Mapping) -> None:
        if message.get("type", "metric") != "metric":
            return
        tag = message.get("runId") or ""
        for name, value in message["values"].items():
            key = (tag, int(message["rank"]), name)
            series = self._series.get(key)
            if series is None:
                series = self._series[key] = Series()
            series.add(int(message["step"]), value)

    def get(self, tag: str, rank: int, name: str) -> Optional[Series]:
        return self._series.get((tag, rank, name))

    def tags(self) -> List[str]:
        return sorted({tag for tag, _, _ in self._series})

    def ranks(self, tag: str, name: str) -> List[int]:
        """Ranks of ``tag`` that logged ``name`` at least once (ascending)."""
        return sorted(rank for (t, rank, n), s in self._series.items() if t == tag and n == name and len(s) > 0)


# -- variant times and speed-up (chart-speedup.ts) ---------------------------------------------

_TIMES = re.compile(r"(^|[^A-Za-z0-9])[x×]\s*(\d+)(?![\d.])", re.IGNORECASE)
_COUNT_WORD = re.compile(r"(^|[^A-Za-z0-9])(\d+)\s*(?:devices?|gpus?)\b", re.IGNORECASE)


def device_count(tag: str) -> Optional[int]:
    """The device count a variant tag names ("DDP x4", "1 device"), as the charts read it; None without one."""
    match = _TIMES.search(tag) or _COUNT_WORD.search(tag)
    if not match:
        return None
    n = int(match.group(2))
    return n if n > 0 else None


@dataclass(frozen=True)
class VariantTime:
    tag: str
    step_ms: float  # mean over ranks of each rank's step_value (median)
    samples: Optional[float]  # sum over ranks of each rank's step_value of samples; None when none logged
    ranks: Tuple[int, ...]
    steps: Tuple[int, ...]  # the steps the means used (rank 0's, or the first rank's)


def variant_time(metrics: MetricSet, tag: str) -> Optional[VariantTime]:
    means: List[float] = []
    ranks: List[int] = []
    steps: Tuple[int, ...] = ()
    for rank in metrics.ranks(tag, "step_ms"):
        series = metrics.get(tag, rank, "step_ms")
        mean = step_value(series)
        if mean is None:
            continue
        means.append(mean)
        ranks.append(rank)
        if not steps and series is not None:
            steps = tuple(s for s, _ in used_points(series))
    if not means:
        return None
    samples: Optional[float] = None
    for rank in metrics.ranks(tag, "samples"):
        mean = step_value(metrics.get(tag, rank, "samples"))
        if mean is not None:
            samples = (samples or 0.0) + mean
    step_ms = sum(means) / len(means)
    return VariantTime(tag, step_ms, samples, tuple(ranks), steps) if step_ms > 0 else None


def speedup_basis(metrics: MetricSet) -> str:
    """"sample" when every variant with a device count logged samples, else "step" (as the chart decides)."""
    timed = [t for t in (variant_time(metrics, tag) for tag in metrics.tags() if device_count(tag) is not None)
             if t is not None]
    return "sample" if timed and all(t.samples is not None and t.samples > 0 for t in timed) else "step"


def time_per(t: VariantTime, basis: str) -> float:
    return t.step_ms / t.samples if basis == "sample" and t.samples else t.step_ms


def speedup(metrics: MetricSet, tag: str, baseline: str) -> Optional[float]:
    """The speed-up chart's value for ``tag`` against the one-device variant ``baseline``."""
    basis = speedup_basis(metrics)
    a, b = variant_time(metrics, baseline), variant_time(metrics, tag)
    if a is None or b is None:
        return None
    return time_per(a, basis) / time_per(b, basis)


# -- spread and the noise rule ----------------------------------------------------------------

MIN_REPEATS = 3
ADVICE = ("run more steps or repeats, use a bigger model or batch (a larger effect), or a quieter host "
          "(nothing else running)")


@dataclass(frozen=True)
class Spread:
    """The timed values of one variant after the warm-up: how many, min, median, max, and their mean."""

    n: int
    min: float
    median: float
    max: float
    mean: float

    def to_dict(self) -> Dict[str, float]:
        return {"n": self.n, "min": self.min, "median": self.median, "max": self.max, "mean": self.mean}

    def text(self, unit: str = "ms") -> str:
        return f"median {self.median:.3g} {unit} (min {self.min:.3g}, max {self.max:.3g}, n={self.n})"


def bar_value(observed: Any, tag: str, metric: str, ranks: Optional[Sequence[int]] = None) -> Any:
    """What the chart's bar of ``metric`` shows for ``tag`` (on ``ranks``): the median of its steps after the
    warm-up, as the evidence's :class:`~mgpulab_scenarios.evidence.Measured` (it names its source), or None."""
    spread = observed.spread(tag, metric, ranks)
    return spread["median"] if spread else None


def spread_text(s: Optional[Mapping[str, Any]], unit: str = "ms") -> str:
    """An evidence spread as a verdict sentence says it: the median (what the chart's bar is), then its range
    and count."""
    if not s:
        return "no timing"
    return f"{_num(s['median'])} {unit} (median; min {_num(s['min'])}, max {_num(s['max'])}, n={s['n']})"


def _num(value: Any) -> str:
    return f"{float(value):.3g}" if value is not None else "-"


def spread(values: Sequence[float]) -> Optional[Spread]:
    clean = [v for v in values if v is not None and math.isfinite(v)]
    if not clean:
        return None
    return Spread(len(clean), min(clean), median(clean), max(clean), sum(clean) / len(clean))


@dataclass(frozen=True)
class Comparison:
    """Whether two variants' timings differ by more than their noise (see :func:`compare`)."""

    conclusive: bool
    effect: float  # |median(a) - median(b)|
    overlap: float  # length of the intersection of [min, max] of a and of b (0 when disjoint)
    reason: str

    @property
    def text(self) -> str:
        return self.reason


def compare(a: Spread, b: Spread, unit: str = "ms") -> Comparison:
    """The noise rule: a difference between two variants is conclusive only when

    1. both have at least :data:`MIN_REPEATS` timed values after the warm-up
       (fewer cannot show their spread), and
    2. the gap between their medians is larger than the overlap of their
       [min, max] ranges, and
    3. their means and their medians agree on which is larger: an outlier
       step that would flip the comparison makes it inconclusive, never its
       opposite.

    Otherwise it is inconclusive: the spread is at least as large as the
    effect. Disjoint ranges (overlap 0) with different medians are always
    conclusive; identical medians never are.
    """
    effect = abs(a.median - b.median)
    overlap = max(0.0, min(a.max, b.max) - max(a.min, b.min))
    if min(a.n, b.n) < MIN_REPEATS:
        return Comparison(False, effect, overlap,
                          f"too few timed repeats to see the spread ({min(a.n, b.n)} < {MIN_REPEATS})")
    if (a.median - b.median) * (a.mean - b.mean) < 0:
        # An outlier step decides which is faster: the means say one thing and the medians the other.
        slow = a if a.max - a.median > b.max - b.median else b
        return Comparison(False, effect, overlap,
                          f"an outlier step (max {slow.max:.3g} {unit} against a median of {slow.median:.3g}) would "
                          "reverse the comparison: the means and the medians disagree on which is faster")
    if effect > overlap:
        return Comparison(True, effect, overlap,
                          f"the medians differ by {effect:.3g} {unit}, more than their ranges overlap ({overlap:.3g} {unit})")
    return Comparison(False, effect, overlap,
                      f"the medians differ by {effect:.3g} {unit}, no more than their ranges overlap "
                      f"({overlap:.3g} {unit}): the spread is as large as the effect")


def as_spread(value: Optional[Mapping[str, Any]]) -> Optional[Spread]:
    """An evidence spread dict (``Observed.spread``) as a :class:`Spread` for the noise rule; None without one.

    The mean is read past a verdict's read tracking (``report.call_tracked``): the
    rule uses it only to catch an outlier that would flip a comparison, and a
    verdict's numbers are the medians the charts draw, never that mean.
    """
    if not value:
        return None
    mean = dict.__getitem__(value, "mean") if isinstance(value, dict) else value["mean"]
    return Spread(int(value["n"]), float(value["min"]), float(value["median"]), float(value["max"]), float(mean))


def compare_spreads(a: Optional[Mapping[str, Any]], b: Optional[Mapping[str, Any]], unit: str = "ms") -> Optional[Comparison]:
    """The noise rule (:func:`compare`) on two evidence spreads; None when either has no timing."""
    sa, sb = as_spread(a), as_spread(b)
    return compare(sa, sb, unit) if sa is not None and sb is not None else None


def impossible_speedup(speedup_value: Optional[float], devices: int, kind: str, host_cores: int) -> Optional[str]:
    """Why a measured speed-up cannot be real, or None.

    A speed-up above the device count (super-linear) is flagged when the
    devices share hardware: emulated CPU devices on a host with fewer cores
    than devices, or virtual devices sharing a GPU ("cuda-shared"). There the
    N devices have less than N devices' worth of compute, so more than N
    times faster is noise in the measurement (usually a one-device baseline
    inflated by a slow step), never a result.
    """
    if speedup_value is None or devices < 2 or speedup_value <= devices:
        return None
    if kind == "cuda-shared":
        return (f"x{speedup_value:.3g} on {devices} virtual devices sharing a GPU is above the ideal x{devices}: "
                "impossible on shared hardware, so it is noise, not a result")
    if kind == "cpu-emulated" and host_cores < devices:
        return (f"x{speedup_value:.3g} on {devices} emulated devices sharing {host_cores} CPU core(s) is above the "
                f"ideal x{devices}: impossible with fewer cores than devices, so it is noise, not a result")
    return None
