"""Which devices a run uses, said plainly.

On a CUDA host the devices are the real GPUs. Elsewhere the lab runs on N
*emulated* CPU devices: DataParallel replicas become threads of one process
(see :mod:`mgpulab.data_parallel`), DDP ranks become CPU processes talking over
gloo. Every run carries a :class:`DeviceMode` so the UI and the stored run can
say which of the two actually ran ("2× cpu, emulated DataParallel" vs
"4× NVIDIA H100, CUDA, DataParallel").

The choices are small pure functions of the GPU count, testable anywhere:
:func:`plan_data_parallel` (real ``nn.DataParallel`` when the host has at
least the requested GPUs, emulation otherwise — with a note saying why),
:func:`plan_ddp` (NCCL with one GPU per rank when there are enough GPUs,
gloo on CPU otherwise), :func:`device_limit_for`, :func:`index_kind`,
:func:`rank_device_kind`. Code that must run unchanged on both paths moves
tensors with :func:`device` (``lab.devices.device(0)``: ``cuda:0`` or
``cpu``), launches with ``backend=lab.devices.ddp_backend(n)``, and inside a
rank uses :func:`rank_device`.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Any, List, Literal, Optional, Tuple

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

    ``emulate=None`` picks CUDA when the host has enough GPUs (``count`` of
    them; all of them when ``count`` is None), CPU emulation otherwise — and
    then the label says why ("4 devices requested, this host has 2 GPUs").
    ``emulate=True`` forces CPU emulation even on a GPU host (for comparisons).
    ``backend`` (DDP only) overrides the default nccl (CUDA) / gloo (CPU);
    ``backend="nccl"`` with fewer GPUs than ranks raises ValueError.
    """
    gpus = cuda_device_count()
    if engine == "DDP":
        if emulate:
            if backend == "nccl":
                raise ValueError("backend 'nccl' needs GPUs; emulate=True runs the ranks on CPU (gloo)")
            kind, n, note = "cpu-emulated", (emulated_device_count() if count is None else count), None
            backend = backend or "gloo"
        else:
            n = (gpus or emulated_device_count()) if count is None else count
            backend, cuda, note = plan_ddp(gpus, n, backend)
            kind = "cuda" if cuda else "cpu-emulated"
    else:
        kind, n, note = plan_data_parallel(gpus, count, emulate, default_count=emulated_device_count())
        backend = None
    cores = host_cores()
    if kind == "cuda":
        import torch
        names = tuple(torch.cuda.get_device_name(i) for i in range(n))
        return DeviceMode("cuda", n, names, engine, backend, cores,
                          "torch.cuda.memory_allocated per device", _cuda_label(names, engine, backend))
    return emulated_mode(n, engine, backend=backend, note=note, cores=cores)


def emulated_mode(count: int, engine: Engine = "DataParallel", *, backend: Optional[str] = None,
                  note: Optional[str] = None, cores: Optional[int] = None) -> DeviceMode:
    """The CPU-emulated DeviceMode for ``count`` devices; ``note`` says why (on a GPU host)."""
    if count < 1:
        raise ValueError(f"device count must be >= 1, got {count}")
    cores = host_cores() if cores is None else cores
    names = tuple(f"cpu:{i} (emulated)" for i in range(count))
    memory = ("tracked tensor bytes per emulated device (parameters, buffers, inputs, outputs;"
              " not activations)" if engine == "DataParallel" else "process RSS")
    backend = (backend or "gloo") if engine == "DDP" else None
    label = _cpu_label(count, engine, cores, backend)
    if note:
        label = f"{label}; {note}"
    return DeviceMode("cpu-emulated", count, names, engine, backend, cores, memory, label)


# -- decisions (pure: given the GPU count, no torch) ---------------------------------------------

def plan_data_parallel(cuda_count: int, requested: Optional[int], emulate: Optional[bool] = None, *,
                       default_count: int = DEFAULT_CPU_DEVICES) -> Tuple[DeviceKind, int, Optional[str]]:
    """(kind, count, note) for DataParallel over ``requested`` devices on a host with ``cuda_count`` GPUs.

    Real CUDA when not forced to emulate and the host has at least ``requested``
    GPUs (``requested=None``: all of them, or ``default_count`` emulated
    devices without a GPU); CPU emulation otherwise, with a note saying why
    when there are GPUs.
    """
    if requested is not None and requested < 1:
        raise ValueError(f"device count must be >= 1, got {requested}")
    if emulate:
        n = requested if requested is not None else default_count
        return "cpu-emulated", n, ("emulation requested on a host with GPUs" if cuda_count > 0 else None)
    if cuda_count <= 0:
        return "cpu-emulated", (default_count if requested is None else requested), None
    if requested is None or requested <= cuda_count:
        return "cuda", (cuda_count if requested is None else requested), None
    return "cpu-emulated", requested, (f"emulated because {requested} devices were requested and this host has "
                                       f"{cuda_count} GPU{'s' if cuda_count != 1 else ''}")


def plan_ddp(cuda_count: int, nprocs: int, backend: Optional[str] = None) -> Tuple[str, bool, Optional[str]]:
    """(backend, uses_cuda, note) for ``nprocs`` DDP ranks on a host with ``cuda_count`` GPUs.

    NCCL with one GPU per rank when there are enough GPUs; gloo on CPU
    otherwise (with a note when there are GPUs). ``backend="gloo"`` always
    means CPU ranks; ``backend="nccl"`` with too few GPUs raises ValueError.
    """
    if nprocs < 1:
        raise ValueError(f"nprocs must be >= 1, got {nprocs}")
    if backend not in (None, "gloo", "nccl"):
        raise ValueError(f"unknown backend {backend!r}")
    enough = cuda_count >= nprocs
    if backend == "nccl":
        if not enough:
            raise ValueError(f"{nprocs} NCCL ranks need {nprocs} GPUs, this host has {cuda_count}")
        return "nccl", True, None
    if backend == "gloo":
        return "gloo", False, None
    if enough and cuda_count > 0:
        return "nccl", True, None
    note = (f"CPU ranks because {nprocs} ranks were requested and this host has {cuda_count} "
            f"GPU{'s' if cuda_count != 1 else ''}") if cuda_count > 0 else None
    return "gloo", False, note


def device_limit_for(cuda_count: int, emulated_max: int = 4) -> int:
    """Devices a scenario may ask for: the GPUs on a CUDA host, else ``emulated_max`` emulated devices."""
    return cuda_count if cuda_count > 0 else emulated_max


def index_kind(cuda_count: int, index: int) -> str:
    """"cuda" when device ``index`` is a real GPU on this host, else "cpu" (emulated devices are the CPU)."""
    if index < 0:
        raise ValueError(f"device index must be >= 0, got {index}")
    return "cuda" if index < cuda_count else "cpu"


def rank_device_kind(backend: Optional[str], cuda_count: int, local_rank: int) -> str:
    """"cuda" for a rank of an NCCL group whose LOCAL_RANK names a GPU, else "cpu"."""
    return "cuda" if backend == "nccl" and 0 <= local_rank < cuda_count else "cpu"


# -- where tensors go (thin wrappers over the decisions) -------------------------------------------

def device(index: int = 0) -> "object":
    """``torch.device`` for lab device ``index``: ``cuda:index`` on a GPU host that has it, else ``cpu``.

    Templates move models and tensors with it, so the same code runs on GPUs
    and on the CPU emulation: ``model.to(lab.devices.device(0))``.
    """
    import torch
    if index_kind(cuda_device_count(), index) == "cuda":
        return torch.device("cuda", index)
    return torch.device("cpu")


def ddp_backend(nprocs: int) -> str:
    """The process-group backend ``lab.launch`` should use for ``nprocs`` ranks here (nccl or gloo)."""
    return plan_ddp(cuda_device_count(), nprocs)[0]


def rank_device() -> "object":
    """Inside a DDP rank: ``cuda:LOCAL_RANK`` when the process group is NCCL, else ``cpu``."""
    import torch
    backend = None
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            backend = str(dist.get_backend())
    except Exception:  # noqa: BLE001 - no process group: CPU
        backend = None
    from . import _env
    local = _env.local_rank()
    if rank_device_kind(backend, cuda_device_count(), local) == "cuda":
        return torch.device("cuda", local)
    return torch.device("cpu")


def device_of(model: Any) -> "object":
    """Where a (possibly wrapped) model's parameters — and DataParallel's gathered output — live."""
    import torch
    for tensor in model.parameters():
        return tensor.device
    return torch.device("cpu")


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
