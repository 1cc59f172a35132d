"""Collecting one training step's phase times for :class:`mgpulab.timing.StepTimer`: host clocks for
``data`` and CPU phases, CUDA event pairs for device phases, and DDP's allreduce through a comm hook.

Separate from the timer because this is the part that runs inside the training loop, on every
phase, from the loop's thread and (comm) from DDP's: it only records, under one lock, and hands a
step's records over in one swap (:meth:`PhaseRecorder.take`). Turning them into frames, batching
and sending is the timer's; nothing here synchronises the device. The comm hook wraps the default
allreduce and times each bucket from launch to completion of its future (CPU/gloo: ``perf_counter``
in the future's callback; CUDA/NCCL: events on the stream); ``comm_delay_ms`` delays each bucket's
completion (not its launch) to emulate a slow link."""
from __future__ import annotations

import threading
import time
from typing import Any, Dict, List, Optional, Tuple

import torch

from . import _deferred

EventPair = Tuple[str, Any, Any]
"""(phase name, start event, end event)."""


class Phase:
    """``with timer.phase(name):`` — a plain context manager (a generator-based one costs more)."""

    __slots__ = ("recorder", "name", "started", "start_event")

    def __init__(self, recorder: "PhaseRecorder", name: str) -> None:
        self.recorder, self.name = recorder, name

    def __enter__(self) -> None:
        recorder = self.recorder
        self.started = now = time.perf_counter()
        if recorder.step_start is None:
            recorder.step_start = now
        if recorder.cuda and self.name != "data":
            self.start_event = recorder.pool.take()
            self.start_event.record(recorder.step_stream())
        else:
            self.start_event = None

    def __exit__(self, *exc: Any) -> None:
        recorder = self.recorder
        if self.start_event is not None:
            end = recorder.pool.take()
            end.record(recorder.step_stream())
            recorder.add_events(self.name, self.start_event, end)
            return
        recorder.add(self.name, (time.perf_counter() - self.started) * 1000.0)


class PhaseRecorder:
    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.cuda = device.type == "cuda"
        self.pool = _deferred.EventPool(timing=True)
        self.step_start: Optional[float] = None
        self._lock = threading.Lock()
        self._host: Dict[str, float] = {}
        self._events: List[EventPair] = []
        self._pooled = 0  # how many of _events' events came from the pool (the rest are DataParallel's)
        self._stream: Any = None  # the device's current stream, looked up once per step (see step_stream)

    def step_stream(self) -> Any:
        """The stream this step's phase events go on: the device's current stream when the step's first
        phase began. Looked up once a step, not at every event: on a launch-bound loop each lookup is
        host time the next kernel launch waits for. A loop that switches streams inside a step is timed
        on the stream its step began on."""
        if self._stream is None:
            self._stream = torch.cuda.current_stream(self.device)
        return self._stream

    def add(self, name: str, ms: float) -> None:
        """Host milliseconds spent in ``name`` (added to what the step already has)."""
        with self._lock:
            self._host[name] = self._host.get(name, 0.0) + ms

    def add_events(self, name: str, start: Any, end: Any) -> None:
        """A pair of pooled CUDA events around ``name``, read when the step's frame is built."""
        with self._lock:
            self._events.append((name, start, end))
            self._pooled += 2

    def take(self, now: float) -> Tuple[Dict[str, float], List[EventPair], int]:
        """The step that ends at ``now``: its host times (with ``step``, from its first phase), its
        event pairs and how many of those events are the pool's; the next step starts empty at ``now``
        (its stream is still this step's until :meth:`next_stream`)."""
        with self._lock:
            host, events, pooled = self._host, self._events, self._pooled
            self._host, self._events, self._pooled = {}, [], 0
        host["step"] = (now - (self.step_start if self.step_start is not None else now)) * 1000.0
        self.step_start = now
        return host, events, pooled

    def next_stream(self) -> None:
        """The next step looks its stream up again (the loop may have switched streams between steps)."""
        self._stream = None

    def time_allreduce(self, bucket: Any, delay_ms: float) -> Any:
        """DDP's default allreduce of ``bucket``, timed as ``comm`` (a comm hook's body)."""
        from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
        start_event = None
        if self.cuda:
            start_event = self.pool.take()
            start_event.record(torch.cuda.current_stream(self.device))
        started = time.perf_counter()
        # None: the default process group (torch's stubs type the argument as a ProcessGroup)
        future = allreduce_hook(None, bucket)  # type: ignore[arg-type]
        delay = delay_ms / 1000.0

        def finished(value: Any) -> Any:
            if start_event is not None:
                end_event = self.pool.take()
                end_event.record(torch.cuda.current_stream(self.device))
                self.add_events("comm", start_event, end_event)
            else:
                self.add("comm", (time.perf_counter() - started) * 1000.0)
            return value

        if delay <= 0:
            return future.then(lambda fut: finished(fut.value()))
        delayed: "torch.futures.Future[Any]" = torch.futures.Future(devices=[self.device] if self.cuda else None)

        def complete_later(fut: Any) -> Any:
            value = fut.value()
            timer = threading.Timer(delay, lambda: delayed.set_result(finished(value)))
            timer.daemon = True
            timer.start()
            return value

        future.then(complete_later)
        return delayed
