"""The charts' statistics in Python, the noise rule, and the impossible-speed-up flag (pure functions)."""
from __future__ import annotations

import pytest

from mgpulab_scenarios import stats
from mgpulab_scenarios.stats import MetricSet, Series, Spread


def _messages(tag, rank, name, values, first_step=0):
    return [{"type": "metric", "runId": tag, "rank": rank, "step": first_step + i, "values": {name: v}}
            for i, v in enumerate(values)]


def test_means_leave_out_the_warmup_step_only_when_a_series_has_more_than_two_steps():
    assert stats.step_mean(Series(enumerate([10.0, 1.0, 3.0]))) == 2.0
    assert stats.step_mean(Series(enumerate([10.0, 1.0]))) == 5.5  # two steps: both count, as in the charts
    assert stats.step_mean(Series(enumerate([7.0]))) == 7.0
    assert stats.step_mean(Series(enumerate([10.0, None, 3.0, float("nan")]))) == 3.0  # non-finite left out
    assert stats.step_mean(Series()) is None and stats.step_mean(None) is None
    assert stats.peak(Series(enumerate([10.0, 1.0, 3.0]))) == 10.0  # peaks keep the warm-up


def test_a_series_keeps_the_first_value_sent_for_a_step_and_sorts_by_step():
    series = Series([(2, 5.0), (0, 1.0), (2, 9.0), (1, 3.0)])
    assert series.points == [(0, 1.0), (1, 3.0), (2, 5.0)]
    assert stats.used_points(series) == [(1, 3.0), (2, 5.0)]


def test_speedup_is_the_charts_time_per_sample_ratio():
    messages = (_messages("1 device", 0, "step_ms", [9.0, 2.0, 2.0]) + _messages("1 device", 0, "samples", [8, 8, 8])
                + _messages("DataParallel x2", 0, "step_ms", [9.0, 1.0, 1.5])
                + _messages("DataParallel x2", 1, "step_ms", [9.0, 1.0, 0.5])
                + _messages("DataParallel x2", 0, "samples", [4, 4, 4])
                + _messages("DataParallel x2", 1, "samples", [4, 4, 4]))
    metrics = MetricSet(messages)
    assert stats.speedup_basis(metrics) == "sample"
    t = stats.variant_time(metrics, "DataParallel x2")
    assert (t.step_ms, t.samples, t.ranks, t.steps) == (1.0, 8.0, (0, 1), (1, 2))
    assert stats.speedup(metrics, "DataParallel x2", "1 device") == 2.0
    # one variant without samples: the chart falls back to time per step
    metrics = MetricSet(messages + _messages("DDP x2", 0, "step_ms", [5.0, 4.0, 4.0]))
    assert stats.speedup_basis(metrics) == "step"
    assert stats.speedup(metrics, "DDP x2", "1 device") == 0.5
    assert stats.device_count("DDP x4") == 4 and stats.device_count("1 device") == 1
    assert stats.device_count("num_workers=2") is None


def _spread(*values):
    return stats.spread(values)


def test_the_noise_rule_flips_to_inconclusive_when_the_spread_exceeds_the_effect_and_back():
    a = _spread(8.0, 10.0, 12.0)
    overlapping = _spread(9.0, 11.0, 13.0)  # medians 1 apart, ranges overlap by 3
    apart = _spread(13.0, 15.0, 17.0)  # medians 5 apart, ranges disjoint
    assert not stats.compare(a, overlapping).conclusive
    assert "no more than their ranges overlap" in stats.compare(a, overlapping).reason
    assert stats.compare(a, apart).conclusive
    # same medians, a little overlap: never conclusive
    assert not stats.compare(_spread(1.0, 2.0, 3.0), _spread(2.9, 2.0, 1.5)).conclusive
    # the boundary: an effect equal to the overlap is not enough
    assert not stats.compare(_spread(0.0, 1.0, 2.0), _spread(1.0, 2.0, 3.0)).conclusive
    assert stats.compare(_spread(0.0, 1.0, 2.0), _spread(1.5, 2.6, 3.0)).conclusive
    # too few repeats to see a spread: inconclusive however large the gap
    few = stats.compare(Spread(2, 1.0, 1.0, 1.0, 1.0), Spread(2, 9.0, 9.0, 9.0, 9.0))
    assert not few.conclusive and "too few timed repeats" in few.reason


@pytest.mark.parametrize("value, devices, kind, cores, flagged", [
    (2.9, 2, "cpu-emulated", 1, True),  # the x2.9 on 2 devices over 1 core... impossible
    (2.9, 3, "cpu-emulated", 2, False),  # below the device count: not super-linear
    (4.5, 4, "cpu-emulated", 2, True),
    (4.5, 4, "cpu-emulated", 8, False),  # enough cores: odd, but not impossible
    (2.5, 2, "cuda-shared", 16, True),  # virtual devices on one GPU
    (2.5, 2, "cuda", 16, False),  # separate GPUs: cache effects can be real
    (None, 2, "cuda-shared", 16, False),
    (1.5, 1, "cpu-emulated", 1, False),
])
def test_a_superlinear_speedup_on_shared_hardware_is_flagged_as_impossible(value, devices, kind, cores, flagged):
    reason = stats.impossible_speedup(value, devices, kind, cores)
    assert (reason is not None) == flagged
    if flagged:
        assert "impossible" in reason and "noise" in reason
