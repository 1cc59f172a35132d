"""The verdict is computed from the runs the participant made.

Experiment cells record their evidence; the verdicts cell reads it, names the
execution each claim's numbers came from, and never measures anything itself.
The first test runs real cells the way the kernel does (frames with a nonce
on fd 1, DDP ranks writing theirs to the same fd) and recomputes every number
a verdict shows from the frames of the execution it names, with the charts'
rules written out again here.
"""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import pytest

import mgpulab_scenarios as sc
from mgpulab_scenarios import evidence
from mgpulab_scenarios.headless import run_cells

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NONCE = "0123456789abcdef0123456789abcdef"

DRIVER = r'''
import contextlib, json, sys
from mgpulab_wire import frames
from mgpulab_scenarios import evidence
from mgpulab_scenarios.headless import run_scenario
from mgpulab_scenarios.report import verdict_report

_executing = evidence.executing

@contextlib.contextmanager
def marked(cell_id, execution_id):
    """The CLI's own executing(), after a line that says which execution the frames below belong to."""
    print(f"\n@@cell {cell_id} {execution_id}", flush=True)
    with _executing(cell_id, execution_id) as where:
        yield where


if __name__ == "__main__":
    frames.configure(sys.argv[1])  # frames on fd 1, as in the kernel; rank processes inherit it
    evidence.executing = marked
    doc = run_scenario(sys.argv[2], json.loads(sys.argv[3]))  # the path of `npm run scenario`
    print("\n@@report " + json.dumps(verdict_report(doc)), flush=True)
'''


def _run(scenario_id: str, params: dict):
    env = dict(os.environ, PYTHONPATH=KERNELS)
    done = subprocess.run([sys.executable, "-c", DRIVER, NONCE, scenario_id, json.dumps(params)],
                          capture_output=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    frame = re.compile(rb"\x1b\]mgl;" + NONCE.encode() + rb";(.*?)\x07")
    series = {}  # execution id -> the metric messages sent while it ran (the lab stores them per execution)
    current = None
    report = None
    for line in re.split(rb"\n(?=@@)", done.stdout):
        if line.startswith(b"@@cell "):
            _, template_id, current = line.split(b"\n", 1)[0].decode().split(" ")
            series[current] = []
        if line.startswith(b"@@report "):
            report = json.loads(line[len(b"@@report "):].split(b"\n", 1)[0])
            continue
        for match in frame.finditer(line):
            message = json.loads(match.group(1))
            if message["type"] == "metric" and current is not None:
                series[current].append(message)
    return series, report


# -- the charts' statistics, written out again ----------------------------------------------------

def _points(messages, tag, rank, metric):
    """(step, value) sorted by step, the first value sent for a step kept (as the charts store them)."""
    by_step = {}
    for m in messages:
        if (m.get("runId") or "") == tag and m["rank"] == rank and metric in m["values"] and m["step"] not in by_step:
            by_step[m["step"]] = m["values"][metric]
    return sorted(by_step.items())


def _finite(v):
    return v is not None and math.isfinite(v)


def _step_mean(points):
    used = points[1:] if len(points) > 2 else points
    values = [v for _, v in used if _finite(v)]
    return sum(values) / len(values) if values else None


def _step_median(points):
    """The charts' bar (issue 27: the median of the steps after the warm-up, not their mean)."""
    used = points[1:] if len(points) > 2 else points
    values = sorted(v for _, v in used if _finite(v))
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def _recompute(messages, source):
    tag, metric, ranks, steps, statistic = (source[k] for k in ("tag", "metric", "ranks", "steps", "statistic"))
    if statistic == "mean":
        means = [_step_mean(_points(messages, tag, r, metric)) for r in ranks]
        return sum(means) / len(means)
    if statistic == "peak":
        return max(v for r in ranks for _, v in _points(messages, tag, r, metric) if _finite(v))
    if statistic in ("first", "last", "value"):
        values = [dict(_points(messages, tag, r, metric))[steps[0]] for r in ranks]
        return sum(values) / len(values)
    if statistic in ("min", "median", "max"):
        per_step = []
        for step in steps:
            values = []
            for r in ranks:
                points = _points(messages, tag, r, metric)
                used = dict(points[1:] if len(points) > 2 else points)
                if step in used and _finite(used[step]):
                    values.append(used[step])
            per_step.append(sum(values) / len(values))
        ordered = sorted(per_step)
        if statistic == "min":
            return ordered[0]
        if statistic == "max":
            return ordered[-1]
        mid = len(ordered) // 2
        return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    if statistic == "speedup":
        def time_per(variant):
            step_ranks = sorted({m["rank"] for m in messages if (m.get("runId") or "") == variant
                                 and "step_ms" in m["values"]})
            step = sum(_step_median(_points(messages, variant, r, "step_ms")) for r in step_ranks) / len(step_ranks)
            if source["basis"] == "step":
                return step
            sample_ranks = sorted({m["rank"] for m in messages if (m.get("runId") or "") == variant
                                   and "samples" in m["values"]})
            return step / sum(_step_median(_points(messages, variant, r, "samples")) for r in sample_ranks)
        return time_per(source["baseline"]) / time_per(tag)
    raise AssertionError(f"unknown statistic {statistic}")


@pytest.mark.parametrize("scenario_id, params", [
    ("dp-basics", {"devices": 2, "batch_size": 8, "timing_repeats": 3, "compare_ddp": True, "steps": 3}),
    ("dp-not-starting", {"devices": 2, "input_size": 16, "hidden_size": 16, "batch_size": 4, "num_steps": 3}),
    ("params-not-updated", {"steps": 3, "batch_size": 8}),
    ("incomplete-results-gil", {"devices": 2, "samples": 40, "batch_size": 10, "depth": 4, "repeats": 3,
                                "num_workers": 0, "sample_cost_ms": 0.0}),
    ("hangs", {"world_size": 2, "fault": "none", "steps": 3, "comm_delay_ms": 20.0}),
])
def test_every_number_of_a_verdict_is_the_statistic_of_the_stored_series_of_the_run_it_names(scenario_id, params):
    series, report = _run(scenario_id, params)
    assert report is not None
    values = sc.validate(scenario_id, params)
    checked = 0
    for claim in report["claims"]:
        assert claim["status"] == "measured" and claim["verdict"] in sc.VERDICTS, claim
        run = claim["run"]
        cell_id = claim["experiment"]
        assert run["templateId"] == run["cellId"] == f"{scenario_id}/{cell_id}"  # the CLI names cells so
        assert run["executionId"] in series  # the execution it names is one that ran
        assert run["params"] == {name: values[name] for name in sc.get(scenario_id).used(cell_id)}
        for number in claim["numbers"]:
            if "source" not in number:
                continue
            expected = _recompute(series[run["executionId"]], number["source"])
            assert number["value"] == pytest.approx(expected, rel=5e-4, abs=1e-12), (claim["id"], number)
            checked += 1
    assert checked >= 10
    if scenario_id == "dp-basics":  # the DDP ranks' frames came from their own processes, and were read too
        speedups = [n for c in report["claims"] for n in c["numbers"] if n.get("source", {}).get("tag") == "DDP x2"]
        assert speedups and {n["source"]["statistic"] for n in speedups} >= {"speedup", "median"}


# -- the verdicts cell reads, it never measures ------------------------------------------------------

def test_the_verdicts_cell_says_which_cell_to_run_when_the_values_changed_and_measures_nothing():
    evidence.clear()
    values = {"devices": 2, "batch_size": 8, "timing_repeats": 2}
    run_cells("dp-basics", values, only=["split"])
    first = evidence.latest("dp-basics/split")
    doc = sc.run("dp-basics", values)
    split = [c for c in doc["claims"] if c["experiment"] == "split"]
    assert split and all(c["status"] == "measured" and c["verdict"] for c in split)
    assert all(c["run"]["executionId"] == first.execution_id for c in split)
    others = [c for c in doc["claims"] if c["experiment"] != "split"]
    assert others and all(c["status"] == "needs-run" and c["verdict"] is None for c in others)
    assert "Run the cell 'Speed-up vs device count' (it has not run with batch_size=8, devices=2" in \
        next(c for c in others if c["experiment"] == "scaling")["explanation"]
    changed = sc.run("dp-basics", dict(values, batch_size=10, devices=3))
    claim = next(c for c in changed["claims"] if c["id"] == "splits-evenly")
    assert claim["status"] == "needs-run" and claim["verdict"] is None and claim["run"] is None
    assert claim["explanation"] == ("Run the cell 'Batch split and gather' (it ran with batch_size=8, devices=2; "
                                    "the form now says batch_size=10, devices=3)")
    assert evidence.latest("dp-basics/split") is first  # reading verdicts recorded (ran) nothing
    # a parameter the cell does not use changes nothing for it
    same = sc.run("dp-basics", dict(values, lr=0.5))
    assert next(c for c in same["claims"] if c["id"] == "splits-evenly")["status"] == "measured"


def test_a_cell_that_did_not_finish_is_not_read():
    evidence.clear()
    values = sc.validate("params-not-updated", {"steps": 2})
    run_cells("params-not-updated", values, only=["overwrite"])
    good = evidence.latest("params-not-updated/overwrite")
    assert good.status == "done"
    params = {name: values[name] for name in sc.get("params-not-updated").used("overwrite")}
    with evidence.executing("cell-9", "exec-broken"):
        evidence.start("params-not-updated/overwrite", **params)  # the cell starts, then raises before finish
    doc = sc.run("params-not-updated", values, experiments=["overwrite"])
    assert {c["status"] for c in doc["claims"]} == {"needs-run"}
    assert "again (its last run, execution exec-broken, did not finish)" in doc["claims"][0]["explanation"]


def test_a_recording_must_name_exactly_the_values_its_cell_uses():
    with pytest.raises(ValueError, match=r"missing \['devices'\]"):
        evidence.start("params-not-updated/overwrite", placement="auto", batch_size=8, input_size=10, output_size=5,
                       seed=0)
    with pytest.raises(sc.UnknownTemplate, match="verdicts cell"):
        evidence.start("params-not-updated/verdicts")


def test_the_cell_and_execution_come_from_the_kernel_when_no_runner_names_them(monkeypatch):
    from mgpulab_kernel import kernel
    monkeypatch.setattr(kernel, "current_execution", lambda: kernel.ExecutionContext("c-7", "e-42", 3))
    where = evidence.current_execution()
    assert (where.cell_id, where.execution_id, where.count) == ("c-7", "e-42", 3)
    with evidence.executing("cli-cell", "cli-run"):
        assert evidence.current_execution().execution_id == "cli-run"
