"""What one DataParallel forward records: per-replica times written by the threads that ran them
(:class:`ApplyLog`), and the whole forward's :class:`PhaseTimes` built from them.

Separate from the wrappers because both of them (the real ``nn.DataParallel`` on GPUs and the
emulation) record the same things the same way, and the step timer, the inspector and the
scenarios read only this: where the time went, how many rows each device got, what each device
held. Also the small tensor walks those figures need."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, List, Optional, Tuple

import torch
from torch import nn


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
        if not self._events:  # the CPU emulation: host time is the device time
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


class ApplyLog:
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


def per_device(scattered: Tuple[Any, Any]) -> Tuple[Any, Any]:
    """A scatter's result as the forward runs it: per device, a tuple of positional inputs and a dict
    of keyword inputs; a forward with no inputs at all runs once, with none (as torch's does)."""
    chunks, chunk_kwargs = scattered
    if not chunks and not chunk_kwargs:
        return ((),), ({},)
    return chunks, chunk_kwargs


def phase_times(emulated: bool, devices: List[int], marks: Tuple[float, float, float, float, float], log: ApplyLog,
                module: nn.Module, dim: int, inputs: tuple, kwargs: tuple, outputs: List[Any], output: Any) -> PhaseTimes:
    """The forward's record: ``marks`` are the clock at its start and after scatter, replicate,
    parallel apply and gather; ``inputs``/``kwargs``/``outputs`` are per device, ``output`` the gathered one."""
    t0, t1, t2, t3, t4 = marks
    count = len(log.apply_ms)
    return PhaseTimes(
        emulated=emulated, devices=devices[:count],
        samples=[batch_size((inputs[i], kwargs[i]), dim) for i in range(count)],
        scatter_ms=(t1 - t0) * 1000.0, replicate_ms=(t2 - t1) * 1000.0,
        parallel_apply_ms=(t3 - t2) * 1000.0, gather_ms=(t4 - t3) * 1000.0,
        total_ms=(t4 - t0) * 1000.0, apply_ms=list(log.apply_ms),
        intervals=list(log.intervals), threads=list(log.threads),
        memory_bytes=tracked_memory(module, inputs, kwargs, outputs, output, count),
        _events=[e for e in log.events if e is not None])


def tracked_memory(module: nn.Module, inputs: tuple, kwargs: tuple, outputs: List[Any], output: Any,
                   count: int) -> List[Optional[int]]:
    """Bytes each device holds for this forward: state, its inputs and outputs (device 0: the gathered output)."""
    state_bytes = tensor_bytes(list(chain(module.parameters(), module.buffers())))
    memory: List[Optional[int]] = []
    for i in range(count):
        used = state_bytes + tensor_bytes(inputs[i]) + tensor_bytes(kwargs[i]) + tensor_bytes(outputs[i])
        memory.append(used + (tensor_bytes(output) if i == 0 and count > 1 else 0))
    return memory


def device_index(device: Any) -> int:
    """A device id as DataParallel takes it (an int, ``"cuda:1"``, a ``torch.device``) → its index."""
    if isinstance(device, torch.device):
        return device.index or 0
    if isinstance(device, str):
        return torch.device(device).index or 0
    return int(device)


def tensors(obj: Any, depth: int = 0) -> List[torch.Tensor]:
    """The tensors in ``obj`` and its lists, tuples and dicts (four levels down)."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if depth > 4:
        return []
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in tensors(v, depth + 1)]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in tensors(v, depth + 1)]
    return []


def tensor_bytes(obj: Any) -> int:
    return sum(t.numel() * t.element_size() for t in tensors(obj))


def batch_size(obj: Any, dim: int) -> Optional[int]:
    for t in tensors(obj):
        if t.dim() > 0:
            return int(t.size(dim))
    return None
