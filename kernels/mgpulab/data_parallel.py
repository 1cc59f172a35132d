"""DataParallel: real ``nn.DataParallel`` on GPUs, a faithful emulation on CPU.

``DataParallel(module, ...)`` returns :class:`TimedDataParallel` (a subclass of
the real ``torch.nn.DataParallel`` that also records per-phase times) on a
CUDA host with at least as many GPUs as ``device_ids``, and
:class:`EmulatedDataParallel` elsewhere (see
:func:`mgpulab.devices.plan_data_parallel`). Both expose
``last_phases`` (a :class:`PhaseTimes` of the last forward), ``last_replicas``
(with ``keep_replicas=True``) and ``device_mode``.

What the emulation reproduces (same algorithm as torch, step for step):

* **scatter**: ``torch.chunk`` sizes (ceil(B/n) per device, uneven when B does
  not divide, fewer chunks — and fewer replicas — than devices when B is
  small); kwargs scattered too; non-tensors repeated.
* **replicate on every forward**: new module objects; replica 0 shares
  parameter storage and buffer objects with the original, replicas 1..n-1
  get copies; gradients flow back to the originals; attribute rebinding and
  updates on replicas 1..n-1 are lost; forward hooks run once per replica.
* **parallel apply**: one Python thread per replica (one device: the calling
  thread), grad mode propagated, exceptions re-raised as
  "Caught X in replica i on device i". GIL contention is real.
* **gather** on device 0: ``cat`` along ``dim`` for tensors, recursively for
  tuples, lists, dicts, namedtuples; scalars unsqueezed with torch's warning.
* **device errors**: a plain (unregistered) tensor attribute used by replica
  i > 0 raises "Expected all tensors to be on the same device".

What it does not reproduce: device memory limits (no OOM from one small GPU),
transfer bandwidth (copies are memcpy, not PCIe/NVLink), GPU kernels running
truly concurrently (here replicas share the host's cores, and torch's intra-op
threads compete with the replica threads), CUDA streams, and device errors
other than the plain-attribute case (e.g. ``torch.zeros(3, device="cuda:0")``
created in forward, or tensors hidden in lists/dicts of attributes).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, List, Optional, Sequence, Tuple

import torch
from torch import nn
from torch._utils import ExceptionWrapper

from . import devices as _devices
from ._emulated_device import EmulatedDeviceMismatch, on_device
from ._replicate import replicate as _emulated_replicate
from ._scatter_gather import gather as _emulated_gather
from ._scatter_gather import scatter_kwargs as _emulated_scatter_kwargs

__all__ = ["DataParallel", "EmulatedDataParallel", "TimedDataParallel", "PhaseTimes",
           "EmulatedDeviceMismatch", "parallel_apply"]


@dataclass
class PhaseTimes:
    """Where the time of one DataParallel forward went.

    Host times (``*_ms``) come from ``time.perf_counter``. In emulation they are
    the real cost. On GPUs they are host-side (launch) time; per-device GPU time
    of each replica's forward comes from CUDA events via :meth:`device_ms`.
    ``intervals`` are (start, end) seconds of each replica's forward relative
    to the start of ``forward`` — overlapping intervals are the evidence that
    replicas ran concurrently; ``threads`` are the names of the threads that ran them.
    """

    emulated: bool
    devices: List[int]
    samples: List[Optional[int]]
    scatter_ms: float = 0.0
    replicate_ms: float = 0.0
    parallel_apply_ms: float = 0.0
    gather_ms: float = 0.0
    total_ms: float = 0.0
    apply_ms: List[float] = field(default_factory=list)
    intervals: List[Tuple[float, float]] = field(default_factory=list)
    threads: List[str] = field(default_factory=list)
    memory_bytes: List[Optional[int]] = field(default_factory=list)
    _events: List[Any] = field(default_factory=list, repr=False)

    def device_ms(self, block: bool = True) -> List[Optional[float]]:
        """Per-device time of each replica's forward (GPU time on CUDA).

        On CUDA, ``block=False`` returns None for devices whose events have not
        completed yet instead of waiting for them.
        """
        if self.emulated or not self._events:
            return list(self.apply_ms)
        out: List[Optional[float]] = []
        for start, end in self._events:
            if block:
                end.synchronize()
            elif not end.query():
                out.append(None)
                continue
            out.append(start.elapsed_time(end))
        return out

    def to_dict(self) -> dict:
        return {
            "emulated": self.emulated, "devices": self.devices, "samples": self.samples,
            "scatterMs": self.scatter_ms, "replicateMs": self.replicate_ms,
            "parallelApplyMs": self.parallel_apply_ms, "gatherMs": self.gather_ms,
            "totalMs": self.total_ms, "applyMs": self.apply_ms, "deviceMs": self.device_ms(block=False),
            "memoryBytes": self.memory_bytes,
        }


class _ApplyLog:
    """Per-replica timing written by worker threads."""

    def __init__(self, count: int, origin: float, cuda: bool) -> None:
        self.origin = origin
        self.cuda = cuda
        self.apply_ms = [0.0] * count
        self.intervals = [(0.0, 0.0)] * count
        self.threads = [""] * count
        self.events: List[Any] = [None] * count

    def run(self, index: int, module: Any, args: tuple, kwargs: dict) -> Any:
        start_event = end_event = None
        if self.cuda:
            start_event = torch.cuda.Event(enable_timing=True)
            end_event = torch.cuda.Event(enable_timing=True)
            start_event.record()
        start = time.perf_counter()
        try:
            return module(*args, **kwargs)
        finally:
            end = time.perf_counter()
            if end_event is not None:
                end_event.record()
                self.events[index] = (start_event, end_event)
            self.apply_ms[index] = (end - start) * 1000.0
            self.intervals[index] = (start - self.origin, end - self.origin)
            self.threads[index] = threading.current_thread().name


def parallel_apply(modules: Sequence[nn.Module], inputs: Sequence[Any],
                   kwargs_tup: Optional[Sequence[dict]] = None,
                   devices: Optional[Sequence[int]] = None,
                   log: Optional[_ApplyLog] = None) -> List[Any]:
    """Emulated ``torch.nn.parallel.parallel_apply``: one thread per replica.

    Each thread runs with its emulated device set (so cross-device use of a
    plain tensor attribute raises), the caller's grad mode and CPU autocast
    state. A single module runs on the calling thread, as in torch.
    """
    assert len(modules) == len(inputs)
    kwargs_tup = tuple(kwargs_tup) if kwargs_tup is not None else ({},) * len(modules)
    assert len(modules) == len(kwargs_tup)
    devices = list(devices) if devices is not None else list(range(len(modules)))
    assert len(modules) == len(devices)
    log = log or _ApplyLog(len(modules), time.perf_counter(), cuda=False)
    lock = threading.Lock()
    results: dict = {}
    grad_enabled = torch.is_grad_enabled()
    autocast_cpu, autocast_dtype = _cpu_autocast_state()

    def _worker(i: int, module: nn.Module, input: Any, kwargs: dict, device: int) -> None:
        torch.set_grad_enabled(grad_enabled)
        try:
            with on_device(device), torch.autocast("cpu", enabled=autocast_cpu, dtype=autocast_dtype):
                if not isinstance(input, (list, tuple)):
                    input = (input,)
                output = log.run(i, module, tuple(input), kwargs)
            with lock:
                results[i] = output
        except Exception:
            with lock:
                results[i] = ExceptionWrapper(where=f"in replica {i} on device {device}")

    if len(modules) > 1:
        threads = [threading.Thread(target=_worker, args=(i, m, inp, kw, dev), name=f"dp-replica-{i}")
                   for i, (m, inp, kw, dev) in enumerate(zip(modules, inputs, kwargs_tup, devices))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:
        _worker(0, modules[0], inputs[0], kwargs_tup[0], devices[0])

    outputs = []
    for i in range(len(inputs)):
        output = results[i]
        if isinstance(output, ExceptionWrapper):
            output.reraise()
        outputs.append(output)
    return outputs


class EmulatedDataParallel(nn.Module):
    """``nn.DataParallel``'s algorithm on N emulated CPU devices (see the module doc).

    ``device_ids`` are emulated device indices (default: ``range(N)`` with N
    from :func:`mgpulab.devices.emulated_device_count`). ``state_dict`` keys get
    the ``module.`` prefix like the real wrapper.
    """

    def __init__(self, module: nn.Module, device_ids: Optional[Sequence[Any]] = None,
                 output_device: Optional[Any] = None, dim: int = 0, *, keep_replicas: bool = False) -> None:
        super().__init__()
        ids = [_index(d) for d in device_ids] if device_ids is not None else \
            list(range(_devices.emulated_device_count()))
        self.module = module
        self.device_ids: List[int] = ids
        self.dim = dim
        self.output_device = _index(output_device) if output_device is not None else (ids[0] if ids else None)
        self.src_device = ids[0] if ids else None
        self.keep_replicas = keep_replicas
        self.last_phases: Optional[PhaseTimes] = None
        self.last_replicas: List[nn.Module] = []
        self.device_mode = _devices.emulated_mode(max(len(ids), 1), "DataParallel")

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        with torch.autograd.profiler.record_function("DataParallel.forward"):
            if not self.device_ids:
                return self.module(*inputs, **kwargs)
            t0 = time.perf_counter()
            inputs, kwargs = self.scatter(inputs, kwargs, self.device_ids)
            if not inputs and not kwargs:
                inputs, kwargs = ((),), ({},)
            t1 = time.perf_counter()
            if len(self.device_ids) == 1:
                log = _ApplyLog(1, t0, cuda=False)
                with on_device(self.device_ids[0]):
                    output = log.run(0, self.module, tuple(inputs[0]), kwargs[0])
                t2 = time.perf_counter()
                self._record(t0, t1, t1, t2, t2, log, inputs, kwargs, [output], output, [self.module])
                return output
            replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
            t2 = time.perf_counter()
            log = _ApplyLog(len(replicas), t0, cuda=False)
            outputs = parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)], log)
            t3 = time.perf_counter()
            output = self.gather(outputs, self.output_device)
            t4 = time.perf_counter()
            self._record(t0, t1, t2, t3, t4, log, inputs, kwargs, outputs, output, replicas)
            return output

    def replicate(self, module: nn.Module, device_ids: Sequence[int]) -> List[nn.Module]:
        return _emulated_replicate(module, device_ids, not torch.is_grad_enabled())

    def scatter(self, inputs: tuple, kwargs: dict, device_ids: Sequence[int]) -> Tuple[tuple, tuple]:
        return _emulated_scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas: Sequence[nn.Module], inputs: Sequence[Any],
                       kwargs: Sequence[dict]) -> List[Any]:
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs: Sequence[Any], output_device: Any) -> Any:
        return _emulated_gather(outputs, dim=self.dim)

    def _record(self, t0: float, t1: float, t2: float, t3: float, t4: float, log: _ApplyLog,
                inputs: tuple, kwargs: tuple, outputs: List[Any], output: Any,
                replicas: List[nn.Module]) -> None:
        count = len(log.apply_ms)
        state_bytes = _tensor_bytes(list(chain(self.module.parameters(), self.module.buffers())))
        memory = []
        for i in range(count):
            used = state_bytes + _tensor_bytes(inputs[i]) + _tensor_bytes(kwargs[i]) + _tensor_bytes(outputs[i])
            memory.append(used + (_tensor_bytes(output) if i == 0 and count > 1 else 0))
        self.last_phases = PhaseTimes(
            emulated=True, devices=list(self.device_ids[:count]),
            samples=[_batch_size((inputs[i], kwargs[i]), self.dim) for i in range(count)],
            scatter_ms=(t1 - t0) * 1000.0, replicate_ms=(t2 - t1) * 1000.0,
            parallel_apply_ms=(t3 - t2) * 1000.0, gather_ms=(t4 - t3) * 1000.0,
            total_ms=(t4 - t0) * 1000.0, apply_ms=list(log.apply_ms),
            intervals=list(log.intervals), threads=list(log.threads), memory_bytes=memory)
        self.last_replicas = list(replicas) if self.keep_replicas else []

    def extra_repr(self) -> str:
        return f"emulated device_ids={self.device_ids}, dim={self.dim}"


class TimedDataParallel(nn.DataParallel):
    """The real ``torch.nn.DataParallel`` (CUDA), with ``last_phases`` recorded.

    ``forward`` is upstream's, step for step, with timestamps between phases;
    replicas run through a timing wrapper that records CUDA events on each
    device's stream (no synchronize: read them with ``last_phases.device_ms``).
    """

    def __init__(self, module: nn.Module, device_ids: Optional[Sequence[Any]] = None,
                 output_device: Optional[Any] = None, dim: int = 0, *, keep_replicas: bool = False) -> None:
        super().__init__(module, device_ids, output_device, dim)
        self.keep_replicas = keep_replicas
        self.last_phases: Optional[PhaseTimes] = None
        self.last_replicas: List[nn.Module] = []
        self.device_mode = _devices.detect(max(len(self.device_ids), 1), "DataParallel")
        self._log: Optional[_ApplyLog] = None

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        with torch.autograd.profiler.record_function("DataParallel.forward"):
            if not self.device_ids:
                return self.module(*inputs, **kwargs)
            for t in chain(self.module.parameters(), self.module.buffers()):
                if t.device != self.src_device_obj:
                    raise RuntimeError("module must have its parameters and buffers "
                                       f"on device {self.src_device_obj} (device_ids[0]) but found one of "
                                       f"them on device: {t.device}")
            t0 = time.perf_counter()
            inputs, kwargs = self.scatter(inputs, kwargs, self.device_ids)
            if not inputs and not kwargs:
                inputs, kwargs = ((),), ({},)
            t1 = time.perf_counter()
            if len(self.device_ids) == 1:
                self._log = _ApplyLog(1, t0, cuda=True)
                output = self._log.run(0, self.module, tuple(inputs[0]), kwargs[0])
                t2 = time.perf_counter()
                self._record(t0, t1, t1, t2, t2, inputs, kwargs, [self.module])
                return output
            replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
            t2 = time.perf_counter()
            self._log = _ApplyLog(len(replicas), t0, cuda=True)
            outputs = self.parallel_apply(replicas, inputs, kwargs)
            t3 = time.perf_counter()
            output = self.gather(outputs, self.output_device)
            t4 = time.perf_counter()
            self._record(t0, t1, t2, t3, t4, inputs, kwargs, replicas)
            return output

    def parallel_apply(self, replicas: Sequence[nn.Module], inputs: Sequence[Any], kwargs: Any) -> List[Any]:
        from torch.nn.parallel.parallel_apply import parallel_apply as cuda_parallel_apply
        log = self._log or _ApplyLog(len(replicas), time.perf_counter(), cuda=True)
        timed = [_TimedReplica(log, i, r) for i, r in enumerate(replicas)]
        return cuda_parallel_apply(timed, inputs, kwargs, self.device_ids[:len(replicas)])

    def _record(self, t0: float, t1: float, t2: float, t3: float, t4: float,
                inputs: tuple, kwargs: tuple, replicas: List[nn.Module]) -> None:
        log = self._log
        assert log is not None
        count = len(log.apply_ms)
        ids = list(self.device_ids[:count])
        self.last_phases = PhaseTimes(
            emulated=False, devices=ids,
            samples=[_batch_size((inputs[i], kwargs[i]), self.dim) for i in range(count)],
            scatter_ms=(t1 - t0) * 1000.0, replicate_ms=(t2 - t1) * 1000.0,
            parallel_apply_ms=(t3 - t2) * 1000.0, gather_ms=(t4 - t3) * 1000.0,
            total_ms=(t4 - t0) * 1000.0, apply_ms=list(log.apply_ms), intervals=list(log.intervals),
            threads=list(log.threads), memory_bytes=[torch.cuda.memory_allocated(d) for d in ids],
            _events=[e for e in log.events if e is not None])
        self.last_replicas = list(replicas) if self.keep_replicas else []
        self._log = None


class _TimedReplica:
    """Callable stand-in for a replica inside torch's parallel_apply worker."""

    def __init__(self, log: _ApplyLog, index: int, replica: nn.Module) -> None:
        self.log, self.index, self.replica = log, index, replica

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.log.run(self.index, self.replica, args, kwargs)


def DataParallel(module: nn.Module, device_ids: Optional[Sequence[Any]] = None,
                 output_device: Optional[Any] = None, dim: int = 0, *,
                 emulate: Optional[bool] = None, keep_replicas: bool = False) -> nn.Module:
    """Real ``nn.DataParallel`` when the host has the GPUs, :class:`EmulatedDataParallel` otherwise.

    The choice is :func:`mgpulab.devices.plan_data_parallel`: CUDA when the
    host has at least ``len(device_ids)`` GPUs (all of them when
    ``device_ids`` is None), else the CPU emulation — and its
    ``device_mode.label`` says why on a GPU host. On CUDA the module must be
    on ``device_ids[0]`` as torch requires (``model.to(lab.devices.device(0))``).
    ``emulate=True`` forces the CPU emulation even on a GPU host.
    ``keep_replicas=True`` keeps the last forward's replicas in
    ``.last_replicas`` (for :func:`mgpulab.inspect.replica_state`); it holds
    their memory until the next forward.
    """
    count = len(device_ids) if device_ids is not None else None
    kind, n, note = _devices.plan_data_parallel(_devices.cuda_device_count(), count, emulate,
                                                default_count=_devices.emulated_device_count())
    if kind == "cuda":
        return TimedDataParallel(module, device_ids, output_device, dim, keep_replicas=keep_replicas)
    ids = list(device_ids) if device_ids is not None else list(range(n))
    wrapped = EmulatedDataParallel(module, ids, output_device, dim, keep_replicas=keep_replicas)
    if note:
        wrapped.device_mode = _devices.emulated_mode(max(len(ids), 1), "DataParallel", note=note)
    return wrapped


def _cpu_autocast_state() -> Tuple[bool, Any]:
    try:  # torch >= 2.4 (the *_cpu_* functions are deprecated there)
        return torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
    except (TypeError, AttributeError):
        return torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()


def _index(device: Any) -> int:
    if isinstance(device, torch.device):
        return device.index or 0
    if isinstance(device, str):
        return torch.device(device).index or 0
    return int(device)


def _tensors(obj: Any, depth: int = 0) -> List[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if depth > 4:
        return []
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in _tensors(v, depth + 1)]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _tensors(v, depth + 1)]
    return []


def _tensor_bytes(obj: Any) -> int:
    return sum(t.numel() * t.element_size() for t in _tensors(obj))


def _batch_size(obj: Any, dim: int) -> Optional[int]:
    for t in _tensors(obj):
        if t.dim() > 0:
            return int(t.size(dim))
    return None
