"""Which devices a run uses on this host, said plainly.

The decision is :func:`mgpulab.plan.plan` (pure, tested for any GPU count);
this module feeds it this host's facts — GPUs (:func:`cuda_device_count`),
their names, cores — and places tensors by it:

* :func:`detect` — the :class:`DevicePlan` for ``count`` devices of an engine
  here (``lab.device_mode()`` is its dict);
* :func:`device` — ``lab.devices.device(0)``: where a template puts a model so
  the same code runs on a GPU and on the CPU emulation;
* :func:`rank_device` — inside a rank started by ``lab.launch``: the device the
  launch's plan gave this rank (``cuda:i`` on a GPU, ``cpu`` on the CPU).

Without a GPU every run is the CPU emulation: DataParallel replicas become
threads of one process (see :mod:`mgpulab.data_parallel`), DDP ranks CPU
processes over gloo. ``placement="cpu"`` asks for that on a GPU host too.
"""
from __future__ import annotations

import functools
import os
from typing import Any, List, Optional, Sequence, Tuple

from .plan import DEFAULT_CPU_DEVICES, DevicePlan, PlanError, plan

DeviceMode = DevicePlan  # the name the toolkit has always exported
CPU_DEVICES_ENV = "MGPULAB_CPU_DEVICES"
RANK_DEVICE_ENV = "MGPULAB_DEVICE"  # set by lab.launch in each rank: the device its plan gave it

_cpu_devices_override: Optional[int] = None


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


@functools.lru_cache(maxsize=None)
def gpu_names() -> Tuple[str, ...]:
    """Names of this host's CUDA devices, in CUDA order (asked once per process)."""
    import torch
    return tuple(torch.cuda.get_device_name(i) for i in range(cuda_device_count()))


def host_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@functools.lru_cache(maxsize=None)
def backend_map_supported() -> bool:
    """This torch takes "cpu:gloo,cuda:nccl" (one group, gloo for CPU tensors, NCCL for CUDA ones)."""
    try:
        import torch.distributed as dist
    except ImportError:
        return False
    return dist.is_available() and hasattr(dist.Backend, "default_device_backend_map")


def placement_for(emulate: Optional[bool], placement: Optional[str]) -> str:
    """``emulate=True`` (the toolkit's older spelling) is ``placement="cpu"``."""
    if emulate and placement not in (None, "cpu"):
        raise ValueError(f"emulate=True means placement 'cpu', not {placement!r}")
    return "cpu" if emulate else (placement or "auto")


def detect(count: Optional[int] = None, engine: str = "DataParallel", *, emulate: Optional[bool] = None,
           backend: Optional[str] = None, placement: Optional[str] = None,
           device_ids: Optional[Sequence[int]] = None) -> DevicePlan:
    """The plan for ``count`` devices of ``engine`` here (see :func:`mgpulab.plan.plan`).

    ``count=None``: every GPU, or the default number of emulated devices without one.
    ``placement``: "auto" (GPUs when there are any), "cuda", or "cpu" (CPU emulation
    even on a GPU host; ``emulate=True`` says the same). ``backend`` (DDP): "nccl" or
    "gloo" (default: NCCL with one GPU per rank, gloo when ranks share GPUs or run on
    the CPU). Raises :class:`PlanError` for a request this host cannot serve.
    """
    where = placement_for(emulate, placement)
    gpus = cuda_device_count()
    names = gpu_names() if gpus > 0 and where != "cpu" else ()
    return plan(count, engine, gpus, placement=where, backend=backend, device_ids=device_ids, gpu_names=names,
                cores=host_cores(), default_count=emulated_device_count(),
                backend_map=engine == "DDP" and gpus > 0 and backend_map_supported())


def emulated_mode(count: int, engine: str = "DataParallel") -> DevicePlan:
    """The CPU-emulated plan for ``count`` devices (whatever the host has)."""
    return plan(count, engine, cuda_device_count(), placement="cpu", cores=host_cores())


# -- where tensors go --------------------------------------------------------------------------------

def device(index: int = 0, placement: str = "auto") -> Any:
    """``torch.device`` of lab device ``index``, as :func:`detect` places it.

    ``cuda:i`` on a GPU host (device i of more devices than GPUs shares GPU
    i mod G), ``cpu`` without a GPU or with ``placement="cpu"``. Templates move
    models and data with it: ``model.to(lab.devices.device(0))``.
    """
    import torch
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ValueError(f"device index must be an int >= 0, got {index!r}")
    where = placement_for(None, placement)
    gpus = cuda_device_count()
    if where == "cuda" and gpus == 0:
        raise PlanError("placement 'cuda' needs a GPU and this host has none: use placement 'auto' or 'cpu'", 0)
    if where != "cpu" and gpus > 0:
        return torch.device("cuda", index % gpus)
    return torch.device("cpu")


def ddp_backend(nprocs: int, placement: str = "auto") -> str:
    """The backend ``lab.launch`` uses for ``nprocs`` ranks here (nccl or gloo)."""
    backend = detect(nprocs, "DDP", placement=placement).backend
    assert backend is not None
    return backend


def rank_device() -> Any:
    """Inside a rank: the device ``lab.launch``'s plan gave it (``cuda:i`` or ``cpu``).

    Ranks started otherwise (an outside torchrun): ``cuda:LOCAL_RANK`` when the
    process group uses NCCL and that GPU exists, else ``cpu``.
    """
    import torch
    planned = os.environ.get(RANK_DEVICE_ENV)
    if planned:
        return torch.device(planned)
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


def rank_device_kind(backend: Optional[str], cuda_count: int, local_rank: int) -> str:
    """"cuda" for a rank of an NCCL group whose LOCAL_RANK names a GPU, else "cpu"."""
    uses_nccl = backend is not None and "nccl" in backend
    return "cuda" if uses_nccl and 0 <= local_rank < cuda_count else "cpu"


def device_of(model: Any) -> Any:
    """Where a (possibly wrapped) model's parameters — and DataParallel's gathered output — live."""
    import torch
    for tensor in model.parameters():
        return tensor.device
    return torch.device("cpu")


def torch_devices(mode: DevicePlan) -> List[Any]:
    """``torch.device`` of each device of the plan."""
    import torch
    return [torch.device(d) for d in mode.devices]


def reset_cuda_peak(index: int) -> None:
    """Start a new peak of GPU ``index``'s allocated memory.

    Before CUDA's lazy initialisation the caching allocator does not exist yet
    and torch 2.x raises "Invalid device argument" (seen on an H200, torch
    2.11): a timer made before the first CUDA tensor failed. Nothing has been
    allocated then, so there is no peak to reset.
    """
    import torch
    if torch.cuda.is_initialized():
        torch.cuda.reset_peak_memory_stats(index)


def cuda_memory(index: int) -> Tuple[float, float]:
    """(allocated, peak) bytes of this process on GPU ``index``, from one allocator snapshot.

    One ``memory_stats_as_nested_dict`` call instead of ``memory_allocated`` plus
    ``max_memory_allocated`` (each builds and flattens the whole statistics dict).
    Host-side bookkeeping: no device synchronisation. Before CUDA's lazy
    initialisation nothing is allocated: (0, 0).
    """
    import torch
    if not torch.cuda.is_initialized():
        return 0.0, 0.0
    stats = torch.cuda.memory_stats_as_nested_dict(index)
    allocated = stats.get("allocated_bytes", {}).get("all", {})
    return float(allocated.get("current", 0)), float(allocated.get("peak", 0))
