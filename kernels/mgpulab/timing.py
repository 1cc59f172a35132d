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
model's device's current stream, read lazily (a step's frame is emitted once
its events have completed, usually a step later; :meth:`StepTimer.close` waits
for the rest). Nothing in a step synchronises the device: ``loss=`` and other
tensor values are copied to pinned host memory without a sync and read when
the step's frame goes out (:mod:`mgpulab._deferred`); events come from a pool
instead of being created each step, and the stream is looked up once a step.
``data`` is always host time (waiting for the loader).

Sending: step frames go out in batches, at most ``SEND_INTERVAL_S`` apart (one
write for the batch), so a fast loop pays for building and writing frames in
one go rather than at the end of every step; a step slower than that goes out
as it ends. What is left goes out at :meth:`StepTimer.close`, at the end of
the cell or rank, or at exit, also for a timer dropped without ``close()``.

Communication (DDP): a comm hook wraps the default allreduce and times each
bucket from launch to completion of its future (CPU/gloo: ``perf_counter`` in
the future's callback; CUDA/NCCL: events on the stream). ``comm_ms`` is the
sum over buckets; it overlaps ``backward_ms``, do not add them. Works with
gloo on torch 1.13 and with NCCL on 2.x. ``comm_delay_ms`` delays each
bucket's completion (not its launch) to emulate a slow link.

Memory: CUDA ``torch.cuda.memory_allocated`` and ``max_memory_allocated``
per device, sampled on the first step, then at most every
``MEMORY_INTERVAL_S`` (one allocator snapshot costs tens of microseconds) and
at :meth:`StepTimer.close`; the peak is reset after each sample, so the
largest ``memory_peak_mib`` is the run's peak. CPU: process RSS and lifetime
peak RSS, every step. Emulated and virtual DataParallel devices: tracked
tensor bytes per device (see ``PhaseTimes.memory_bytes``).

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

import os
import resource
import threading
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, Iterable, Iterator, List, Optional, Tuple

import torch

from mgpulab_wire import frames
from mgpulab_wire import protocol_generated as wire

from . import _deferred, _env, _run_tag, devices, heartbeat, metrics

MIB = float(1 << 20)
PHASES = ("data", "forward", "backward", "comm", "optimizer")
MEMORY_INTERVAL_S = 0.1
SEND_INTERVAL_S = 0.05  # step frames go out in batches at most this far apart (see StepTimer.step)
SEND_BACKLOG = 256  # or once this many steps wait
Memory = List[Tuple[Optional[float], Optional[float]]]


class _Pending:
    """One finished step waiting for its CUDA events and tensor copies."""

    __slots__ = ("step", "host", "events", "build", "capture", "memory", "pooled")

    def __init__(self, step: int, host: Dict[str, float], events: List[Tuple[str, Any, Any]],
                 build: Callable[["_Pending", bool], List[wire.MetricMessage]], capture: Optional[_deferred.Capture],
                 memory: Optional[Memory], pooled: int) -> None:
        self.step, self.host, self.events, self.build = step, host, events, build
        self.capture, self.memory, self.pooled = capture, memory, pooled

    def ready(self) -> bool:
        # the latest events first: while the device is behind, one query answers
        if self.capture is not None and not self.capture.ready():
            return False
        return all(end.query() for _, _, end in reversed(self.events))

    def times(self, waited: bool) -> Dict[str, float]:
        """Host and device phase times; ``waited``: ready() said every event is done (no sync needed)."""
        times = dict(self.host)
        for name, start, end in self.events:
            if not waited:
                end.synchronize()
            times[name] = times.get(name, 0.0) + start.elapsed_time(end)
        return times


class _Phase:
    """``with timer.phase(name):`` — a plain context manager (a generator-based one costs more)."""

    __slots__ = ("timer", "name", "started", "start_event", "stream")

    def __init__(self, timer: "StepTimer", name: str) -> None:
        self.timer, self.name = timer, name

    def __enter__(self) -> None:
        timer = self.timer
        self.started = now = time.perf_counter()
        if timer._step_start is None:
            timer._step_start = now
        if timer.cuda and self.name != "data":
            self.start_event = timer._pool.take()
            self.start_event.record(timer._step_stream())
        else:
            self.start_event = None

    def __exit__(self, *exc: Any) -> None:
        timer = self.timer
        if self.start_event is not None:
            end = timer._pool.take()
            end.record(timer._step_stream())
            with timer._lock:
                timer._events.append((self.name, self.start_event, end))
                timer._pooled += 2
            return
        timer._add(self.name, (time.perf_counter() - self.started) * 1000.0)


class StepTimer:
    """Times phases of training steps and emits them as metric frames."""

    def __init__(self, model: Optional[torch.nn.Module] = None, *, rank: Optional[int] = None,
                 run_id: Optional[str] = None, emit: bool = True, device: Any = None,
                 comm_delay_ms: float = 0.0, keep: int = 100_000) -> None:
        self.rank = _env.rank() if rank is None else rank
        # Refused now, in the cell: a step's frame may be built only when the cell ends.
        self.run_id = None if run_id is None else _run_tag.check_run_id(run_id)
        self.emit = emit
        self.device = torch.device(device) if device is not None else _model_device(model)
        self.cuda = self.device.type == "cuda"
        if self.cuda and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        if self.cuda and emit and _env.local_rank() == 0:
            from . import gpu_monitor
            gpu_monitor.ensure_started()  # every GPU's utilisation and memory, once a second, from one rank
        self.comm_delay_ms = comm_delay_ms
        self.records: Deque[wire.MetricMessage] = deque(maxlen=keep)
        # duck-typed: any DataParallel wrapper that records last_phases (lab.DataParallel's both do)
        self._dp: Any = model if hasattr(model, "last_phases") else None
        self._lock = threading.Lock()
        self._host: Dict[str, float] = {}
        self._events: List[Tuple[str, Any, Any]] = []
        self._pooled = 0  # how many of _events' events came from the pool (the rest are DataParallel's)
        self._pool = _deferred.EventPool(timing=True)
        self._step_start: Optional[float] = None
        self._stream: Any = None  # the device's current stream, looked up once per step (see _step_stream)
        self._pending: Deque[_Pending] = deque()
        self._sent_at = float("-inf")  # when step() last sent what was ready
        self._memory_at: Optional[float] = None  # when CUDA memory was last sampled
        self._last_step: Optional[int] = None
        self._last_memory_sent = True
        self._ddp = None
        if self.cuda:
            for index in self._cuda_indices(None):
                devices.reset_cuda_peak(index)
            _deferred.register(self)
        if model is not None and _is_ddp(model):
            self.attach_ddp(model)
        if emit:
            self._publish_plan(model)

    def _publish_plan(self, model: Any) -> None:
        """Name the devices this run's metrics come from (once per run tag): a DataParallel
        model's plan, else one device. DDP ranks are named by ``lab.launch`` itself."""
        from . import metrics, plan as _plan
        if _env.world_size() > 1:
            return
        planned = getattr(model, "device_mode", None)
        if not isinstance(planned, _plan.DevicePlan):
            from . import devices
            placement = "cuda" if self.cuda else "cpu"
            planned = devices.detect(1, "single", placement=placement)
        metrics.publish_plan(planned, run_id=self.run_id)

    # -- phases ---------------------------------------------------------------------------

    def _step_stream(self) -> Any:
        """The stream this step's phase events go on: the device's current stream when the step's first
        phase began. Looked up once a step, not at every event: on a launch-bound loop each lookup is
        host time the next kernel launch waits for. A loop that switches streams inside a step is timed
        on the stream its step began on."""
        if self._stream is None:
            self._stream = torch.cuda.current_stream(self.device)
        return self._stream

    def phase(self, name: str) -> _Phase:
        """Time a block as ``name`` (data, forward, backward, comm, optimizer, or your own)."""
        return _Phase(self, name)

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
            start_event = self._pool.take()
            start_event.record(torch.cuda.current_stream(self.device))
        started = time.perf_counter()
        # None: the default process group (torch's stubs type the argument as a ProcessGroup)
        future = allreduce_hook(None, bucket)  # type: ignore[arg-type]
        delay = self.comm_delay_ms / 1000.0

        def finished(value: Any) -> Any:
            if start_event is not None:
                end_event = self._pool.take()
                end_event.record(torch.cuda.current_stream(self.device))
                with self._lock:
                    self._events.append(("comm", start_event, end_event))
                    self._pooled += 2
            else:
                self._add("comm", (time.perf_counter() - started) * 1000.0)
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

    # -- closing a step -------------------------------------------------------------------

    def step(self, step: int, *, samples: Optional[int] = None, loss: Any = None,
             **values: Any) -> None:
        """Close ``step``: emit its frame(s) now (CPU) or once its CUDA work is done (no sync)."""
        now = time.perf_counter()
        with self._lock:
            host, events, pooled = self._host, self._events, self._pooled
            self._host, self._events, self._pooled = {}, [], 0
        host["step"] = (now - (self._step_start if self._step_start is not None else now)) * 1000.0
        self._step_start = now
        extra = dict(values)
        if loss is not None:
            extra["loss"] = loss
        capture = None
        if _deferred.has_cuda_tensor(extra):
            capture = _deferred.Capture(extra, metrics.to_metric_value,  # copied now, read when ready
                                        self._step_stream() if self.cuda else None)
            extra = capture.values
        else:
            extra = {k: metrics.to_metric_value(k, v) for k, v in extra.items()}
        phases = self._dp.last_phases if self._dp is not None else None
        memory = self._memory(phases, now)
        if phases is not None and phases._events:
            for i, (start, end) in enumerate(phases._events):
                events.append((f"apply@{i}", start, end))
        self._pending.append(_Pending(step, host, events, self._builder(step, samples, extra, phases),
                                      capture, memory, pooled))
        self._last_step, self._last_memory_sent = step, memory is not None
        self._stream = None
        if len(self._pending) == 1:
            _deferred.hold(self)  # sent at the cell's (or rank's) end even if the timer is dropped unclosed
        # Frames go out in batches: building and writing 50 frames in one go costs the training loop less
        # host time than one at the end of every step (on a launch-bound GPU loop that time is the step's).
        # A step slower than the interval is sent as it ends (CUDA: once its events are done, a step later).
        if now - self._sent_at >= SEND_INTERVAL_S or len(self._pending) >= SEND_BACKLOG:
            self._sent_at = now
            self._resolve(block=False)
        heartbeat.beat(step, frame=False)

    def close(self) -> None:
        """Emit every step still waiting for the device (waits for it), with a last memory sample."""
        if self.cuda and not self._last_memory_sent and self._last_step is not None:
            memory = self._memory(self._dp.last_phases if self._dp is not None else None, None)
            if self._pending:
                self._pending[-1].memory = memory
            elif memory is not None:
                self._emit_memory(self._last_step, memory)
            self._last_memory_sent = True
        self._resolve(block=True)

    def flush(self, wait: bool = True) -> None:
        """:meth:`close`; ``wait=False`` emits only the steps the device has finished and drops the
        rest (what :func:`mgpulab.metrics.flush_deferred` does after an interrupt)."""
        if wait:
            self.close()
        else:
            self._resolve(block=False)
            for pending in self._pending:
                if pending.capture is not None:
                    pending.capture.drop()
            self._pending.clear()
            _deferred.release(self)

    def __enter__(self) -> "StepTimer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _resolve(self, block: bool) -> None:
        out: List[wire.MetricMessage] = []
        while self._pending:
            waited = self._pending[0].ready()
            if not (waited or block):
                break
            pending = self._pending.popleft()
            out.extend(pending.build(pending, waited))
            if pending.pooled:  # phase and comm events come first; DataParallel's own follow
                self._pool.give(e for _, start, end in pending.events[:pending.pooled // 2] for e in (start, end))
                pending.pooled = 0
        self.records.extend(out)
        if self.emit and out:
            frames.emit_many(out)
        if not self._pending:
            _deferred.release(self)

    def _builder(self, step: int, samples: Optional[int], extra: Dict[str, Optional[float]],
                 phases: Any) -> Callable[[_Pending, bool], List[wire.MetricMessage]]:
        # the step's tag, also when its frame is built after the loop set a new one
        run_id = self.run_id if self.run_id is not None else _run_tag.current_run_id()

        def build(pending: _Pending, waited: bool) -> List[wire.MetricMessage]:
            times = pending.times(waited)
            if pending.capture is not None:
                extra.update(pending.capture.resolve())
            memory = pending.memory
            main: Dict[str, Any] = {f"{p}_ms": times.get(p, 0.0) for p in PHASES if p != "comm"}
            main["step_ms"] = times.get("step", 0.0)
            if self._ddp is not None or "comm" in times:
                main["comm_ms"] = times.get("comm", 0.0)
            for name, value in times.items():
                if name not in PHASES and name != "step" and not name.startswith("apply@"):
                    main[f"{name}_ms"] = value
            if phases is None:
                main["samples"] = samples
                if memory is not None:
                    main["memory_mib"], main["memory_peak_mib"] = memory[0]
                main.update(extra)
                return [self._message(step, self.rank, main, run_id)]
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
                if memory is not None:
                    values["memory_mib"], values["memory_peak_mib"] = memory[i] if i < len(memory) else (None, None)
                out.append(self._message(step, device, values, run_id))
            return out
        return build

    def _message(self, step: int, rank: int, values: Dict[str, Any], run_id: Optional[str]) -> wire.MetricMessage:
        return metrics.metric_message(step, values, rank=rank, run_id=run_id)

    def _emit_memory(self, step: int, memory: Memory) -> None:
        """The closing memory sample of a step whose frame already went out without one."""
        phases = self._dp.last_phases if self._dp is not None else None
        ranks = phases.devices if phases is not None else [self.rank]
        for i, rank in enumerate(ranks):
            if i < len(memory) and memory[i][0] is not None:
                message = self._message(step, rank, {"memory_mib": memory[i][0], "memory_peak_mib": memory[i][1]},
                                        self.run_id)
                self.records.append(message)
                if self.emit:
                    frames.emit(message)

    def _memory(self, phases: Any, now: Optional[float]) -> Optional[Memory]:
        """Per device (allocated MiB, peak MiB); None on a CUDA step between samples."""
        if phases is not None and phases.emulated:
            return [(None if b is None else b / MIB, None) for b in phases.memory_bytes]
        if self.cuda:
            if now is not None and self._memory_at is not None and now - self._memory_at < MEMORY_INTERVAL_S:
                return None
            self._memory_at = now if now is not None else time.perf_counter()
            out: Memory = []
            for index in self._cuda_indices(phases):
                allocated, peak = devices.cuda_memory(index)
                out.append((allocated / MIB, peak / MIB))
                devices.reset_cuda_peak(index)
            return out
        rss = _rss_bytes()
        return [(rss / MIB, max(rss, _peak_rss_bytes()) / MIB)]

    def _cuda_indices(self, phases: Any) -> List[int]:
        if phases is not None:
            return list(phases.devices)
        return [self.device.index if self.device.index is not None else 0]

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
