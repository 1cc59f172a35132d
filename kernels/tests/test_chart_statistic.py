"""One statistic per number: a verdict that speaks of a quantity a chart draws reads the chart's statistic.

Two halves. The shared fixture (``kernels/protocol/chart-statistic.json``)
holds the statistics here (``stats.step_value``, ``stats.speedup``) to the
values the TypeScript chart model draws for the same series
(``tests/unit/chart-statistic.test.ts``). Then every scenario runs headless,
at its defaults and at small values, and every number a verdict reads from a
charted metric is held against the chart: a timing or samples bar is the
median of its steps (its range is min and max), memory is its peak, the loss
line its points, and a speed-up the speed-up chart's; and its value is the
one the chart computes from the cell's own metric series.
"""
from __future__ import annotations

import json
import math
import os

import pytest

import mgpulab_scenarios as sc
from mgpulab_scenarios import evidence, stats
from mgpulab_scenarios.headless import run_scenario
from mgpulab_scenarios.report import call_tracked

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = json.load(open(os.path.join(KERNELS, "protocol", "chart-statistic.json"), encoding="utf-8"))

# What each charted metric's chart shows, and so which statistics a verdict may read of it.
TIMING = {"step_ms", "data_ms", "forward_ms", "backward_ms", "comm_ms", "optimizer_ms", "apply_ms", "samples"}
ALLOWED = {"timing": {"median", "min", "max", "speedup"}, "memory": {"peak"}, "loss": {"first", "last", "value"}}

# Small values that still run every experiment (as conftest.SCENARIO_SMALL), with repeats enough for spreads.
SMALL = {
    "dp-basics": {"devices": 2, "batch_size": 8, "hidden": 4, "d_in": 4, "steps": 1, "timing_repeats": 3},
    "dp-not-starting": {"devices": 2, "input_size": 16, "hidden_size": 16, "batch_size": 4, "num_steps": 3},
    "params-not-updated": {"devices": 2, "batch_size": 8, "steps": 2},
    "incomplete-results-gil": {"devices": 2, "samples": 40, "batch_size": 10, "depth": 4, "repeats": 3,
                               "num_workers": 0, "sample_cost_ms": 0.0},
    "hangs": {"world_size": 2, "fault": "none", "steps": 3, "comm_delay_ms": 20.0},
}


def _close(a, b):
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _metric_set(series):
    return stats.MetricSet({"type": "metric", "runId": s["tag"], "rank": s["rank"], "step": step,
                            "values": {s["name"]: value}} for s in series for step, value in zip(s["steps"], s["values"]))


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=lambda c: c["name"])
def test_the_statistics_are_the_charts_on_the_shared_series(case):
    metrics = _metric_set(case["series"])
    for bar in case["bars"]:
        series = metrics.get(bar["tag"], bar["rank"], bar["metric"])
        assert _close(stats.step_value(series), bar["value"]), (bar, stats.step_value(series))
        spread = stats.spread([v for _, v in stats.used_points(series)])
        assert _close(spread.min, bar["min"]) and _close(spread.max, bar["max"]), bar
    for point in case["speedups"]:
        assert stats.speedup_basis(metrics) == point["basis"]
        assert _close(stats.speedup(metrics, point["tag"], point["baseline"]), point["value"]), point


def test_an_outlier_that_would_flip_a_comparison_makes_it_inconclusive():
    one = stats.spread([3.1, 3.4, 980.0, 3.3, 3.5])  # the mean (198.7) says slower than DataParallel's 37 ms
    dp = stats.spread([37.2, 36.9, 38.0, 37.5, 36.5])
    comparison = stats.compare(one, dp)
    assert not comparison.conclusive and "outlier" in comparison.reason
    # Without the outlier the medians and the means agree, and the difference is a result.
    assert stats.compare(stats.spread([3.1, 3.4, 3.6, 3.3, 3.5]), dp).conclusive


def _kind(metric):
    if metric in TIMING:
        return "timing"
    if metric in ("memory_mib", "memory_peak_mib"):
        return "memory"
    if metric == "loss":
        return "loss"
    return None


def _label(path):
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out


def _chart_value(source, metrics):
    """What the chart draws for this number's source, from the cell's own series."""
    tag, metric, ranks, statistic = source["tag"], source["metric"], source["ranks"], source["statistic"]
    if statistic == "speedup":
        return stats.speedup(metrics, tag, source["baseline"])
    if statistic == "peak":
        return max(stats.peak(metrics.get(tag, r, metric)) for r in ranks)
    if statistic in ("median", "min", "max") and len(ranks) == 1:
        series = metrics.get(tag, ranks[0], metric)
        spread = stats.spread([v for _, v in stats.used_points(series)])
        return {"median": spread.median, "min": spread.min, "max": spread.max}[statistic]
    return None  # over several ranks no single bar draws it: its statistic is what is checked


def _run_recording_series(scenario_id, values):
    """The scenario headless, with each experiment's metric messages as its evidence recording saw them."""
    seen = {}
    finish = evidence.Run.finish

    def recording(run, **facts):
        seen[run.template_id] = list(run.messages)
        return finish(run, **facts)

    evidence.Run.finish = recording
    try:
        doc = run_scenario(scenario_id, values)
    finally:
        evidence.Run.finish = finish
    return doc, {template_id: stats.MetricSet(messages) for template_id, messages in seen.items()}


@pytest.mark.parametrize("scenario_id,values", [(sid, v) for sid in sc.IDS for v in ({}, SMALL[sid])],
                         ids=lambda x: x if isinstance(x, str) else ("defaults" if not x else "small"))
def test_every_verdict_reads_what_the_charts_draw(scenario_id, values):
    scenario = sc.get(scenario_id)
    doc, series = _run_recording_series(scenario_id, values)
    claims = {claim.id: claim for claim in scenario.claims}
    checked, wrong = 0, []
    for claim in doc["claims"]:
        if claim["status"] != "measured":
            continue
        record = evidence.latest(f"{scenario_id}/{claim['experiment']}")
        _, reads = call_tracked(claims[claim["id"]].verdict, record.evidence)
        metrics = series.get(f"{scenario_id}/{claim['experiment']}")
        for label in dict.fromkeys(_label(path) for path in reads):
            source = record.sources.get(label)
            kind = _kind(source["metric"]) if source else None
            if kind is None:
                continue
            checked += 1
            if source["statistic"] not in ALLOWED[kind]:
                wrong.append(f"{claim['id']}: {label} is the {source['statistic']} of {source['tag']} {source['metric']}; "
                             f"its chart draws the {'/'.join(sorted(ALLOWED[kind]))}")
                continue
            drawn = _chart_value(source, metrics) if metrics is not None else None
            if drawn is not None and not _close(source["value"], drawn):
                wrong.append(f"{claim['id']}: {label} = {source['value']} but the chart draws {drawn}")
    assert not wrong, "\n".join(wrong)
    if scenario_id != "params-not-updated":  # its verdicts read counts and losses, no timing
        assert checked > 0, "no verdict read a charted number: the check checked nothing"


def _timing(*values):
    spread = stats.spread(list(values))
    return spread.to_dict()


def test_a_slowdown_is_a_speed_up_claim_that_does_not_hold_and_the_class_tally_says_slowdown():
    # A measured x0.18 slowdown read "holds only partly" for "Speedup improves with more GPUs but not linearly".
    plan = {"kind": "cpu-emulated", "host_cores": 2, "label": "4× cpu, emulated DataParallel"}
    evidence_ = {"devices": 4, "basis": "sample", "plan": plan, "variants": [
        {"tag": "1 device", "engine": "1 device", "devices": 1, "step_ms": _timing(4.0, 4.1, 3.9), "speedup": 1.0,
         "plan": plan},
        {"tag": "DataParallel x4", "engine": "DataParallel", "devices": 4, "step_ms": _timing(22.0, 22.5, 21.8),
         "speedup": 0.18, "plan": plan}]}
    scenario = sc.get("dp-basics")
    verdicts = {c.id: c.verdict(evidence_)[0] for c in scenario.claims if c.id in ("not-linear", "myth-linear")}
    assert verdicts == {"not-linear": "does-not-hold", "myth-linear": "does-not-hold"}
    # The question's choices follow: this run measured "none or a slowdown", not "about 4x".
    question = scenario.question_dict(next(s for s in scenario.steps if s.id == "scaling"), scenario.validate({}))
    matching = [choice for choice, outcome in zip(question["choices"], question["outcomes"])
                if outcome and all(verdicts.get(claim) in allowed for claim, allowed in outcome.items())]
    assert matching == ["none or a slowdown"]
