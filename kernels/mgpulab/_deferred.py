"""Metric values read from CUDA tensors without synchronising the device.

``float(loss)`` or ``loss.item()`` on a CUDA tensor waits for the GPU to
finish every queued kernel: on a launch-bound loop that doubles the step. A
:class:`Capture` instead copies each CUDA scalar into pinned host memory with
``non_blocking=True`` (a ``cudaMemcpyAsync`` queued behind the kernels that
compute it), records an event after the copies, and reads the host copy only
once the event has completed — a step or two later, or when the cell ends.
The caching host allocator keeps a pinned block from reuse until its copy has
completed. Values that are not CUDA tensors are converted at once, as before.

:class:`FrameQueue` keeps frames in order behind the ones still waiting, and
:func:`register` / :func:`flush_all` let the kernel (end of a cell) and rank
processes (end of the rank) emit whatever is still waiting.
"""
from __future__ import annotations

import atexit
import threading
import weakref
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Tuple

from mgpulab_wire.protocol_generated import MetricMessage

Convert = Callable[[str, Any], Optional[float]]

_flushers: "weakref.WeakSet[Any]" = weakref.WeakSet()
_lock = threading.Lock()
_atexit_registered = False


def is_cuda_tensor(value: Any) -> bool:
    """True for a CUDA tensor, without importing torch for plain numbers."""
    return getattr(value, "is_cuda", False) is True and hasattr(value, "detach")


def has_cuda_tensor(values: Mapping[str, Any]) -> bool:
    return any(is_cuda_tensor(v) for v in values.values())


class Capture:
    """One frame's values: host values converted now, CUDA scalars copied without a sync."""

    __slots__ = ("values", "_device", "_events", "_convert")

    def __init__(self, values: Mapping[str, Any], convert: Convert) -> None:
        self.values: Dict[str, Optional[float]] = {}
        self._device: List[Tuple[str, Any]] = []
        self._events: List[Any] = []
        self._convert = convert
        streams: Dict[Any, Any] = {}
        for name, value in values.items():
            if not is_cuda_tensor(value):
                self.values[name] = convert(name, value)
                continue
            if value.numel() != 1:
                raise TypeError(f"metric {name!r} must be a scalar, got a tensor with {value.numel()} elements")
            import torch
            host = torch.empty((), dtype=value.dtype, pin_memory=True)
            host.copy_(value.detach().reshape(()), non_blocking=True)
            self.values[name] = None  # filled in by resolve()
            self._device.append((name, host))
            streams.setdefault(value.device, None)
        if streams:
            import torch
            for device in streams:
                event = torch.cuda.Event()
                event.record(torch.cuda.current_stream(device))
                self._events.append(event)

    @property
    def deferred(self) -> bool:
        return bool(self._device)

    def ready(self) -> bool:
        return all(event.query() for event in self._events)

    def resolve(self) -> Dict[str, Optional[float]]:
        """The values, host copies read (waits for the copies only if they are not done yet)."""
        for event in self._events:
            event.synchronize()
        for name, host in self._device:
            self.values[name] = self._convert(name, host)
        self._events, self._device = [], []
        return self.values


class FrameQueue:
    """Messages emitted in order, each once its capture is ready."""

    def __init__(self, emit: Callable[[MetricMessage], None]) -> None:
        self._emit = emit
        self._items: Deque[Tuple[MetricMessage, Capture]] = deque()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def add(self, message: MetricMessage, capture: Capture) -> None:
        with self._lock:
            self._items.append((message, capture))
        register(self)
        self.drain(wait=False)

    def drain(self, wait: bool) -> None:
        """Emit every ready message in order; ``wait``: wait for the rest too."""
        while True:
            with self._lock:
                if not self._items or not (wait or self._items[0][1].ready()):
                    return
                message, capture = self._items.popleft()
            message["values"].update(capture.resolve())
            self._emit(message)

    def flush(self, wait: bool = True) -> None:
        """Emit what is ready (everything, with ``wait``); without ``wait`` the rest is dropped."""
        self.drain(wait)
        if not wait:
            with self._lock:
                self._items.clear()


def register(flusher: Any) -> None:
    """Let :func:`flush_all` reach ``flusher.flush(wait)`` (held weakly)."""
    global _atexit_registered
    with _lock:
        _flushers.add(flusher)
        if not _atexit_registered:
            atexit.register(flush_all, True)  # a plain script's last frames
            _atexit_registered = True


def flush_all(wait: bool = True) -> None:
    """Every registered queue and timer emits what it holds (see :meth:`FrameQueue.flush`)."""
    with _lock:
        flushers = list(_flushers)
    for flusher in flushers:
        flusher.flush(wait)
