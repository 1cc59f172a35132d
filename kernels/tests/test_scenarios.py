"""Scenario catalog: templates, parameter validation, headless runs, verdicts computed from evidence."""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import pytest

import mgpulab_scenarios as sc
from mgpulab_scenarios import ParameterError, VERDICTS
from mgpulab_scenarios.core import render_text
from mgpulab_scenarios.headless import run_scenario

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the articles live beside the repo (../shared/seeds); MGPULAB_SEEDS overrides
SEEDS = os.environ.get("MGPULAB_SEEDS") or os.path.normpath(os.path.join(KERNELS, "..", "..", "shared", "seeds"))
HOSTILE = "1); import os; os.system('x')"

# the smallest parameters that still exercise every experiment
SMALL = {
    "dp-basics": {"devices": 2, "batch_size": 8, "hidden": 4, "d_in": 4, "steps": 1, "timing_repeats": 2,
                  "compare_ddp": False},
    "dp-not-starting": {"devices": 2, "input_size": 16, "hidden_size": 16, "batch_size": 4, "num_steps": 2},
    "params-not-updated": {"devices": 2, "batch_size": 8, "steps": 2},
    "incomplete-results-gil": {"devices": 2, "samples": 40, "batch_size": 10, "depth": 4, "repeats": 2,
                               "num_workers": 0, "sample_cost_ms": 0.0},
    "hangs": {"world_size": 2, "fault": "none", "steps": 2, "comm_delay_ms": 20.0},
}


def _numbers(obj):
    if isinstance(obj, bool):
        return
    if isinstance(obj, (int, float)):
        if math.isfinite(obj):
            yield float(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _numbers(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _numbers(v)


def _mentions_evidence_number(explanation: str, evidence: dict) -> bool:
    said = [float(m) for m in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", explanation)]
    have = list(_numbers(evidence))
    for a in said:
        for b in have:
            if a == b or (b != 0 and abs(a - b) / abs(b) < 0.01):
                return True
    return False


# -- catalog, quotes, templates ----------------------------------------------------------------

def test_catalog_has_one_scenario_per_seed():
    ids = [s["id"] for s in sc.catalog()]
    assert ids == ["dp-basics", "dp-not-starting", "params-not-updated", "incomplete-results-gil", "hangs"]
    sources = {s["source"] for s in sc.catalog()}
    assert len(sources) == 5
    for s in sc.catalog():
        assert s["claims"] and s["steps"] and s["parameters"] and s["experiments"]
        json.dumps(s)  # JSON-able for the server


@pytest.mark.skipif(not os.path.isdir(SEEDS), reason="seed articles not present")
@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_every_claim_is_quoted_verbatim(scenario_id):
    scenario = sc.get(scenario_id)
    with open(os.path.join(SEEDS, scenario.source), encoding="utf-8") as handle:
        article = handle.read()
    for claim in scenario.claims:
        assert claim.quote in article, f"{scenario_id}/{claim.id} is not verbatim"


@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_templates_render_to_valid_python_with_literals(scenario_id):
    scenario = sc.get(scenario_id)
    cells = [cell for step in scenario.steps for cell in step.cells]
    assert cells
    for cell in cells:
        source = sc.render(f"{scenario_id}/{cell.id}", {})
        assert "{{" not in source
        compile(source, f"<{scenario_id}/{cell.id}>", "exec")
    for step in scenario.steps:
        question, choices = scenario.question(step, {})
        assert question is None or "{" not in question and all("{" not in ch for ch in choices)


@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_every_parameter_rejects_hostile_and_out_of_range_values(scenario_id):
    scenario = sc.get(scenario_id)
    for p in scenario.parameters:
        with pytest.raises(ParameterError, match=re.escape(repr(p.name))):
            sc.validate(scenario_id, {p.name: HOSTILE})
        with pytest.raises(ParameterError, match=re.escape(repr(p.name))):
            sc.validate(scenario_id, {p.name: [1]})
        if p.type in ("int", "float"):
            with pytest.raises(ParameterError, match=r"in \["):
                sc.validate(scenario_id, {p.name: p.max + 1})
            with pytest.raises(ParameterError, match=re.escape(repr(p.name))):
                sc.validate(scenario_id, {p.name: p.min - 1})
            with pytest.raises(ParameterError):
                sc.validate(scenario_id, {p.name: True})  # a bool is not a number here
        if p.type == "float":
            with pytest.raises(ParameterError):
                sc.validate(scenario_id, {p.name: float("nan")})
        if p.type == "bool":
            with pytest.raises(ParameterError):
                sc.validate(scenario_id, {p.name: "True"})
        with pytest.raises(ParameterError):  # command-line text is parsed strictly too
            p.parse(HOSTILE)
    with pytest.raises(ParameterError, match="unknown parameter"):
        sc.validate(scenario_id, {"__import__('os')": 1})


def test_render_inserts_inert_literals_and_refuses_bad_values_before_rendering():
    src = sc.render("hangs/fault", {"fault": "none", "hang_timeout_s": 2.5})
    assert "fault='none'" in src and "hang_timeout_s=2.5" in src
    with pytest.raises(ParameterError, match=r"'fault' must be one of"):
        sc.render("hangs/fault", {"fault": HOSTILE})
    with pytest.raises(ParameterError, match=r"'devices' must be an int in \[1, 8\]"):
        sc.render("dp-basics/split", {"devices": "2); import os"})
    # even if a string reached the renderer it would be a quoted literal, never code
    rendered = render_text("x = {{v}}", {"v": HOSTILE})
    namespace: dict = {}
    exec(compile(rendered, "<t>", "exec"), namespace)
    assert namespace["x"] == HOSTILE
    with pytest.raises(ParameterError):
        render_text("x = {{v}}", {"v": object()})
    with pytest.raises(ParameterError, match="no parameter"):
        render_text("x = {{missing}}", {})


def test_cross_parameter_limit_devices_available():
    from mgpulab_scenarios.core import device_limit
    limit = device_limit()  # what the device plan serves on this host (more GPUs or cores: more devices)
    if limit < 8:  # the parameter's own maximum: only a host that serves fewer has a limit to refuse at
        with pytest.raises(ParameterError, match="exceeds the devices available here"):
            sc.validate("dp-basics", {"devices": limit + 1})
    assert sc.validate("dp-basics", {"devices": min(limit, 8)})["devices"] == min(limit, 8)
    assert sc.validate("dp-basics", {"devices": 1})["devices"] == 1
    with pytest.raises(sc.UnknownScenario):
        sc.validate("nope")


# -- headless runs ------------------------------------------------------------------------------

# One scenario per test, not all five in one module fixture: pytest-xdist spreads them over its workers
# (one fixture running every scenario kept a GPU host's worker busy past the device check's limit).
@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_every_scenario_runs_headless_and_every_claim_has_a_verdict_from_its_numbers(scenario_id):
    doc = run_scenario(scenario_id, SMALL[scenario_id])
    json.dumps(doc)
    assert doc["deviceMode"]
    assert all(e["error"] is None for e in doc["experiments"]), [e["error"] for e in doc["experiments"]]
    assert len(doc["claims"]) == len(sc.get(scenario_id).claims)
    for claim in doc["claims"]:
        assert claim["verdict"] in VERDICTS, claim
        assert _mentions_evidence_number(claim["explanation"], claim["evidence"]), claim["explanation"]


# -- verdicts flip when a parameter changes the evidence ------------------------------------------

def _verdict(doc, claim_id):
    return next(c["verdict"] for c in doc["claims"] if c["id"] == claim_id)


def test_split_verdict_flips_with_divisibility():
    even = run_scenario("dp-basics", {"batch_size": 64, "devices": 4}, only=["split"])
    uneven = run_scenario("dp-basics", {"batch_size": 66, "devices": 4}, only=["split"])
    assert _verdict(even, "splits-evenly") == "holds"
    assert _verdict(uneven, "splits-evenly") == "partly"
    assert uneven["experiments"][0]["evidence"]["samples_per_device"] == [17, 17, 17, 15]


def test_manual_update_verdict_flips_with_what_the_loop_touches():
    primary = run_scenario("params-not-updated", {"manual_target": "module_children"}, only=["train"])
    replicas = run_scenario("params-not-updated", {"manual_target": "replicas"}, only=["train"])
    assert _verdict(primary, "manual-fails") == "does-not-hold"
    assert _verdict(replicas, "manual-fails") == "holds"


def test_padding_and_custom_layer_verdicts_flip_with_their_faults():
    ok = run_scenario("dp-not-starting", {"trim_padding": False, "weight_kind": "parameter"},
                only=["padded", "custom-layer"])
    bad = run_scenario("dp-not-starting", {"trim_padding": True, "weight_kind": "plain_tensor"},
                 only=["padded", "custom-layer"])
    assert _verdict(ok, "padded-errors") == "does-not-hold"
    assert _verdict(bad, "padded-errors") == "holds"
    assert "Gather got an input of invalid size" in next(c for c in bad["claims"] if c["id"] == "padded-errors")[
        "explanation"]
    assert _verdict(ok, "custom-layer") == "does-not-hold"
    assert _verdict(bad, "custom-layer") == "holds"


def test_emulated_oom_verdict_flips_with_the_budget():
    fits = run_scenario("hangs", {"device_memory_mib": 64.0}, only=["oom"])
    oom = run_scenario("hangs", {"device_memory_mib": 0.5}, only=["oom"])
    assert _verdict(fits, "oom-hang") == "does-not-hold"
    assert _verdict(oom, "oom-hang") == "partly"
    assert "emulated OOM" in oom["experiments"][0]["evidence"]["error"]


def test_skipped_collective_is_detected_as_a_hang_and_the_clean_run_is_not():
    # CPU ranks on any host: the stack and timeout wording below are gloo's (an NCCL all_reduce returns
    # at once and the rank waits in the next sync instead; its timeout error reads differently)
    clean = run_scenario("hangs", {"fault": "none", "hang_timeout_s": 2.0, "placement": "cpu"}, only=["fault"])
    hung = run_scenario("hangs", {"fault": "skip_collective", "fix": "pg_timeout", "hang_timeout_s": 2.0,
                                  "pg_timeout_s": 2.0, "placement": "cpu"}, only=["fault", "fix"])
    assert _verdict(clean, "deadlock") == "does-not-hold"
    assert _verdict(hung, "deadlock") == "holds"
    fault, fix = (e["evidence"] for e in hung["experiments"])
    assert fault["status"] == "hang"
    wheres = [r["where"] or "" for r in fault["ranks"]]
    assert any("all_reduce" in w for w in wheres), wheres  # per-rank stacks say where each rank waited
    assert "all_reduce" in fault["expected_stacks"]  # the report can fold them: this experiment hangs on purpose
    assert fix["status"] == "failed" and "Timed out" in fix["summary"]
    assert [e["needed"] for e in hung["experiments"]] == [True, False]  # no claim reads the fix


def test_a_rank_slow_in_the_middle_of_training_looks_hung_but_a_slow_start_does_not():
    """slow_rank sleeps after rank 1's first step: past start-up, longer than hang_timeout_s, so the watchdog
    stops it as a hang although nothing is deadlocked (partly). The same sleep before the first step would be
    start-up, never a hang (test_toolkit_start_up.py)."""
    slow = run_scenario("hangs", {"fault": "slow_rank", "sleep_s": 5.0, "hang_timeout_s": 2.0, "placement": "cpu"},
                        only=["fault"])
    fault = slow["experiments"][0]
    assert fault["status"] == "measured" and fault["evidence"]["status"] == "hang", fault
    assert [r["last_step"] for r in fault["evidence"]["ranks"]] == [0, 0]  # both past their first step
    assert _verdict(slow, "deadlock") == "partly"


# -- verdict functions are functions of the evidence -----------------------------------------------

def _claim(scenario_id, claim_id):
    return next(c for c in sc.get(scenario_id).claims if c.id == claim_id)


def _timing(*values):
    from mgpulab_scenarios import stats
    return stats.spread(values).to_dict()


def _scaling(single, dp, speedup, kind="cpu-emulated", cores=8, ddp=None):
    plan = {"kind": kind, "host_cores": cores, "label": f"4x {kind}"}
    variants = [{"tag": "1 device", "engine": "single", "devices": 1, "step_ms": single, "speedup": 1.0, "plan": plan},
                {"tag": "DataParallel x4", "engine": "DataParallel", "devices": 4, "step_ms": dp, "speedup": speedup,
                 "plan": plan}]
    if ddp is not None:
        variants.append({"tag": "DDP x4", "engine": "DDP", "devices": 4, "step_ms": ddp, "speedup": 1.0, "plan": plan})
    return {"devices": 4, "basis": "sample", "plan": plan, "variants": variants}


def test_timing_verdicts_flip_to_inconclusive_when_the_spread_exceeds_the_effect_and_back():
    not_linear = _claim("dp-basics", "not-linear").verdict
    noisy = _scaling(_timing(1.0, 4.0, 7.0), _timing(1.5, 3.5, 6.5), 1.1)  # medians 0.5 apart, ranges overlap by 5
    verdict, text = not_linear(noisy)
    assert verdict == "inconclusive"
    assert "no more than their ranges overlap" in text and "more steps or repeats" in text
    quiet = _scaling(_timing(3.9, 4.0, 4.1), _timing(3.4, 3.5, 3.6), 1.1)  # the same effect, without the spread
    assert not_linear(quiet)[0] == "holds"
    few = _scaling(_timing(3.9, 4.0), _timing(1.0, 1.1), 3.6)  # two repeats cannot show a spread
    assert not_linear(few)[0] == "inconclusive" and "too few timed repeats" in not_linear(few)[1]
    ddp = _claim("dp-basics", "ddp-more-efficient").verdict
    assert ddp(_scaling(_timing(4, 4, 4), _timing(2, 2.1, 2.2), 1.9, ddp=_timing(1, 1.1, 1.2)))[0] == "holds"
    assert ddp(_scaling(_timing(4, 4, 4), _timing(2, 2.1, 2.2), 1.9, ddp=_timing(1.5, 2.15, 3)))[0] == "inconclusive"


def test_a_superlinear_speedup_on_shared_hardware_is_never_a_result():
    fast = _scaling(_timing(4.0, 4.1, 3.9), _timing(0.8, 0.85, 0.9), 4.8, kind="cpu-emulated", cores=2)
    for claim in ("not-linear", "myth-linear"):
        verdict, text = _claim("dp-basics", claim).verdict(fast)
        assert verdict == "inconclusive" and "impossible" in text and "noise" in text
    on_gpus = _scaling(_timing(4.0, 4.1, 3.9), _timing(0.8, 0.85, 0.9), 4.8, kind="cuda", cores=2)
    assert _claim("dp-basics", "not-linear").verdict(on_gpus)[0] == "does-not-hold"  # separate GPUs: a result
    shared = _scaling(_timing(4.0, 4.1, 3.9), _timing(0.8, 0.85, 0.9), 4.8, kind="cuda-shared", cores=16)
    assert _claim("dp-basics", "myth-linear").verdict(shared)[0] == "inconclusive"


def test_verdict_functions_are_not_constant_on_synthetic_evidence():
    split = {"samples_per_device": [16, 16, 16, 16], "batch_size": 64, "devices": 4, "rows_scattered": 64}
    assert _claim("dp-basics", "splits-evenly").verdict(split)[0] == "holds"
    assert _claim("dp-basics", "splits-evenly").verdict(
        dict(split, samples_per_device=[2, 2, 2], batch_size=6, rows_scattered=6))[0] == "partly"

    # scaling: verdicts from the speed-up and the step-time spreads of the charts
    clear = _scaling(_timing(4.0, 4.1, 3.9, 4.05), _timing(1.6, 1.7, 1.5, 1.65), 2.5)
    assert _claim("dp-basics", "not-linear").verdict(clear)[0] == "holds"
    assert _claim("dp-basics", "myth-linear").verdict(clear)[0] == "does-not-hold"
    linear = _scaling(_timing(4.0, 4.1, 3.9), _timing(1.0, 1.05, 0.95), 4.0)
    assert _claim("dp-basics", "not-linear").verdict(linear)[0] == "does-not-hold"
    assert _claim("dp-basics", "myth-linear").verdict(linear)[0] == "holds"

    complete = {"rows_in": 100, "rows_out": 100, "completeness_pct": 100.0, "nonfinite_outputs": 0, "steps": 4,
                "devices": 2}
    assert _claim("incomplete-results-gil", "incomplete").verdict(complete)[0] == "does-not-hold"
    assert _claim("incomplete-results-gil", "incomplete").verdict(
        dict(complete, rows_out=90, completeness_pct=90.0))[0] == "holds"

    def overhead(single, dp, ddp):
        return {"devices": 2, "forward_kind": "python", "depth": 4, "batch_size": 10, "threads": ["a", "b"],
                "host_cores": 2, "variants": [{"tag": "1 device", "forward_ms": single, "per_rank_ms": [1.0]},
                                              {"tag": "DataParallel x2", "forward_ms": dp, "per_rank_ms": [2.5]},
                                              {"tag": "DDP x2", "forward_ms": ddp, "per_rank_ms": [1.0, 1.0]}]}

    gil = overhead(_timing(1.0, 1.05, 0.95), _timing(2.5, 2.6, 2.4), _timing(1.0, 1.1, 0.9))
    assert _claim("incomplete-results-gil", "gil-restricts").verdict(gil)[0] == "holds"
    same = overhead(_timing(1.0, 1.05, 0.95), _timing(1.0, 1.02, 0.98), _timing(1.0, 1.1, 0.9))
    assert _claim("incomplete-results-gil", "gil-restricts").verdict(same)[0] == "inconclusive"  # within the noise
    faster = overhead(_timing(1.0, 1.05, 0.95), _timing(0.5, 0.52, 0.48), _timing(1.0, 1.1, 0.9))
    assert _claim("incomplete-results-gil", "gil-restricts").verdict(faster)[0] == "does-not-hold"
    assert _claim("incomplete-results-gil", "ddp-avoids-gil").verdict(gil)[0] == "holds"
    slow_ddp = overhead(_timing(1.0, 1.05, 0.95), _timing(2.5, 2.6, 2.4), _timing(3.0, 3.1, 2.9))
    assert _claim("incomplete-results-gil", "ddp-avoids-gil").verdict(slow_ddp)[0] == "does-not-hold"

    backward = {"devices": 2, "replicas": 2, "backward_thread_concurrency": 1.0, "backward_replica_overlap": 1.8,
                "forward_concurrency": 1.6, "backward_threads": ["MainThread"], "forward_threads": ["r0", "r1"],
                "main_thread": "MainThread", "backward_ms": _timing(5, 5, 5), "optimizer_ms": _timing(1, 1, 1),
                "step_ms": _timing(9, 9, 9), "optimizer_devices": ["cpu"], "optimizer_tensors": 8,
                "plan": {"kind": "cpu-emulated", "label": "2x cpu", "gpus_used": 0}}
    assert _claim("incomplete-results-gil", "backward-sequential").verdict(backward)[0] == "partly"
    assert _claim("incomplete-results-gil", "gil-prevents-concurrency").verdict(backward)[0] == "does-not-hold"
    gpus = dict(backward, backward_threads=["dev0", "dev1"], backward_thread_concurrency=1.9,
                plan={"kind": "cuda", "label": "2x GPU", "gpus_used": 2})
    assert _claim("incomplete-results-gil", "backward-sequential").verdict(gpus)[0] == "does-not-hold"
    serial = dict(gpus, backward_thread_concurrency=1.0)
    assert _claim("incomplete-results-gil", "backward-sequential").verdict(serial)[0] == "holds"
    assert _claim("incomplete-results-gil", "gil-prevents-concurrency").verdict(serial)[0] == "partly"

    uneven = {"world_size": 2, "batches": [10, 20], "status": "ok", "summary": "", "seconds": 1.0, "diverged": [],
              "rows_compared": 4, "final_loss": 1.5, "final_rank_loss": [1.0, 2.0]}
    assert _claim("hangs", "uneven-batches").verdict(uneven)[0] == "does-not-hold"
    assert _claim("hangs", "uneven-batches").verdict(dict(uneven, status="hang", summary="stuck"))[0] == "holds"

    def link(baseline, delayed, comm0=2.0, comm1=52.0):
        return {"world_size": 2, "comm_delay_ms": 50.0, "status": "ok", "summary": "", "seconds": 1.0,
                "backend": "gloo", "per_rank": [{"rank": 0, "baseline": {"step_ms": baseline, "comm_ms": _timing(comm0, comm0, comm0),
                                                                         "comm_share": comm0 / baseline["mean"]},
                                                 "delayed": {"step_ms": delayed, "comm_ms": _timing(comm1, comm1, comm1),
                                                             "comm_share": comm1 / delayed["mean"]}}]}

    slow = link(_timing(10.0, 10.5, 9.5), _timing(60.0, 61.0, 59.0))
    assert _claim("hangs", "slow-link").verdict(slow)[0] == "partly"
    assert _claim("hangs", "waiting-dominates").verdict(slow)[0] == "holds"
    assert _claim("hangs", "stall-indefinitely").verdict(slow)[0] == "does-not-hold"
    flat = link(_timing(10.0, 10.5, 9.5), _timing(10.2, 10.4, 10.6), comm1=2.1)
    assert _claim("hangs", "slow-link").verdict(flat)[0] == "does-not-hold"
    noisy = link(_timing(10.0, 20.0, 30.0), _timing(12.0, 22.0, 31.0))
    assert _claim("hangs", "slow-link").verdict(noisy)[0] == "inconclusive"
    assert _claim("hangs", "slow-link").verdict(dict(slow, status="hang", summary="x"))[0] == "holds"

    state = {"devices": 2, "forwards": 3, "rows_per_device": [4, 4], "single": {"calls": 3, "rows_seen": 24.0},
             "dp": {"calls": 0, "rows_seen": 12.0}}
    assert _claim("params-not-updated", "updates-discarded").verdict(state)[0] == "partly"
    assert _claim("params-not-updated", "updates-discarded").verdict(
        dict(state, dp={"calls": 3, "rows_seen": 24.0}))[0] == "does-not-hold"

    fault = {"fault": "skip_collective", "sleep_s": 1.0, "hang_timeout_s": 3.0, "status": "hang", "seconds": 4.0,
             "summary": "", "ranks": [{"rank": 0, "state": "killed", "where": "all_reduce", "last_step": 3,
                                       "error": None}]}
    assert _claim("hangs", "deadlock").verdict(fault)[0] == "holds"
    assert _claim("hangs", "deadlock").verdict(dict(fault, fault="slow_rank"))[0] == "partly"  # slow, not deadlocked
    assert _claim("hangs", "deadlock").verdict(dict(fault, status="ok"))[0] == "does-not-hold"

    copied = {"devices": 2, "model_params": 10, "params_per_replica": [10, 10], "rows_per_replica": [2, 2], "rows": 4}
    assert _claim("dp-not-starting", "model-parallelism").verdict(copied)[0] == "does-not-hold"
    assert _claim("dp-not-starting", "model-parallelism").verdict(
        dict(copied, params_per_replica=[5, 5]))[0] == "holds"


def _placement(gpus=1, **cases):
    ok = {"ok": True, "output_device": "cuda:0", "error": None}
    default = {"cpu_model": {"ok": False, "output_device": None, "error": "RuntimeError: module must have its "
                             "parameters and buffers on device cuda:0"}, "moved_after_wrap": ok, "cpu_input": ok}
    return {"gpus": gpus, "device_ids": list(range(gpus)), "torch": "2.4.0", "placement": "auto",
            "cases": dict(default, **cases) if gpus else {}}


def test_placement_verdicts_need_a_gpu_and_reach_every_value_with_one():
    on_gpu, on_input = _claim("dp-basics", "model-on-gpu-first").verdict, _claim("dp-basics", "inputs-on-default-gpu").verdict
    for verdict in (on_gpu, on_input):  # no CUDA: never a made-up verdict
        for evidence in (_placement(gpus=0), dict(_placement(gpus=0), placement="cpu")):
            value, text = verdict(evidence)
            assert value == "inconclusive" and "needs a GPU" in text
    failed = {"ok": False, "output_device": None, "error": "RuntimeError: Expected all tensors to be on the same device"}
    assert on_gpu(_placement())[0] == "partly"  # fails at the forward, moving the wrapper later works
    assert on_gpu(_placement(moved_after_wrap=failed))[0] == "holds"
    assert on_gpu(_placement(cpu_model={"ok": True, "output_device": "cpu", "error": None}))[0] == "holds"  # fallback
    assert on_gpu(_placement(cpu_model={"ok": True, "output_device": "cuda:0", "error": None}))[0] == "does-not-hold"
    assert on_input(_placement())[0] == "does-not-hold"  # a CPU input is scattered
    assert on_input(_placement(cpu_input=failed))[0] == "holds"
    two = _placement(gpus=2, other_gpu_input=failed)
    assert on_input(two)[0] == "partly"
    assert on_input(dict(two, cases=dict(two["cases"], other_gpu_input={"ok": True, "output_device": "cuda:0",
                                                                        "error": None})))[0] == "does-not-hold"


def test_ddp_replicates_once_and_the_update_on_the_main_device_reach_every_value():
    once = _claim("dp-basics", "ddp-replicates-once").verdict
    dp = {"distinct_replica_objects": 6, "forwards": 3, "replicas_per_forward": 2}
    rank = {"rank": 0, "steps": 3, "distinct_modules": 1, "distinct_parameter_sets": 1, "distinct_storages": 1,
            "tensors": 4, "device": "cpu"}
    run = {"devices": 2, "sizes": [dp], "ddp": [rank, dict(rank, rank=1)]}
    assert once(run)[0] == "holds"
    assert once(dict(run, ddp=[rank, dict(rank, rank=1, distinct_parameter_sets=3)]))[0] == "does-not-hold"
    assert once(dict(run, sizes=[dict(dp, distinct_replica_objects=2)]))[0] == "partly"
    assert once(dict(run, devices=1, ddp=[]))[0] == "inconclusive"

    main = _claim("dp-basics", "update-on-main-gpu").verdict
    update = {"optimizer_tensors": 4, "model_tensors": 4, "optimizer_holds_the_model": True,
              "optimizer_devices": ["cuda:0"], "replica_devices": ["cuda:0", "cuda:1"], "replicas": 2, "device0": "cuda:0"}
    gpus = {"devices": 2, "update": update, "plan": {"kind": "cuda", "label": "2x GPU", "host_cores": 16}}
    assert main(gpus)[0] == "holds"
    assert main(dict(gpus, update=dict(update, optimizer_tensors=8, optimizer_holds_the_model=False)))[0] == "does-not-hold"
    assert main(dict(gpus, update=dict(update, optimizer_devices=["cuda:0", "cuda:1"])))[0] == "partly"
    emulated = dict(gpus, update=dict(update, optimizer_devices=["cpu"], replica_devices=["cpu"], device0="cpu"),
                    plan={"kind": "cpu-emulated", "label": "2x cpu", "host_cores": 2})
    value, text = main(emulated)  # every emulated device is the CPU: where the update runs cannot show
    assert value == "inconclusive" and "2 or more GPUs" in text


def test_mismatched_dtypes_verdict_reaches_every_value():
    dtype = _claim("hangs", "dtype-mismatch").verdict
    rank = {"rank": 0, "state": "failed", "last_step": None, "where": None, "error": "killed by SIGABRT"}
    failed = {"world_size": 2, "hang_timeout_s": 3.0, "dtypes": [None, None], "status": "failed",
              "summary": "rank 0 failed first: killed by SIGABRT", "seconds": 1.5, "diverged": [],
              "ranks": [rank, dict(rank, rank=1, error="RuntimeError: Connection reset by peer")],
              "expected_stacks": None}
    assert dtype(failed)[0] == "partly"
    stuck = [dict(rank, state="killed", where="all_reduce (distributed_c10d.py:1541)", error=None, last_step=0),
             dict(rank, rank=1, state="killed", where="wait (threading.py:324)", error=None, last_step=0)]
    assert dtype(dict(failed, status="hang", seconds=4.0, ranks=stuck))[0] == "holds"
    done = [dict(rank, state="ok", error=None, last_step=2), dict(rank, rank=1, state="ok", error=None, last_step=2)]
    ran = dict(failed, status="ok", dtypes=["float32", "float64"], ranks=done)
    assert dtype(ran)[0] == "does-not-hold"
    value, text = dtype(dict(ran, diverged=["0.weight"]))
    assert value == "does-not-hold" and "diverged" in text
    assert dtype(dict(ran, dtypes=["float32", "float32"]))[0] == "inconclusive"  # no mismatch was made
    # a run stopped by its time limit gives no verdict at all: the experiment failed (test_scenario_failures.py)
    provokes = sc.get("hangs").experiment("dtype-mismatch").provokes
    assert "time_limit" not in provokes and {"hang", "failed:collective", "failed:abort"} <= set(provokes)


def test_ddp_needs_initialization_verdict_reaches_every_value():
    needs = _claim("dp-not-starting", "ddp-needs-init").verdict
    refused = {"ok": False, "error": "RuntimeError: Default process group has not been initialized"}
    built = {"ok": True, "error": None}
    rank = {"rank": 0, "initialized_before": False, "without_init": refused, "with_init": built}
    run = {"devices": 2, "status": "ok", "summary": "", "seconds": 1.0, "ranks": [rank, dict(rank, rank=1)]}
    value, text = needs(run)
    assert value == "holds" and "Default process group" in text
    assert needs(dict(run, ranks=[dict(rank, without_init=built)]))[0] == "does-not-hold"
    assert needs(dict(run, ranks=[rank, dict(rank, rank=1, with_init=refused)]))[0] == "partly"
    assert needs(dict(run, status="failed", ranks=[]))[0] == "inconclusive"
    assert needs(dict(run, ranks=[dict(rank, initialized_before=True)]))[0] == "inconclusive"  # not without a group


def test_large_batches_verdict_follows_the_relative_overhead_across_batch_sizes_and_the_noise():
    large = _claim("incomplete-results-gil", "large-batches").verdict

    def sweep(*ratios, spread=0.05):
        rows = []
        for k, r in enumerate(ratios):
            rows.append({"rows": 10 * 8 ** k, "one_ms": _timing(1.0, 1.05, 0.95), "dp_ms": _timing(r, r + 0.05, r - 0.05),
                         "ratio": r, "ratio_spread": _timing(r, r + spread, r - spread)})
        return {"devices": 2, "forward_kind": "python", "depth": 4, "batch_size": 10, "batch_sweep": rows}

    assert large(sweep(1.5, 2.0, 3.0))[0] == "holds"
    assert large(sweep(1.5, 3.5, 3.0))[0] == "partly"  # up overall, not steadily
    value, text = large(sweep(4.0, 1.6, 0.7))
    assert value == "does-not-hold" and "shrinks" in text
    value, text = large(sweep(1.5, 1.55, 1.6, spread=0.5))  # the ratios' spread exceeds the change
    assert value == "inconclusive" and "spread" in text
    assert large(dict(sweep(1.5, 2.0, 3.0), devices=1))[0] == "inconclusive"


def _run_placement_cell(placement, devices=2):
    from mgpulab_scenarios import evidence
    source = sc.render("dp-basics/placement", {"placement": placement, "devices": devices})
    exec(compile(source, "<dp-basics/placement>", "exec"), {})  # noqa: S102 - the scenario's own cell
    record = evidence.latest("dp-basics/placement")
    assert record is not None and record.status == "done"
    return {claim: _claim("dp-basics", claim).verdict(record.evidence)
            for claim in ("model-on-gpu-first", "inputs-on-default-gpu")}


def test_placement_cell_runs_everywhere_and_without_cuda_says_it_needs_a_gpu():
    for value, text in _run_placement_cell("cpu").values():  # placement cpu: no CUDA, on any host
        assert value == "inconclusive" and "needs a GPU" in text


@pytest.mark.cuda
def test_placement_cell_on_one_gpu_measures_that_torch_moves_the_model_itself():
    """torch's DataParallel with one device id moves the module to that GPU when it is wrapped: a model
    left on the CPU runs on the GPU (a workshop seat with one GPU, or devices=1)."""
    verdicts = _run_placement_cell("auto", devices=1)
    from mgpulab_scenarios import evidence
    cases = evidence.latest("dp-basics/placement").evidence["cases"]
    assert cases["cpu_model"]["ok"] and cases["cpu_model"]["output_device"] == "cuda:0"
    assert verdicts["model-on-gpu-first"][0] == "does-not-hold"


@pytest.mark.cuda(gpus=2)
def test_placement_cell_measures_torch_data_parallel_on_a_gpu():
    """With two device ids or more, a model left on the CPU is refused at the first forward."""
    verdicts = _run_placement_cell("auto")
    from mgpulab_scenarios import evidence
    cases = evidence.latest("dp-basics/placement").evidence["cases"]
    assert not cases["cpu_model"]["ok"] and "cuda:0" in cases["cpu_model"]["error"]  # checked at the forward
    assert cases["moved_after_wrap"]["ok"] and cases["cpu_input"]["ok"]  # the CPU input is scattered
    assert verdicts["model-on-gpu-first"][0] == "partly"
    assert verdicts["inputs-on-default-gpu"][0] == "does-not-hold"


# -- command line -----------------------------------------------------------------------------------

def _cli(*args):
    env = dict(os.environ, PYTHONPATH=KERNELS)
    return subprocess.run([sys.executable, "-m", "mgpulab_scenarios.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_cli_refuses_bad_ids_and_params_before_running():
    bad = _cli("no-such-scenario")
    assert bad.returncode == 2 and "unknown scenario 'no-such-scenario'" in bad.stderr
    bad = _cli("dp-basics", "--param", f"devices={HOSTILE}")
    assert bad.returncode == 2 and "'devices' must be an int in [1, 8]" in bad.stderr
    bad = _cli("dp-basics", "--param", "devices=0")
    assert bad.returncode == 2 and "'devices'" in bad.stderr
    bad = _cli("dp-basics", "--param", "nope=1")
    assert bad.returncode == 2 and "unknown parameter 'nope'" in bad.stderr


def test_cli_json_is_one_clean_document():
    done = _cli("params-not-updated", "--json", "--param", "steps=2")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["scenario"] == "params-not-updated" and doc["deviceMode"]
    assert {c["verdict"] for c in doc["claims"]} <= set(VERDICTS)
    assert all({"id", "quote", "verdict", "evidence"} <= set(c) for c in doc["claims"])


CELL_DRIVER = r'''
import contextlib, io, json, sys, traceback
import mgpulab_scenarios as sc
params = json.loads(sys.argv[1])
failures = []
if __name__ == "__main__":
    for sid in sc.IDS:
        for step in sc.get(sid).steps:
            for cell in step.cells:
                source = sc.render(f"{sid}/{cell.id}", params[sid])
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        exec(compile(source, f"<{sid}/{cell.id}>", "exec"), {"__name__": "__cell__"})
                except Exception:
                    failures.append(f"{sid}/{cell.id}: {traceback.format_exc()[-400:]}")
    print(json.dumps(failures))
'''


def test_every_rendered_cell_executes():
    params = {
        "dp-basics": {"devices": 2, "batch_size": 8, "timing_repeats": 2},
        "dp-not-starting": {"devices": 2, "input_size": 16, "hidden_size": 16, "num_steps": 2},
        "params-not-updated": {"steps": 2},
        "incomplete-results-gil": {"samples": 40, "batch_size": 10, "repeats": 2, "sample_cost_ms": 0.0},
        "hangs": {"hang_timeout_s": 2.0, "pg_timeout_s": 2.0},
    }
    env = dict(os.environ, PYTHONPATH=KERNELS)
    done = subprocess.run([sys.executable, "-c", CELL_DRIVER, json.dumps(params)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_scenario_notebook_cells_compile_and_the_verdict_cell_prints_measured_verdicts(capsys):
    import ast

    import mgpulab_scenarios as sc
    from mgpulab_scenarios import evidence

    evidence.clear()  # a fresh kernel
    cells = sc.notebook("params-not-updated")
    code = [cell for cell in cells if cell["kind"] == "code"]
    for cell in code:
        ast.parse(cell["source"])
    assert all(cell["template"]["id"].startswith("params-not-updated/") for cell in code[:-1])
    namespace: dict = {}
    exec(compile(code[-1]["source"], "<verdict cell>", "exec"), namespace)  # noqa: S102 - the notebook's own cell
    printed = capsys.readouterr().out
    # nothing ran yet: no verdict is made up, each claim says which cell to run
    assert "verdict: NEEDS-RUN" in printed and "HOLDS" not in printed
    assert "Run the cell 'State mutated inside forward" in printed
    for cell in code:  # the participant runs every cell in order, the verdicts last
        exec(compile(cell["source"], f"<{cell['template']['id']}>", "exec"), namespace)  # noqa: S102
    printed = capsys.readouterr().out
    report = printed[printed.index("== params-not-updated"):]
    assert "NEEDS-RUN" not in report
    assert any(word in report for word in ("HOLDS", "DOES-NOT-HOLD", "PARTLY"))


def test_data_wait_workers_come_from_a_forkserver_that_can_load_the_rows():
    """On a GPU host the cell's process has a CUDA context: its DataLoader workers then come from a forkserver
    (forked ones abort there), which must be able to import the dataset. Checked here with the forkserver."""
    import torch
    from torch.utils.data import DataLoader

    from mgpulab_scenarios.common import SlowRows, worker_context
    assert worker_context(0) is None
    assert worker_context(2) == ("forkserver" if torch.cuda.is_initialized() else None)
    loader = DataLoader(SlowRows(40, 0.0), batch_size=10, num_workers=2, multiprocessing_context="forkserver")
    batches = list(loader)
    assert [len(x) for x, _ in batches] == [10, 10, 10, 10]
    assert torch.equal(torch.cat([x for x, _ in batches]), SlowRows(40, 0.0).x)


def test_slow_link_shares_read_only_the_step_frames():
    """On CUDA the step timer closes with a memory sample of its own for the last step (memory is sampled at most
    every 0.1 s): a frame without step_ms, which broke slow-link on the H200 with KeyError: 'step_ms'."""
    from mgpulab_scenarios.rank_fns import comm_share
    records = [{"rank": r, "step": s, "values": {"step_ms": 10.0, "comm_ms": 4.0 + r}} for s in range(3) for r in (0, 1)]
    records.append({"rank": 0, "step": 2, "values": {"memory_mib": 1.0, "memory_peak_mib": 2.0}})
    assert comm_share(records, 0, range(1, 3)) == {"step_ms": 10.0, "comm_ms": 4.0, "comm_share": 0.4}
    assert comm_share(records, 1, range(1, 3))["comm_ms"] == 5.0
