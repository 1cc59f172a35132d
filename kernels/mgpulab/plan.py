"""The one decision about devices: where a run's devices (replicas or ranks) live.

:func:`plan` is a pure function — no torch, no host probing — of

* ``count``: devices requested (DataParallel replicas, DDP ranks, 1 for a single device);
* ``engine``: ``"single"``, ``"DataParallel"`` or ``"DDP"``;
* ``gpus``: the GPUs this host has;
* ``backend``: the DDP backend asked for (None: the plan picks);
* ``placement``: where the tensors live — ``"auto"`` (on the GPUs when the host has
  any, else the CPU), ``"cuda"`` (on the GPUs, refused without one) or ``"cpu"``
  (the CPU emulation, even on a GPU host).

It returns a :class:`DevicePlan`: the kind of run, the backend, the device of
every replica or rank, and an honest label with the reason. Everything that
places tensors or starts ranks consumes a plan (``lab.device_mode``,
``lab.DataParallel``, ``lab.launch``, ``lab.devices.device``, the scenarios and
their limits), so what the lab says is what it does.

The kinds:

* ``cuda`` — one real GPU per device: ``nn.DataParallel``, or DDP over NCCL
  (one GPU per rank);
* ``cuda-shared`` — more devices than GPUs (N > G ≥ 1): N *virtual* devices
  sharing the G GPUs round-robin (device i on GPU i mod G). DataParallel runs
  its emulation there with each replica on its own CUDA stream; DDP runs N
  ranks over gloo, which carries CUDA tensors (NCCL refuses two ranks on one
  GPU: "Duplicate GPU detected");
* ``cpu-emulated`` — no GPU, or ``placement="cpu"``: DataParallel's emulation on
  threads, DDP ranks as CPU processes over gloo.

A request no configuration of the host can serve raises :class:`PlanError`,
whose message names the largest value that works (``largest``).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, Optional, Sequence, Tuple

PlanKind = Literal["cuda", "cuda-shared", "cpu-emulated"]
Engine = Literal["single", "DataParallel", "DDP"]
ENGINES: Tuple[Engine, ...] = ("single", "DataParallel", "DDP")
PLACEMENTS = ("auto", "cuda", "cpu")
BACKENDS = ("gloo", "nccl")

DEFAULT_CPU_DEVICES = 2
VIRTUAL_PER_GPU = 8  # virtual devices one GPU may carry (streams or gloo ranks)
CPU_DEVICES_MIN, CPU_DEVICES_MAX = 4, 8  # emulated CPU devices: 4, up to one per core beyond that

# What the memory values of a run measure, by kind and engine (charts label them with this).
MEMORY_CUDA = "torch.cuda.memory_allocated and max_memory_allocated per device (peak since the previous sample)"
MEMORY_CUDA_RANK = ("torch.cuda.memory_allocated and max_memory_allocated of each rank's own allocations "
                    "on its GPU")
MEMORY_TRACKED = ("tracked tensor bytes per {what} (parameters, buffers, inputs, outputs; not activations)")
MEMORY_RSS = "process RSS per rank"


class PlanError(ValueError):
    """A request this host cannot serve at all; ``largest`` is the largest count that works (0: none)."""

    def __init__(self, message: str, largest: int) -> None:
        super().__init__(message)
        self.largest = largest


@dataclass(frozen=True)
class DevicePlan:
    """What a run runs on, decided by :func:`plan`. ``label`` is the one-line honest description."""

    engine: Engine
    count: int
    kind: PlanKind
    placement: str
    gpus: int  # GPUs on the host
    gpus_used: int  # real GPUs this run uses (0 on the CPU)
    backend: Optional[str]  # DDP: "nccl" | "gloo"; None otherwise
    init_backend: Optional[str]  # what init_process_group receives ("cpu:gloo,cuda:nccl" where supported)
    devices: Tuple[str, ...]  # torch device of each replica / rank: "cuda:0", "cpu"
    names: Tuple[str, ...]  # what each device is, for people
    streams: bool  # DataParallel on virtual devices: one CUDA stream per replica
    host_cores: int
    memory_source: str
    reason: Optional[str]  # why not one real GPU per device (None when nothing needs saying)
    label: str
    notes: Tuple[str, ...] = field(default=())

    @property
    def emulated(self) -> bool:
        """True unless every device is a real GPU of its own."""
        return self.kind != "cuda"

    @property
    def cuda(self) -> bool:
        return self.kind != "cpu-emulated"

    def to_dict(self) -> dict:
        """Plain JSON-able form for the server (camelCase like the wire protocol)."""
        return {
            "kind": self.kind, "count": self.count, "names": list(self.names), "engine": self.engine,
            "backend": self.backend, "hostCores": self.host_cores, "memorySource": self.memory_source,
            "label": self.label, "placement": self.placement, "gpus": self.gpus, "gpusUsed": self.gpus_used,
            "devices": list(self.devices), "streams": self.streams, "reason": self.reason,
        }


def cpu_device_limit(cores: int) -> int:
    """Emulated CPU devices a host may run: 4, or one per core up to 8 on bigger hosts."""
    return max(CPU_DEVICES_MIN, min(CPU_DEVICES_MAX, cores))


def largest(engine: str, gpus: int, *, placement: str = "auto", backend: Optional[str] = None,
            cores: int = 1, limits: bool = True) -> Optional[int]:
    """The largest device count :func:`plan` serves for these inputs (0: none; None: no bound).

    Hard bounds always apply (NCCL: one GPU per rank; placement 'cuda': a GPU);
    ``limits`` adds the lab's own: at most ``VIRTUAL_PER_GPU`` virtual devices per
    GPU and :func:`cpu_device_limit` emulated CPU devices (the scenarios' bounds).
    """
    _check_inputs(engine, gpus, placement, backend)
    on_gpu = _on_gpu(gpus, placement)
    if engine == "DDP" and backend == "nccl":
        return gpus if on_gpu else 0
    if placement == "cuda" and gpus == 0:
        return 0
    if engine == "single":
        return 1
    if not limits:
        return None
    return VIRTUAL_PER_GPU * gpus if on_gpu else cpu_device_limit(cores)


def plan(count: Optional[int], engine: str = "DataParallel", gpus: int = 0, *, placement: str = "auto",
         backend: Optional[str] = None, device_ids: Optional[Sequence[int]] = None,
         gpu_names: Sequence[str] = (), cores: int = 1, default_count: int = DEFAULT_CPU_DEVICES,
         backend_map: bool = False, limits: bool = False) -> DevicePlan:
    """The plan for ``count`` devices of ``engine`` on a host with ``gpus`` GPUs (see the module doc).

    ``device_ids`` (DataParallel): the device indices asked for; ``count`` defaults to
    their number, and they are real GPUs only when every index names one.
    ``count=None``: every GPU, or ``default_count`` emulated devices without one.
    ``gpu_names``: the GPUs' names (for the label). ``cores``: the host's cores.
    ``backend_map``: this torch accepts ``"cpu:gloo,cuda:nccl"`` (torch ≥ 2.0), so an
    NCCL group gets gloo for CPU tensors instead of failing on them.
    ``limits``: also refuse counts beyond the lab's bounds (see :func:`largest`).
    """
    kind = _check_inputs(engine, gpus, placement, backend)
    ids = _device_ids(device_ids)
    on_gpu = _on_gpu(gpus, placement)
    if count is None:
        count = len(ids) if ids is not None else (1 if engine == "single" else (gpus if on_gpu else default_count))
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"device count must be an int, got {type(count).__name__}")
    if count < 1:
        raise ValueError(f"device count must be >= 1, got {count}")
    if ids is not None and len(ids) != count:
        raise ValueError(f"{count} devices requested but {len(ids)} device_ids given")
    ids = ids if ids is not None else tuple(range(count))
    what = "rank" if engine == "DDP" else "device"
    limit = largest(engine, gpus, placement=placement, backend=backend, cores=cores, limits=limits)
    if limit is not None and count > limit:
        raise PlanError(_refusal(count, engine, gpus, placement, backend, limit, what), limit)
    names = tuple(gpu_names) + tuple("GPU" for _ in range(len(gpu_names), gpus))
    if not on_gpu:
        return _cpu_plan(kind, count, placement, gpus, backend, cores)
    backend_used: Optional[str]
    init: Optional[str]
    if engine == "DDP" and backend is None and count <= gpus:
        backend_used, init = "nccl", ("cpu:gloo,cuda:nccl" if backend_map else "nccl")
    else:
        backend_used = (backend or "gloo") if engine == "DDP" else None
        init = backend_used
    enough = all(i < gpus for i in ids) and (engine != "DDP" or count <= gpus)
    if enough:
        return _cuda_plan(kind, count, placement, gpus, backend_used, init, ids, names, cores)
    return _shared_plan(kind, count, placement, gpus, backend_used, ids, names, cores)


# -- the three kinds ---------------------------------------------------------------------------------

def _cuda_plan(engine: Engine, count: int, placement: str, gpus: int, backend: Optional[str],
               init: Optional[str], ids: Tuple[int, ...], names: Tuple[str, ...], cores: int) -> DevicePlan:
    devices = tuple(f"cuda:{i}" for i in ids)
    used = tuple(names[i] for i in ids)
    groups = " + ".join(f"{n}× {name}" for name, n in Counter(used).items())
    notes: Tuple[str, ...] = ()
    if engine == "DDP":
        transport = "NCCL" if backend == "nccl" else "gloo (CUDA tensors staged through host memory)"
        label = f"{groups}, CUDA, DDP over {transport}"
        if init == "cpu:gloo,cuda:nccl":
            label += "; CPU tensors over gloo"
            notes = ("the process group is cpu:gloo,cuda:nccl: CUDA tensors go over NCCL, CPU tensors over gloo",)
        memory = MEMORY_CUDA_RANK
    elif engine == "DataParallel":
        label, memory = f"{groups}, CUDA, DataParallel", MEMORY_CUDA
    else:
        label, memory = f"{groups}, CUDA", MEMORY_CUDA
    return DevicePlan(engine, count, "cuda", placement, gpus, len(set(ids)), backend, init, devices, used,
                      False, cores, memory, None, label, notes)


def _shared_plan(engine: Engine, count: int, placement: str, gpus: int, backend: Optional[str],
                 ids: Tuple[int, ...], names: Tuple[str, ...], cores: int) -> DevicePlan:
    real = tuple(i % gpus for i in ids)
    devices = tuple(f"cuda:{g}" for g in real)
    used = sorted(set(real))
    per_gpu = max(Counter(real).values())
    gpu_text = _gpu_group([names[g] for g in used])
    plural = "s" if gpus != 1 else ""
    if engine == "DDP":
        reason = (f"{count} ranks requested, this host has {gpus} GPU{plural}; NCCL refuses two ranks on one GPU, "
                  "so gloo carries the CUDA tensors")
        label = f"{count} ranks sharing {gpu_text} (up to {per_gpu} per GPU), DDP over gloo; {reason}"
        shown = tuple(f"rank {r} on cuda:{g}" for r, g in enumerate(real))
        memory, streams = MEMORY_CUDA_RANK, False
    else:
        reason = f"{count} devices requested, this host has {gpus} GPU{plural}"
        label = f"{count} virtual devices on {gpu_text} (streams), emulated DataParallel; {reason}"
        shown = tuple(f"virtual device {i} on cuda:{g}" for i, g in zip(ids, real))
        memory, streams = MEMORY_TRACKED.format(what="virtual device"), True
    return DevicePlan(engine, count, "cuda-shared", placement, gpus, len(used), backend, backend, devices, shown,
                      streams, cores, memory, reason, label)


def _cpu_plan(engine: Engine, count: int, placement: str, gpus: int, backend: Optional[str],
              cores: int) -> DevicePlan:
    core_word = "core" if cores == 1 else "cores"
    backend_used = (backend or "gloo") if engine == "DDP" else None
    if engine == "DataParallel":
        label = f"{count}× cpu, emulated DataParallel (threads in one process, {cores} {core_word})"
        memory = MEMORY_TRACKED.format(what="emulated device")
    elif engine == "DDP":
        label = f"{count}× cpu, DDP over {backend_used} (one process per rank, {cores} {core_word})"
        memory = MEMORY_RSS
    else:
        label, memory = f"{count}× cpu ({cores} {core_word})", "process RSS"
    reason = None
    if gpus > 0:
        reason = (f"placement 'cpu': CPU emulation chosen on a host with {gpus} GPU{'s' if gpus != 1 else ''}"
                  if engine != "DDP" else
                  f"placement 'cpu': CPU ranks chosen on a host with {gpus} GPU{'s' if gpus != 1 else ''}")
        label = f"{label}; {reason}"
    names = tuple(f"cpu:{i} (emulated)" for i in range(count))
    return DevicePlan(engine, count, "cpu-emulated", placement, gpus, 0, backend_used, backend_used,
                      tuple("cpu" for _ in range(count)), names, False, cores, memory, reason,
                      label)


# -- checks and messages ---------------------------------------------------------------------------

def _on_gpu(gpus: int, placement: str) -> bool:
    return placement != "cpu" and gpus > 0


def _check_inputs(engine: str, gpus: int, placement: str, backend: Optional[str]) -> Engine:
    """The engine as one of ENGINES, once every input is known good (ValueError names the bad one)."""
    known = next((name for name in ENGINES if name == engine), None)
    if known is None:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0:
        raise ValueError(f"the GPU count must be an int >= 0, got {gpus!r}")
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(map(repr, PLACEMENTS))}, got {placement!r}")
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"backend must be 'gloo', 'nccl' or None, got {backend!r}")
    if backend is not None and engine != "DDP":
        raise ValueError(f"a backend applies to DDP only, not {engine}")
    if backend == "nccl" and placement == "cpu":
        raise PlanError("backend 'nccl' needs CUDA tensors, and placement 'cpu' keeps them on the CPU: "
                        "use backend 'gloo' (or None) with placement 'cpu'", 0)
    return known


def _device_ids(device_ids: Optional[Sequence[int]]) -> Optional[Tuple[int, ...]]:
    if device_ids is None:
        return None
    ids = tuple(device_ids)
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise ValueError(f"device ids must be ints >= 0, got {i!r}")
    if not ids:
        raise ValueError("device_ids must name at least one device")
    return ids


def _refusal(count: int, engine: str, gpus: int, placement: str, backend: Optional[str], limit: int,
             what: str) -> str:
    plural = "s" if gpus != 1 else ""
    asked = f"{count} {what}s" if count != 1 else f"1 {what}"
    if engine == "DDP" and backend == "nccl":
        if gpus == 0:
            return (f"backend 'nccl' needs GPUs and this host has none: no {what} count works with it here; "
                    "use backend 'gloo' (or None)")
        return (f"{asked} over NCCL need {count} GPUs (NCCL refuses two ranks on one GPU) and this host has "
                f"{gpus}: the largest world size that works with NCCL here is {limit}; leave the backend to the "
                f"plan (or use 'gloo') to share the GPU{plural} between {count} ranks")
    if placement == "cuda" and gpus == 0:
        return "placement 'cuda' needs a GPU and this host has none: use placement 'auto' or 'cpu'"
    if _on_gpu(gpus, placement):
        return (f"{asked} requested: this host's {gpus} GPU{plural} carry at most {limit} virtual {what}s "
                f"({VIRTUAL_PER_GPU} per GPU); the largest value that works here is {limit}")
    return (f"{asked} requested: this host emulates at most {limit} CPU {what}s; the largest value that works "
            f"here is {limit}")


def _gpu_group(names: Sequence[str]) -> str:
    counts = Counter(names)
    return " + ".join(f"{n}× {name}" for name, n in counts.items())
