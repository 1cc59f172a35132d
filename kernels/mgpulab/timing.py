"""Per-step, per-device timing: data wait / forward / backward / comm / optimizer.

::

    timer = lab.StepTimer(model)            # model: plain, lab.DataParallel or DDP
    for step, (x, y) in enumerate(timer.data(loader)):
        with timer.phase("forward"):
            loss = loss_fn(model(x), y)
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step(); opt.zero_grad()
        timer.step(step, samples=len(x), loss=loss)
    timer.close()

Clocks: ``time.perf_counter`` on CPU. On CUDA, phases are CUDA events on the
current stream, read lazily (a step's frame is emitted once its events have
completed, usually a step later; :meth:`StepTimer.close` waits for the rest):
no ``synchronize()`` per step. ``data`` is always host time (waiting for the
loader).

Communication (DDP): a comm hook wraps the default allreduce and times each
bucket from launch to completion of its future (CPU/gloo: ``perf_counter`` in
the future's callback; CUDA/NCCL: events on the stream). ``comm_ms`` is the
sum over buckets; it overlaps ``backward_ms``, do not add them. Works with
gloo on torch 1.13 and with NCCL on 2.x. ``comm_delay_ms`` delays each
bucket's completion (not its launch) to emulate a slow link.

Memory: CUDA ``memory_allocated`` and the step's peak
(``max_memory_allocated``, reset each step); CPU: process RSS and lifetime
peak RSS; emulated DataParallel: tracked tensor bytes per emulated device
(see ``PhaseTimes.memory_bytes``).

Frames: one metric message per step for this rank (``rank`` = DDP rank). With
DataParallel, one per device (``rank`` = device index), so charts can put the
devices side by side:

* device 0 carries the host's view of the step — ``step_ms``, ``data_ms``,
  ``forward_ms`` (the whole DataParallel forward: scatter, replicate, its own
  replica, gather), ``backward_ms``, ``optimizer_ms``, ``scatter_ms`` /
  ``replicate_ms`` / ``gather_ms``, the ``loss`` and any extra values;
* every device i > 0 carries ``forward_ms`` = its replica's forward
  (``apply_ms``), ``backward_ms`` = the whole backward (one autograd pass runs
  every replica's backward; it cannot be split per device), ``data_ms`` and
  ``step_ms`` of the step (every device waits for them), ``optimizer_ms`` = 0
  (the optimizer updates the parameters on device 0 only); no ``comm_ms``
  (gradients reach device 0 through autograd, not a collective);
* every device its ``apply_ms``, ``samples`` and memory.

Tag the frames of one variant with ``run_id`` (``StepTimer(model,
run_id="DataParallel x4")``) so charts can compare variants.
"""
from __future__ import annotations

import contextlib
import os
import resource
import threading
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, Iterable, Iterator, List, Optional, Tuple

import torch

from . import _env, heartbeat, metrics

MIB = float(1 << 20)
PHASES = ("data", "forward", "backward", "comm", "optimizer")


class _Pending:
    """One finished step waiting for its CUDA events."""

    def __init__(self, step: int, host: Dict[str, float], events: List[Tuple[str, Any, Any]],
                 build: Callable[[Dict[str, float]], List[dict]]) -> None:
        self.step, self.host, self.events, self.build = step, host, events, build

    def ready(self) -> bool:
        return all(end.query() for _, _, end in self.events)

    def resolve(self) -> List[dict]:
        times = dict(self.host)
        for name, start, end in self.events:
            end.synchronize()
            times[name] = times.get(name, 0.0) + start.elapsed_time(end)
        return self.build(times)


class StepTimer:
    """Times phases of training steps and emits them as metric frames."""

    def __init__(self, model: Optional[torch.nn.Module] = None, *, rank: Optional[int] = None,
                 run_id: Optional[str] = None, emit: bool = True, device: Any = None,
                 comm_delay_ms: float = 0.0, keep: int = 100_000) -> None:
        self.rank = _env.rank() if rank is None else rank
        self.run_id = run_id
        self.emit = emit
        self.device = torch.device(device) if device is not None else _model_device(model)
        self.cuda = self.device.type == "cuda"
        if self.cuda and emit:
            from . import gpu_monitor
            gpu_monitor.ensure_started()  # utilisation and memory of every GPU, once a second
        self.comm_delay_ms = comm_delay_ms
        self.records: Deque[dict] = deque(maxlen=keep)
        self._dp = model if hasattr(model, "last_phases") else None
        self._lock = threading.Lock()
        self._host: Dict[str, float] = {}
        self._events: List[Tuple[str, Any, Any]] = []
        self._comm_ms = 0.0
        self._step_start: Optional[float] = None
        self._pending: Deque[_Pending] = deque()
        self._ddp = None
        if model is not None and _is_ddp(model):
            self.attach_ddp(model)

    # -- phases ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time a block as ``name`` (data, forward, backward, comm, optimizer, or your own)."""
        now = time.perf_counter()
        if self._step_start is None:
            self._step_start = now
        if self.cuda and name != "data":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            try:
                yield
            finally:
                end.record()
                self._events.append((name, start, end))
            return
        try:
            yield
        finally:
            self._add(name, (time.perf_counter() - now) * 1000.0)

    def data(self, iterable: Iterable[Any]) -> Iterator[Any]:
        """Iterate ``iterable`` timing each ``next()`` as the ``data`` phase."""
        iterator = iter(iterable)
        while True:
            with self.phase("data"):
                try:
                    item = next(iterator)
                except StopIteration:
                    return
            yield item

    def _add(self, name: str, ms: float) -> None:
        with self._lock:
            self._host[name] = self._host.get(name, 0.0) + ms

    # -- DDP communication ----------------------------------------------------------------

    def attach_ddp(self, ddp: Any) -> None:
        """Time DDP's allreduce through a comm hook (call before the first backward)."""
        if self._ddp is not None:
            return
        def hook(state, bucket):  # unannotated: DDP rejects annotations other than its own types
            return self._comm_hook(bucket)

        ddp.register_comm_hook(state=None, hook=hook)
        self._ddp = ddp

    def _comm_hook(self, bucket: Any) -> Any:
        from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
        start_event = None
        if self.cuda:
            start_event = torch.cuda.Event(enable_timing=True)
            start_event.record()
        started = time.perf_counter()
        future = allreduce_hook(None, bucket)
        delay = self.comm_delay_ms / 1000.0

        def finished(value: Any) -> Any:
            if start_event is not None:
                end_event = torch.cuda.Event(enable_timing=True)
                end_event.record()
                with self._lock:
                    self._events.append(("comm", start_event, end_event))
            else:
                self._add("comm", (time.perf_counter() - started) * 1000.0)
            return value

        if delay <= 0:
            return future.then(lambda fut: finished(fut.value()))
        delayed = torch.futures.Future(devices=[self.device] if self.cuda else None)

        def complete_later(fut: Any) -> Any:
            value = fut.value()
            timer = threading.Timer(delay, lambda: delayed.set_result(finished(value)))
            timer.daemon = True
            timer.start()
            return value

        future.then(complete_later)
        return delayed

    # -- closing a step -------------------------------------------------------------------

    def step(self, step: int, *, samples: Optional[int] = None, loss: Any = None,
             **values: Any) -> None:
        """Close ``step``: emit its frame(s) now (CPU) or once its CUDA events are done."""
        now = time.perf_counter()
        with self._lock:
            host, events = self._host, self._events
            self._host, self._events = {}, []
        host["step"] = (now - (self._step_start if self._step_start is not None else now)) * 1000.0
        self._step_start = now
        extra = dict(values)
        if loss is not None:
            extra["loss"] = loss
        extra = {k: metrics.to_metric_value(k, v) for k, v in extra.items()}  # read tensors now
        phases = self._dp.last_phases if self._dp is not None else None
        memory = self._memory(phases)
        if phases is not None and not phases.emulated:
            for i, (start, end) in enumerate(phases._events):
                events.append((f"apply@{i}", start, end))
        build = self._builder(step, samples, extra, phases, memory)
        self._pending.append(_Pending(step, host, events, build))
        self._resolve(block=False)
        heartbeat.beat(step, frame=False)

    def close(self) -> None:
        """Emit every step still waiting for CUDA events (blocks until they complete)."""
        self._resolve(block=True)

    flush = close

    def __enter__(self) -> "StepTimer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _resolve(self, block: bool) -> None:
        while self._pending and (block or self._pending[0].ready()):
            for message in self._pending.popleft().resolve():
                self.records.append(message)
                if self.emit:
                    from mgpulab_kernel import protocol
                    protocol.emit(message)

    def _builder(self, step: int, samples: Optional[int], extra: Dict[str, Optional[float]],
                 phases: Any, memory: List[Tuple[Optional[float], Optional[float]]]
                 ) -> Callable[[Dict[str, float]], List[dict]]:
        def build(times: Dict[str, float]) -> List[dict]:
            main: Dict[str, Any] = {f"{p}_ms": times.get(p, 0.0) for p in PHASES if p != "comm"}
            main["step_ms"] = times.get("step", 0.0)
            if self._ddp is not None or "comm" in times:
                main["comm_ms"] = times.get("comm", 0.0)
            for name, value in times.items():
                if name not in PHASES and name != "step" and not name.startswith("apply@"):
                    main[f"{name}_ms"] = value
            if phases is None:
                main["samples"] = samples
                main["memory_mib"], main["memory_peak_mib"] = memory[0]
                main.update(extra)
                return [self._message(step, self.rank, main)]
            main.update(scatter_ms=phases.scatter_ms, replicate_ms=phases.replicate_ms,
                        gather_ms=phases.gather_ms)
            main.update(extra)
            out = []
            for i, device in enumerate(phases.devices):
                apply_ms = times.get(f"apply@{i}", phases.apply_ms[i])
                if i == 0:
                    values = main
                else:
                    # What device i spent of the same step (see the module doc): its replica's
                    # forward, the shared backward/data/step, no optimizer work, no loss.
                    values = {"data_ms": main["data_ms"], "forward_ms": apply_ms,
                              "backward_ms": main["backward_ms"], "optimizer_ms": 0.0,
                              "step_ms": main["step_ms"]}
                values["apply_ms"] = apply_ms
                values["samples"] = phases.samples[i]
                values["memory_mib"], values["memory_peak_mib"] = memory[i] if i < len(memory) else (None, None)
                out.append(self._message(step, device, values))
            return out
        return build

    def _message(self, step: int, rank: int, values: Dict[str, Any]) -> dict:
        return metrics.metric_message(step, values, rank=rank, run_id=self.run_id)

    def _memory(self, phases: Any) -> List[Tuple[Optional[float], Optional[float]]]:
        if phases is not None and phases.emulated:
            return [(None if b is None else b / MIB, None) for b in phases.memory_bytes]
        if self.cuda:
            ids = phases.devices if phases is not None else [self.device.index or 0]
            out = []
            for device in ids:
                out.append((torch.cuda.memory_allocated(device) / MIB, torch.cuda.max_memory_allocated(device) / MIB))
                torch.cuda.reset_peak_memory_stats(device)
            return out
        rss = _rss_bytes()
        return [(rss / MIB, max(rss, _peak_rss_bytes()) / MIB)]

    # -- reading back ---------------------------------------------------------------------

    def series(self, name: str, rank: Optional[int] = None) -> List[Tuple[int, Optional[float]]]:
        """(step, value) of ``name`` from emitted frames (this rank / device 0 by default)."""
        if rank is None:
            rank = 0 if self._dp is not None else self.rank
        return [(m["step"], m["values"][name]) for m in self.records
                if m["rank"] == rank and name in m["values"]]

    def mean(self, name: str, rank: Optional[int] = None, skip: int = 0) -> Optional[float]:
        """Mean of ``name`` over steps (after ``skip`` warm-up steps), None if absent."""
        values = [v for _, v in self.series(name, rank)[skip:] if v is not None]
        return sum(values) / len(values) if values else None


def _is_ddp(model: Any) -> bool:
    from torch.nn.parallel import DistributedDataParallel
    return isinstance(model, DistributedDataParallel)


def _model_device(model: Optional[torch.nn.Module]) -> torch.device:
    if model is None:
        return torch.device("cpu")
    for tensor in model.parameters():
        return tensor.device
    return torch.device("cpu")


_STATM_FD: Optional[int] = None
_STATM_PID: Optional[int] = None
_PAGE_SIZE = resource.getpagesize()


def _rss_bytes() -> float:
    # One pread on a descriptor kept open (per process: ranks fork) instead of
    # open/read/close every step: the timer must cost a step microseconds.
    global _STATM_FD, _STATM_PID
    try:
        if _STATM_FD is None or _STATM_PID != os.getpid():
            _STATM_FD, _STATM_PID = os.open("/proc/self/statm", os.O_RDONLY), os.getpid()
        pages = int(os.pread(_STATM_FD, 128, 0).split()[1])
        return float(pages * _PAGE_SIZE)
    except (OSError, ValueError, IndexError):
        return _peak_rss_bytes()


def _peak_rss_bytes() -> float:
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)  # KiB on Linux
