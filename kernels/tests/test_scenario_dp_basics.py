"""Scenario dp-basics: its small run, the split verdict flipping with divisibility, the timing, placement
and replication verdicts on synthetic evidence, and the placement cell on this host's devices."""
from __future__ import annotations

import pytest

import mgpulab_scenarios as sc
from mgpulab_scenarios.headless import run_scenario
from scenario_helpers import (claim as _claim, check_every_claim_has_a_verdict_from_its_numbers,
                              scaling as _scaling, timing as _timing, verdict as _verdict)

SCENARIO = "dp-basics"  # the small run (conftest's small_run fixture) runs this one


def test_runs_headless_and_every_claim_has_a_verdict_from_its_numbers(small_run):
    check_every_claim_has_a_verdict_from_its_numbers(SCENARIO, small_run)


def test_split_verdict_flips_with_divisibility():
    even = run_scenario("dp-basics", {"batch_size": 64, "devices": 4}, only=["split"])
    uneven = run_scenario("dp-basics", {"batch_size": 66, "devices": 4}, only=["split"])
    assert _verdict(even, "splits-evenly") == "holds"
    assert _verdict(uneven, "splits-evenly") == "partly"
    assert uneven["experiments"][0]["evidence"]["samples_per_device"] == [17, 17, 17, 15]


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
