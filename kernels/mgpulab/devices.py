"""Which devices a run uses, said plainly.

On a CUDA host the devices are the real GPUs. Elsewhere the lab runs on N
*emulated* CPU devices: DataParallel replicas become threads of one process
(see :mod:`mgpulab.data_parallel`), DDP ranks become CPU processes talking over
gloo. Every run carries a :class:`DeviceMode` so the UI and the stored run can
say which of the two actually ran ("2× cpu, emulated DataParallel" vs
"4× NVIDIA H100, CUDA, DataParallel").
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import List, Literal, Optional, Tuple

DeviceKind = Literal["cuda", "cpu-emulated"]
Engine = Literal["single", "DataParallel", "DDP"]

DEFAULT_CPU_DEVICES = 2
CPU_DEVICES_ENV = "MGPULAB_CPU_DEVICES"

_cpu_devices_override: Optional[int] = None


@dataclass(frozen=True)
class DeviceMode:
    """What a run ran on. ``label`` is the one-line honest description."""

    kind: DeviceKind
    count: int
    names: Tuple[str, ...]
    engine: Engine
    backend: Optional[str]  # "nccl" | "gloo" for DDP, None otherwise
    host_cores: int
    memory_source: str  # what the memory metrics measure
    label: str

    @property
    def emulated(self) -> bool:
        return self.kind == "cpu-emulated"

    def to_dict(self) -> dict:
        """Plain JSON-able form for the server (camelCase like the wire protocol)."""
        return {
            "kind": self.kind,
            "count": self.count,
            "names": list(self.names),
            "engine": self.engine,
            "backend": self.backend,
            "hostCores": self.host_cores,
            "memorySource": self.memory_source,
            "label": self.label,
        }


def set_emulated_device_count(count: Optional[int]) -> None:
    """Default number of emulated CPU devices (None: back to $MGPULAB_CPU_DEVICES or 2)."""
    global _cpu_devices_override
    if count is not None and count < 1:
        raise ValueError(f"emulated device count must be >= 1, got {count}")
    _cpu_devices_override = count


def emulated_device_count() -> int:
    if _cpu_devices_override is not None:
        return _cpu_devices_override
    raw = os.environ.get(CPU_DEVICES_ENV)
    if raw is None:
        return DEFAULT_CPU_DEVICES
    try:
        count = int(raw)
    except ValueError:
        raise ValueError(f"${CPU_DEVICES_ENV} must be an integer, got {raw!r}") from None
    if count < 1:
        raise ValueError(f"${CPU_DEVICES_ENV} must be >= 1, got {count}")
    return count


def cuda_device_count() -> int:
    """Number of usable CUDA devices (0 without torch or without CUDA)."""
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def host_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def detect(count: Optional[int] = None, engine: Engine = "DataParallel", *,
           emulate: Optional[bool] = None, backend: Optional[str] = None) -> DeviceMode:
    """The devices a run with ``count`` devices of ``engine`` will use here.

    ``emulate=None`` picks CUDA when present, CPU emulation otherwise;
    ``emulate=True`` forces CPU emulation even on a GPU host (for comparisons).
    ``backend`` (DDP only) overrides the default nccl (CUDA) / gloo (CPU).
    Raises ValueError when more GPUs are asked for than the host has.
    """
    gpus = 0 if emulate else cuda_device_count()
    cores = host_cores()
    if gpus > 0:
        n = gpus if count is None else count
        if n < 1 or n > gpus:
            raise ValueError(f"asked for {n} devices, this host has {gpus} GPU(s)")
        import torch
        names = tuple(torch.cuda.get_device_name(i) for i in range(n))
        backend = (backend or "nccl") if engine == "DDP" else None
        return DeviceMode("cuda", n, names, engine, backend, cores,
                          "torch.cuda.memory_allocated per device", _cuda_label(names, engine, backend))
    n = emulated_device_count() if count is None else count
    if n < 1:
        raise ValueError(f"device count must be >= 1, got {n}")
    names = tuple(f"cpu:{i} (emulated)" for i in range(n))
    memory = ("tracked tensor bytes per emulated device (parameters, buffers, inputs, outputs;"
              " not activations)" if engine == "DataParallel" else "process RSS")
    backend = (backend or "gloo") if engine == "DDP" else None
    return DeviceMode("cpu-emulated", n, names, engine, backend, cores, memory,
                      _cpu_label(n, engine, cores, backend))


def torch_devices(mode: DeviceMode) -> List["object"]:
    """``torch.device`` objects for the mode (emulated devices are all ``cpu``)."""
    import torch
    if mode.kind == "cuda":
        return [torch.device("cuda", i) for i in range(mode.count)]
    return [torch.device("cpu") for _ in range(mode.count)]


def _cuda_label(names: Tuple[str, ...], engine: Engine, backend: Optional[str]) -> str:
    groups = " + ".join(f"{n}× {name}" for name, n in Counter(names).items())
    if engine == "DDP":
        return f"{groups}, CUDA, DDP over {(backend or 'nccl').upper()}"
    return f"{groups}, CUDA, DataParallel" if engine == "DataParallel" else f"{groups}, CUDA"


def _cpu_label(n: int, engine: Engine, cores: int, backend: Optional[str]) -> str:
    core_word = "core" if cores == 1 else "cores"
    if engine == "DataParallel":
        return f"{n}× cpu, emulated DataParallel (threads in one process, {cores} {core_word})"
    if engine == "DDP":
        return f"{n}× cpu, DDP over {backend or 'gloo'} (one process per rank, {cores} {core_word})"
    return f"{n}× cpu ({cores} {core_word})"
