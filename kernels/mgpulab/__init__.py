"""Multi-GPU Lab experiment toolkit — ``import mgpulab as lab``.

Devices
    ``lab.device_mode(count=None, engine="DataParallel", *, placement="auto",
    backend=None) -> dict`` — the device plan for a run here (one decision,
    :func:`mgpulab.plan.plan`, used by everything below), with an honest
    ``label`` ("2× cpu, emulated DataParallel …", "4× NVIDIA H100, CUDA,
    DataParallel", "4 virtual devices on 1× NVIDIA H100 (streams), emulated
    DataParallel; …"); ``lab.DeviceMode`` (= ``lab.DevicePlan``), ``lab.PlanError``.
    ``placement``: "auto" (the GPUs, shared when there are fewer than
    devices; the CPU emulation without one), "cuda", or "cpu".
DataParallel
    ``lab.DataParallel(module, device_ids=None, output_device=None, dim=0, *,
    placement=None, emulate=None, keep_replicas=False)`` — real
    ``nn.DataParallel`` with one GPU per device, the emulation on virtual
    devices sharing the GPUs (CUDA streams) or on the CPU; ``.last_phases``
    is a ``lab.PhaseTimes``, ``.device_mode`` the plan.
Multi-process (DDP)
    ``lab.launch(fn, nprocs, *, args=(), kwargs=None, backend=None,
    placement="auto", timeout_s=120, time_limit_s=None, hang_timeout_s=None,
    launcher="auto")``,
    ``lab.launch_script(path, nprocs, argv=())``, ``lab.launch_code(source,
    nprocs)`` -> ``lab.LaunchResult``; inside a rank ``lab.rank()``,
    ``lab.world_size()``, ``lab.local_rank()``.
Measuring
    ``lab.StepTimer(model)`` (phases data/forward/backward/comm/optimizer,
    samples, memory, per device; never synchronises the GPU inside a step);
    ``lab.log(step, loss=None, **values)`` (CUDA values read without a sync);
    ``lab.beat(step)`` (heartbeat); ``lab.set_run_id(run_id)``.
Inspecting
    ``lab.replica_state(dp_model)``, ``lab.rank_state(ddp_model)`` ->
    ``lab.StateTable`` (``.render()``, ``.diverged()``, ``.to_dict()``).
Submodules: ``devices``, ``plan``, ``data_parallel``, ``launcher``, ``timing``,
``metrics``, ``heartbeat``, ``watchdog``, ``inspect``, ``gpu_monitor``.

Attributes load on first use, so ``import mgpulab`` does not import torch.
"""
from __future__ import annotations

import importlib
from typing import Any, Dict, Tuple

_EXPORTS: Dict[str, Tuple[str, str]] = {
    "DeviceMode": ("devices", "DeviceMode"),
    "DevicePlan": ("plan", "DevicePlan"),
    "PlanError": ("plan", "PlanError"),
    "detect_devices": ("devices", "detect"),
    "DataParallel": ("data_parallel", "DataParallel"),
    "EmulatedDataParallel": ("data_parallel", "EmulatedDataParallel"),
    "PhaseTimes": ("data_parallel", "PhaseTimes"),
    "EmulatedDeviceMismatch": ("data_parallel", "EmulatedDeviceMismatch"),
    "launch": ("launcher", "launch"),
    "launch_script": ("launcher", "launch_script"),
    "launch_code": ("launcher", "launch_code"),
    "LaunchResult": ("launcher", "LaunchResult"),
    "RankOutcome": ("launcher", "RankOutcome"),
    "torchrun_status": ("launcher", "torchrun_status"),
    "StepTimer": ("timing", "StepTimer"),
    "log": ("metrics", "log"),
    "set_run_id": ("metrics", "set_run_id"),
    "beat": ("heartbeat", "beat"),
    "replica_state": ("inspect", "replica_state"),
    "rank_state": ("inspect", "rank_state"),
    "StateTable": ("inspect", "StateTable"),
    "rank": ("_env", "rank"),
    "world_size": ("_env", "world_size"),
    "local_rank": ("_env", "local_rank"),
}
_SUBMODULES = {"devices", "plan", "data_parallel", "launcher", "timing", "metrics", "heartbeat", "watchdog", "inspect",
               "gpu_monitor"}

__all__ = sorted([*_EXPORTS, "device_mode", *_SUBMODULES])


def device_mode(count: Any = None, engine: str = "DataParallel", **options: Any) -> dict:
    """``DeviceMode`` as a plain dict for the server (kind, count, names, label, …)."""
    from .devices import detect
    return detect(count, engine, **options).to_dict()


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'mgpulab' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{target[0]}"), target[1])
    globals()[name] = value
    return value


def __dir__() -> list:
    return __all__
