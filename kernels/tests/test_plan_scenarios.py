"""Every scenario's device values against the device plan, for hosts with 0, 1, 2, 4 and 8 GPUs.

Pure planning (no GPU needed, so these run everywhere): each scenario's defaults run on every
host — one GPU per device when there are enough, devices sharing the GPUs when there are fewer,
the CPU emulation without one — and a value no host serves is refused naming the largest that works.
"""
from __future__ import annotations

import pytest

import mgpulab_scenarios as sc
from mgpulab.plan import PlanError, plan
from mgpulab_scenarios import ParameterError, core

GPU_COUNTS = (0, 1, 2, 4, 8)
ENGINES = ("DataParallel", "DDP")
CORES = 16  # a GPU host like the one that was measured
DEVICE_PARAMS = [(sid, name) for sid in sc.IDS for name in ("devices", "world_size")
                 if any(p.name == name for p in sc.get(sid).parameters)]


@pytest.fixture
def host(monkeypatch):
    def use(gpus, cores=CORES):
        monkeypatch.setattr(core, "this_host", lambda: core.Host(gpus=gpus, cores=cores))
    return use


def expected_kind(count, gpus, placement):
    if gpus == 0 or placement == "cpu":
        return "cpu-emulated"
    return "cuda" if count <= gpus else "cuda-shared"


def test_every_scenario_has_one_device_parameter_and_the_placement_choice():
    assert {sid for sid, _ in DEVICE_PARAMS} == set(sc.IDS)
    for sid in sc.IDS:
        placement = sc.get(sid).parameter("placement")
        assert placement.type == "choice" and placement.choices == ("auto", "cpu") and placement.default == "auto"




@pytest.mark.parametrize("gpus", GPU_COUNTS)
@pytest.mark.parametrize("scenario_id, name", DEVICE_PARAMS)
def test_defaults_run_on_every_host_and_the_plan_says_how(host, gpus, scenario_id, name):
    host(gpus)
    for placement in ("auto", "cpu"):
        values = sc.validate(scenario_id, {"placement": placement})  # refused nothing
        count = values[name]
        for engine in ENGINES:
            p = plan(count, engine, gpus, placement=placement, gpu_names=["GPU"] * gpus, cores=CORES, limits=True)
            kind = expected_kind(count, gpus, placement)
            assert (p.kind, p.count) == (kind, count), (scenario_id, engine, gpus, placement)
            if kind == "cpu-emulated":
                assert p.devices == ("cpu",) * count
            else:
                assert p.devices == tuple(f"cuda:{i % gpus}" for i in range(count))
            if engine == "DDP":
                # NCCL only with a GPU of its own per rank; sharing or the CPU: gloo
                assert p.backend == ("nccl" if kind == "cuda" else "gloo")
            if kind == "cuda-shared":
                assert "ranks sharing" in p.label or "virtual devices on" in p.label
                assert f"this host has {gpus} GPU" in p.label  # the reason is in the label


@pytest.mark.parametrize("gpus", GPU_COUNTS)
@pytest.mark.parametrize("scenario_id, name", DEVICE_PARAMS)
def test_maxima_are_served_or_refused_naming_the_largest_value(host, gpus, scenario_id, name):
    host(gpus, cores=2)  # the small host bounds the CPU emulation at 4
    parameter = sc.get(scenario_id).parameter(name)
    offered = sc.get(scenario_id).effective(parameter)
    assert offered.max == (parameter.max if gpus > 0 else 4)  # what the form offers here
    assert sc.validate(scenario_id, {name: offered.max})[name] == offered.max
    for engine in ENGINES:
        assert plan(int(offered.max), engine, gpus, gpu_names=["GPU"] * gpus, cores=2, limits=True).count == offered.max
    if offered.max < parameter.max:
        with pytest.raises(ParameterError, match=r"the largest value that works here is 4; allowed range \[1, 4\]"):
            sc.validate(scenario_id, {name: parameter.max})
    if gpus > 0:  # the CPU emulation, chosen on a GPU host, has the CPU's bound
        with pytest.raises(ParameterError, match="emulates at most 4 CPU"):
            sc.validate(scenario_id, {name: parameter.max, "placement": "cpu"})


@pytest.mark.parametrize("gpus", GPU_COUNTS)
def test_nccl_asked_for_more_ranks_than_gpus_names_the_largest_world_size(gpus):
    for count in (2, 4, 8):
        if count <= gpus:
            assert plan(count, "DDP", gpus, backend="nccl").backend == "nccl"
            continue
        with pytest.raises(PlanError) as refused:
            plan(count, "DDP", gpus, backend="nccl")
        assert refused.value.largest == gpus


def test_what_a_run_says_is_what_the_plan_says():
    """On this host: the headless run's device mode is the plan's label for its values."""
    import mgpulab as lab
    from mgpulab_scenarios.headless import run_scenario
    doc = run_scenario("params-not-updated", {"steps": 1, "batch_size": 8}, only=["in-forward"])
    assert doc["deviceMode"] == (f"{lab.device_mode(2, 'DataParallel')['label']}; "
                                 f"DDP: {lab.device_mode(2, 'DDP')['label']}")
