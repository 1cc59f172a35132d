"""Where runs go: the pure GPU/emulation decisions (no GPU here, so the decisions, not CUDA)."""
from __future__ import annotations

import pytest
import torch
from torch import nn

import mgpulab as lab
from mgpulab import devices
from mgpulab.devices import (device_limit_for, index_kind, plan_data_parallel, plan_ddp,
                             rank_device_kind)


@pytest.mark.parametrize("cuda, requested, emulate, expected", [
    (0, 4, None, ("cpu-emulated", 4, None)),
    (0, None, None, ("cpu-emulated", 2, None)),          # the default emulated count
    (4, 4, None, ("cuda", 4, None)),
    (4, 2, None, ("cuda", 2, None)),
    (4, None, None, ("cuda", 4, None)),                   # all GPUs
    (2, 4, None, ("cpu-emulated", 4, "emulated because 4 devices were requested and this host has 2 GPUs")),
    (1, 2, None, ("cpu-emulated", 2, "emulated because 2 devices were requested and this host has 1 GPU")),
    (4, 2, True, ("cpu-emulated", 2, "emulation requested on a host with GPUs")),
    (0, 3, True, ("cpu-emulated", 3, None)),
    (8, 8, False, ("cuda", 8, None)),
])
def test_data_parallel_uses_real_gpus_only_when_there_are_enough(cuda, requested, emulate, expected):
    assert plan_data_parallel(cuda, requested, emulate, default_count=2) == expected


def test_data_parallel_plan_refuses_no_devices():
    with pytest.raises(ValueError):
        plan_data_parallel(4, 0)


@pytest.mark.parametrize("cuda, nprocs, backend, expected", [
    (0, 2, None, ("gloo", False, None)),
    (2, 2, None, ("nccl", True, None)),
    (4, 2, None, ("nccl", True, None)),
    (2, 4, None, ("gloo", False, "CPU ranks because 4 ranks were requested and this host has 2 GPUs")),
    (4, 4, "gloo", ("gloo", False, None)),                # an explicit gloo stays on CPU
    (4, 4, "nccl", ("nccl", True, None)),
])
def test_ddp_uses_nccl_with_one_gpu_per_rank_and_gloo_on_cpu(cuda, nprocs, backend, expected):
    assert plan_ddp(cuda, nprocs, backend) == expected


@pytest.mark.parametrize("cuda, nprocs, backend", [(1, 2, "nccl"), (0, 1, "nccl"), (2, 2, "mpi"), (2, 0, None)])
def test_ddp_plan_refuses_what_cannot_run(cuda, nprocs, backend):
    with pytest.raises(ValueError):
        plan_ddp(cuda, nprocs, backend)


def test_device_limits_come_from_the_gpu_count():
    assert device_limit_for(0) == 4
    assert device_limit_for(2) == 2
    assert device_limit_for(8) == 8
    assert device_limit_for(0, emulated_max=6) == 6


def test_tensor_placement_decisions():
    assert index_kind(0, 0) == "cpu"
    assert index_kind(2, 1) == "cuda"
    assert index_kind(2, 2) == "cpu"  # an emulated device past the GPUs
    with pytest.raises(ValueError):
        index_kind(2, -1)
    assert rank_device_kind("nccl", 4, 3) == "cuda"
    assert rank_device_kind("gloo", 4, 0) == "cpu"
    assert rank_device_kind(None, 4, 0) == "cpu"  # no process group
    assert rank_device_kind("nccl", 2, 2) == "cpu"


@pytest.mark.skipif(devices.cuda_device_count() > 0, reason="checks the CPU path")
def test_this_host_runs_the_cpu_path():
    assert lab.devices.device(0) == torch.device("cpu")
    assert lab.devices.device(3) == torch.device("cpu")
    assert lab.devices.ddp_backend(2) == "gloo"
    assert lab.devices.rank_device() == torch.device("cpu")
    model = nn.Linear(2, 2)
    assert lab.devices.device_of(model) == torch.device("cpu")
    assert lab.devices.device_of(lab.DataParallel(model, device_ids=[0, 1])) == torch.device("cpu")


def test_too_few_gpus_falls_back_to_emulation_and_says_so(monkeypatch):
    monkeypatch.setattr(devices, "cuda_device_count", lambda: 2)
    model = lab.DataParallel(nn.Linear(3, 1), device_ids=[0, 1, 2, 3])
    assert isinstance(model, lab.EmulatedDataParallel)
    assert model.device_mode.label.startswith("4× cpu, emulated DataParallel")
    assert "4 devices were requested and this host has 2 GPUs" in model.device_mode.label
    assert model(torch.randn(8, 3)).shape == (8, 1)
    ddp = devices.detect(4, "DDP")
    assert ddp.kind == "cpu-emulated" and ddp.backend == "gloo" and "this host has 2 GPUs" in ddp.label
    with pytest.raises(ValueError, match="need 4 GPUs"):
        devices.detect(4, "DDP", backend="nccl")
