"""Metric values read from CUDA tensors without synchronising the device.

``float(loss)`` or ``loss.item()`` on a CUDA tensor waits for the GPU to
finish every queued kernel: on a launch-bound loop that doubles the step. A
:class:`Capture` instead copies each CUDA scalar into pinned host memory with
``non_blocking=True`` (a ``cudaMemcpyAsync`` queued behind the kernels that
compute it), records an event after the copies, and reads the host copy only
once the event has completed — a step or two later, or when the cell ends.
Values that are not CUDA tensors are converted at once, as before.

What a capture costs a step is what a launch-bound loop pays on the host, so
nothing is allocated per step: the pinned scalars are slots of pages made once
(:class:`_PinnedSlots`, a page of 256 per dtype, another only while more than
that many captures wait), and the events come from a pool. Per captured value a
step issues one asynchronous device-to-host copy of a few bytes; per capture,
one event record. A slot goes back to its pool once its value has been read; a
capture dropped before its copy completed (after an interrupt) keeps its slots
until its event says the copy is done.

:class:`FrameQueue` keeps frames in order behind the ones still waiting, and
:func:`register` / :func:`flush_all` let the kernel (end of a cell) and rank
processes (end of the rank) emit whatever is still waiting.
"""
from __future__ import annotations

import atexit
import threading
import weakref
from collections import deque
from typing import Any, Callable, Deque, Dict, Iterable, List, Mapping, Optional, Tuple

from mgpulab_wire.protocol_generated import MetricMessage

Convert = Callable[[str, Any], Optional[float]]

_flushers: "weakref.WeakSet[Any]" = weakref.WeakSet()
_holding: set = set()  # flushers holding frames not yet sent: kept alive until they have sent them
_lock = threading.Lock()
_atexit_registered = False


def is_cuda_tensor(value: Any) -> bool:
    """True for a CUDA tensor, without importing torch for plain numbers."""
    return getattr(value, "is_cuda", False) is True and hasattr(value, "detach")


def has_cuda_tensor(values: Mapping[str, Any]) -> bool:
    return any(is_cuda_tensor(v) for v in values.values())


class _PinnedSlots:
    """0-dim pinned host tensors to copy CUDA scalars into, reused (see the module doc)."""

    PAGE = 256

    def __init__(self) -> None:
        self._free: Dict[Any, List[Any]] = {}  # dtype -> free slots
        self._pages: List[Any] = []  # keeps every page alive
        self._limbo: List["Capture"] = []  # dropped captures whose copies may still be in flight

    def take(self, dtype: Any) -> Any:
        free = self._free.setdefault(dtype, [])
        if not free:
            self._reclaim()
        if not free:
            import torch
            page = torch.empty(self.PAGE, dtype=dtype, pin_memory=True)
            self._pages.append(page)
            free.extend(page[i] for i in range(self.PAGE - 1, -1, -1))
        return free.pop()

    def give(self, slots: List[Any]) -> None:
        for slot in slots:
            self._free.setdefault(slot.dtype, []).append(slot)

    def drop(self, capture: "Capture") -> None:
        self._limbo.append(capture)

    def _reclaim(self) -> None:
        """Called with the pools' lock held."""
        waiting = []
        for capture in self._limbo:
            if capture.ready():
                slots, events = capture.take_back()
                self.give(slots)
                _events.give(events)
            else:
                waiting.append(capture)
        self._limbo = waiting


class EventPool:
    """CUDA events reused across steps (creating and destroying them each step costs a launch-bound step time).

    Thread-safe without a lock: ``deque.append``/``pop`` are atomic (DDP's comm hook takes the step timer's
    events from the autograd thread). ``timing``: events that can measure elapsed time.
    """

    def __init__(self, timing: bool = False) -> None:
        self._free: Deque[Any] = deque()
        self._timing = timing

    def take(self) -> Any:
        try:
            return self._free.pop()
        except IndexError:
            import torch
            return torch.cuda.Event(enable_timing=self._timing)

    def give(self, events: Iterable[Any]) -> None:
        self._free.extend(events)


_slots = _PinnedSlots()
_events = EventPool()
_pool_lock = threading.Lock()  # lab.log may run on any thread; the step timer on the training loop's


class Capture:
    """One frame's values: host values converted now, CUDA scalars copied without a sync."""

    __slots__ = ("values", "_device", "_events", "_convert")

    def __init__(self, values: Mapping[str, Any], convert: Convert, stream: Any = None) -> None:
        """``stream``: the stream the values were computed on, when the caller already has it (a step
        timer looks its stream up once a step); else each value's device's current stream."""
        self.values: Dict[str, Optional[float]] = {}
        self._device: List[Tuple[str, Any]] = []
        self._events: List[Any] = []
        self._convert = convert
        streams: Dict[Any, None] = {}
        for name, value in values.items():
            if not is_cuda_tensor(value):
                self.values[name] = convert(name, value)
                continue
            if value.numel() != 1:
                raise TypeError(f"metric {name!r} must be a scalar, got a tensor with {value.numel()} elements")
            with _pool_lock:
                slot = _slots.take(value.dtype)
            source = value.detach()
            slot.copy_(source if source.dim() == 0 else source.reshape(()), non_blocking=True)
            self.values[name] = None  # filled in by resolve()
            self._device.append((name, slot))
            streams.setdefault(value.device, None)
        if streams:
            import torch
            for device in streams:
                with _pool_lock:
                    event = _events.take()
                mine = stream is not None and stream.device == device
                event.record(stream if mine else torch.cuda.current_stream(device))
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
        for name, slot in self._device:
            self.values[name] = self._convert(name, slot)
        self.release()
        return self.values

    def drop(self) -> None:
        """Never read: the slots go back once the copies are done (they may still be in flight)."""
        if self._device or self._events:
            with _pool_lock:
                _slots.drop(self)

    def release(self) -> None:
        """Give the slots and events back (the copies are done)."""
        slots, events = self.take_back()
        with _pool_lock:
            _slots.give(slots)
            _events.give(events)

    def take_back(self) -> Tuple[List[Any], List[Any]]:
        """This capture's slots and events, which it no longer holds."""
        slots, events = [slot for _, slot in self._device], self._events
        self._events, self._device = [], []
        return slots, events


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
                dropped = [capture for _, capture in self._items]
                self._items.clear()
            for capture in dropped:
                capture.drop()


def register(flusher: Any) -> None:
    """Let :func:`flush_all` reach ``flusher.flush(wait)`` (held weakly)."""
    global _atexit_registered
    with _lock:
        _flushers.add(flusher)
        if not _atexit_registered:
            atexit.register(flush_all, True)  # a plain script's last frames
            _atexit_registered = True


def hold(flusher: Any) -> None:
    """``flusher`` holds frames not sent yet: keep it alive (a timer dropped without ``close()``
    still sends its last steps at :func:`flush_all`). Implies :func:`register`."""
    register(flusher)
    with _lock:
        _holding.add(flusher)


def release(flusher: Any) -> None:
    """``flusher`` has sent everything it held."""
    with _lock:
        _holding.discard(flusher)


def flush_all(wait: bool = True) -> None:
    """Every registered queue and timer emits what it holds (see :meth:`FrameQueue.flush`)."""
    with _lock:
        flushers = list(_flushers)
    for flusher in flushers:
        flusher.flush(wait)
