"""What a cell observed, read as the charts read it, with each number's source (mgpulab_scenarios.observed)."""
from __future__ import annotations

import pickle

from mgpulab_scenarios import evidence
from mgpulab_scenarios.observed import Measured, Observed, Source, concurrency, plain
from mgpulab_scenarios.stats import MetricSet


def _messages(tag, rank, name, values):
    return [{"type": "metric", "runId": tag, "rank": rank, "step": i, "values": {name: v}} for i, v in enumerate(values)]


def _observed():
    metrics = MetricSet(_messages("DP x2", 0, "step_ms", [9.0, 2.0, 4.0]) + _messages("DP x2", 1, "step_ms", [9.0, 4.0, 6.0])
                        + _messages("1 device", 0, "step_ms", [9.0, 6.0, 6.0]))
    return Observed({"devices": 2}, metrics, {"rows": 8})


def test_statistics_leave_out_the_warmup_as_the_charts_do_and_name_their_source():
    o = _observed()
    mean = o.mean("DP x2", "step_ms")
    assert mean == 4.0 and isinstance(mean, Measured)
    assert mean.source == Source("DP x2", "step_ms", (0, 1), (1, 2), "mean")
    assert o.peak("DP x2", "step_ms") == 9.0 and o.first("DP x2", "step_ms", [0]) == 9.0
    assert o.last("DP x2", "step_ms") == 5.0  # the last step, averaged over the ranks
    assert o.spread("DP x2", "step_ms", [0])["median"] == 3.0
    assert o.mean("DP x2", "nothing") is None and o.ranks("DP x2", "step_ms") == [0, 1]
    assert (o.params, o.facts, o.tags()) == ({"devices": 2}, {"rows": 8}, ["1 device", "DP x2"])


def test_plain_evidence_is_json_with_each_measured_number_s_source_beside_it():
    o = _observed()
    value, sources = plain({"mean": o.mean("DP x2", "step_ms"), "rows": [1, o.peak("DP x2", "step_ms")], "n": 2})
    assert value == {"mean": 4.0, "rows": [1, 9.0], "n": 2} and type(value["mean"]) is float
    assert sources["mean"]["statistic"] == "mean" and sources["mean"]["ranks"] == [0, 1]
    assert sources["rows[1]"] == {"value": 9.0, "tag": "DP x2", "metric": "step_ms", "ranks": [0, 1],
                                  "steps": [0, 1, 2], "statistic": "peak"}


def test_a_measured_number_keeps_its_source_through_pickling_and_loses_it_in_arithmetic():
    number = Measured(2.5, Source("t", "m", (0,), (1,), "mean"))
    again = pickle.loads(pickle.dumps(number))
    assert again == 2.5 and again.source == number.source
    assert not isinstance(number * 2, Measured)


def test_concurrency_counts_how_many_spans_ran_at_once():
    assert concurrency([(0, 1), (1.5, 2.5)]) == 1.0  # one after another
    assert concurrency([(0, 1, "thread-a"), (0, 1, "thread-b")]) == 2.0  # side by side; extra fields ignored
    assert concurrency([(0, 2), (0, 2), (3, 1)]) == 2.0  # a span that ends before it starts is left out
    assert concurrency([]) == 1.0


def test_the_recording_module_still_names_the_reading_types():
    assert (evidence.Observed, evidence.Measured, evidence.Source) == (Observed, Measured, Source)
