"""Where runs go: the device plan (pure, any GPU count) and how this host applies it."""
from __future__ import annotations

import pytest
import torch
from torch import nn

import mgpulab as lab
from mgpulab import devices
from mgpulab.plan import PlanError, cpu_device_limit, largest, plan

H100 = "NVIDIA H100 80GB HBM3"


def names(gpus):
    return [H100] * gpus


@pytest.mark.parametrize("gpus, count, placement, kind, devs", [
    (0, 4, "auto", "cpu-emulated", ("cpu",) * 4),
    (4, 4, "auto", "cuda", ("cuda:0", "cuda:1", "cuda:2", "cuda:3")),
    (4, 2, "auto", "cuda", ("cuda:0", "cuda:1")),
    (2, 4, "auto", "cuda-shared", ("cuda:0", "cuda:1", "cuda:0", "cuda:1")),  # round-robin over the GPUs
    (1, 2, "auto", "cuda-shared", ("cuda:0", "cuda:0")),
    (4, 2, "cpu", "cpu-emulated", ("cpu", "cpu")),
    (8, 8, "cuda", "cuda", tuple(f"cuda:{i}" for i in range(8))),
])
def test_data_parallel_plan_uses_one_gpu_per_device_or_shares_them_or_the_cpu(gpus, count, placement, kind, devs):
    p = plan(count, "DataParallel", gpus, placement=placement, gpu_names=names(gpus), cores=16)
    assert (p.kind, p.devices, p.count, p.backend) == (kind, devs, count, None)
    assert p.streams == (kind == "cuda-shared")
    assert p.emulated == (kind != "cuda")


def test_labels_say_what_runs_and_why():
    shared = plan(4, "DataParallel", 1, gpu_names=[H100], cores=16)
    assert shared.label.startswith(f"4 virtual devices on 1× {H100} (streams), emulated DataParallel")
    assert "4 devices requested, this host has 1 GPU" in shared.label
    assert plan(2, "DataParallel", 4, gpu_names=names(4)).label == f"2× {H100}, CUDA, DataParallel"
    assert plan(2, "DataParallel", 0, cores=2).label == "2× cpu, emulated DataParallel (threads in one process, 2 cores)"
    chosen = plan(2, "DataParallel", 4, placement="cpu", cores=2)
    assert chosen.label.endswith("placement 'cpu': CPU emulation chosen on a host with 4 GPUs")
    ranks = plan(4, "DDP", 1, gpu_names=[H100])
    assert ranks.label.startswith(f"4 ranks sharing 1× {H100} (up to 4 per GPU), DDP over gloo")
    assert "NCCL refuses two ranks on one GPU" in ranks.label
    assert plan(2, "DDP", 0, cores=2).label == "2× cpu, DDP over gloo (one process per rank, 2 cores)"


@pytest.mark.parametrize("gpus, count, backend, backend_map, expected", [
    (0, 2, None, False, ("gloo", "gloo", "cpu-emulated", ("cpu", "cpu"))),
    (2, 2, None, False, ("nccl", "nccl", "cuda", ("cuda:0", "cuda:1"))),
    (2, 2, None, True, ("nccl", "cpu:gloo,cuda:nccl", "cuda", ("cuda:0", "cuda:1"))),  # CPU tensors get gloo
    (4, 2, None, False, ("nccl", "nccl", "cuda", ("cuda:0", "cuda:1"))),
    (2, 4, None, True, ("gloo", "gloo", "cuda-shared", ("cuda:0", "cuda:1", "cuda:0", "cuda:1"))),
    (1, 2, None, False, ("gloo", "gloo", "cuda-shared", ("cuda:0", "cuda:0"))),
    (4, 4, "gloo", False, ("gloo", "gloo", "cuda", tuple(f"cuda:{i}" for i in range(4)))),  # gloo carries CUDA tensors
    (4, 4, "nccl", True, ("nccl", "nccl", "cuda", tuple(f"cuda:{i}" for i in range(4)))),
])
def test_ddp_backend_follows_where_the_ranks_tensors_live(gpus, count, backend, backend_map, expected):
    p = plan(count, "DDP", gpus, backend=backend, gpu_names=names(gpus), backend_map=backend_map)
    assert (p.backend, p.init_backend, p.kind, p.devices) == expected


def test_cpu_ranks_on_a_gpu_host_get_gloo():
    p = plan(2, "DDP", 4, placement="cpu")
    assert (p.backend, p.devices, p.kind) == ("gloo", ("cpu", "cpu"), "cpu-emulated")
    assert "placement 'cpu': CPU ranks chosen on a host with 4 GPUs" in p.label


@pytest.mark.parametrize("gpus, count, backend, placement, largest_value, words", [
    (1, 2, "nccl", "auto", 1, "the largest world size that works with NCCL here is 1"),
    (0, 1, "nccl", "auto", 0, "needs GPUs and this host has none"),
    (4, 2, "nccl", "cpu", 0, "placement 'cpu' keeps them on the CPU"),
    (0, 2, None, "cuda", 0, "placement 'cuda' needs a GPU"),
])
def test_what_no_configuration_serves_is_refused_naming_what_works(gpus, count, backend, placement, largest_value,
                                                                     words):
    with pytest.raises(PlanError, match=words) as refused:
        plan(count, "DDP", gpus, backend=backend, placement=placement)
    assert refused.value.largest == largest_value


def test_the_labs_own_bounds_name_the_largest_value():
    with pytest.raises(PlanError, match="the largest value that works here is 4") as refused:
        plan(8, "DataParallel", 0, cores=2, limits=True)
    assert refused.value.largest == 4
    assert plan(8, "DataParallel", 0, cores=2).count == 8  # the toolkit itself does not impose them
    assert largest("DDP", 1, cores=2) == 8 and largest("DDP", 0, cores=16) == 8 and cpu_device_limit(2) == 4
    assert largest("DDP", 2, backend="nccl") == 2


@pytest.mark.parametrize("count, engine, gpus, options, error", [
    (0, "DataParallel", 4, {}, ValueError),
    (2, "DDP", 2, {"backend": "mpi"}, ValueError),
    (2, "DataParallel", 2, {"backend": "gloo"}, ValueError),  # a backend is DDP's
    (2, "DataParallel", 2, {"placement": "gpu"}, ValueError),
    (2, "DataParallel", -1, {}, ValueError),
    (True, "DataParallel", 2, {}, TypeError),
    (2, "FSDP", 2, {}, ValueError),
])
def test_bad_requests_are_refused(count, engine, gpus, options, error):
    with pytest.raises(error):
        plan(count, engine, gpus, **options)


def test_device_ids_beyond_the_gpus_are_virtual_devices():
    assert plan(None, "DataParallel", 4, device_ids=[0, 2]).devices == ("cuda:0", "cuda:2")
    shared = plan(None, "DataParallel", 2, device_ids=[0, 3])
    assert shared.kind == "cuda-shared" and shared.devices == ("cuda:0", "cuda:1")
    assert plan(None, "DataParallel", 0, default_count=3).count == 3
    assert plan(None, "DataParallel", 4).count == 4  # all GPUs


@pytest.mark.skipif(devices.cuda_device_count() > 0, reason="checks the CPU path")
def test_this_host_runs_the_cpu_path():
    assert lab.devices.device(0) == torch.device("cpu")
    assert lab.devices.device(3) == torch.device("cpu")
    assert lab.devices.ddp_backend(2) == "gloo"
    assert lab.devices.rank_device() == torch.device("cpu")
    model = nn.Linear(2, 2)
    assert lab.devices.device_of(model) == torch.device("cpu")
    assert lab.devices.device_of(lab.DataParallel(model, device_ids=[0, 1])) == torch.device("cpu")
    assert lab.device_mode(2, "DDP")["label"].startswith("2× cpu, DDP over gloo")
    with pytest.raises(PlanError, match="placement 'cuda' needs a GPU"):
        lab.devices.device(0, "cuda")


def test_one_plan_for_what_is_said_and_what_is_done(monkeypatch):
    """A 2-GPU host seen through the same plan: device_mode, device() and DataParallel agree."""
    monkeypatch.setattr(devices, "cuda_device_count", lambda: 2)
    monkeypatch.setattr(devices, "gpu_names", lambda: (H100, H100))
    said = lab.device_mode(4, "DataParallel")
    assert said["kind"] == "cuda-shared" and said["devices"] == ["cuda:0", "cuda:1", "cuda:0", "cuda:1"]
    assert [lab.devices.device(i) for i in range(4)] == [torch.device(d) for d in said["devices"]]
    ddp = lab.device_mode(4, "DDP")
    assert ddp["backend"] == "gloo" and "4 ranks sharing" in ddp["label"]
    with pytest.raises(PlanError, match="largest world size that works with NCCL here is 2"):
        lab.device_mode(4, "DDP", backend="nccl")
    cpu = lab.DataParallel(nn.Linear(3, 1), device_ids=[0, 1, 2, 3], placement="cpu")
    assert isinstance(cpu, lab.EmulatedDataParallel) and cpu.device_mode.kind == "cpu-emulated"
    assert cpu(torch.randn(8, 3)).shape == (8, 1)
