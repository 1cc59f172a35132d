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

The timer is the facade and the batching of step frames; its parts live beside it:
``_step_phases`` (recording a step's phases and DDP comm), ``_step_memory`` (memory
readings), ``_step_frames`` (what each frame carries).
"""
from __future__ import annotations

import time
from collections import deque
from typing import Any, Callable, Deque, Dict, Iterable, Iterator, List, Optional, Tuple

import torch

from mgpulab_wire import frames
from mgpulab_wire import protocol_generated as wire

from . import _deferred, _env, _run_tag, heartbeat, metrics
from ._step_frames import PHASES, memory_frames, step_frames
from ._step_memory import MEMORY_INTERVAL_S, MIB, Memory, MemorySampler
from ._step_phases import EventPair, Phase, PhaseRecorder

__all__ = ["StepTimer", "PHASES", "MIB", "MEMORY_INTERVAL_S", "SEND_INTERVAL_S", "SEND_BACKLOG", "Memory"]

SEND_INTERVAL_S = 0.05  # step frames go out in batches at most this far apart (see StepTimer.step)
SEND_BACKLOG = 256  # or once this many steps wait


class _Pending:
    """One finished step waiting for its CUDA events and tensor copies."""

    __slots__ = ("step", "host", "events", "build", "capture", "memory", "pooled")

    def __init__(self, step: int, host: Dict[str, float], events: List[EventPair],
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
        self._phases = PhaseRecorder(self.device)
        self._memory = MemorySampler(self.device)
        self._pending: Deque[_Pending] = deque()
        self._sent_at = float("-inf")  # when step() last sent what was ready
        self._last_step: Optional[int] = None
        self._last_memory_sent = True
        self._ddp = None
        if self.cuda:
            self._memory.reset_peaks()
            _deferred.register(self)
        if model is not None and _is_ddp(model):
            self.attach_ddp(model)
        if emit:
            self._publish_plan(model)

    def _publish_plan(self, model: Any) -> None:
        """Name the devices this run's metrics come from (once per run tag): a DataParallel
        model's plan, else one device. DDP ranks are named by ``lab.launch`` itself."""
        from . import plan as _plan
        if _env.world_size() > 1:
            return
        planned = getattr(model, "device_mode", None)
        if not isinstance(planned, _plan.DevicePlan):
            from . import devices
            placement = "cuda" if self.cuda else "cpu"
            planned = devices.detect(1, "single", placement=placement)
        metrics.publish_plan(planned, run_id=self.run_id)

    # -- phases ---------------------------------------------------------------------------

    def phase(self, name: str) -> Phase:
        """Time a block as ``name`` (data, forward, backward, comm, optimizer, or your own)."""
        return Phase(self._phases, name)

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

    def attach_ddp(self, ddp: Any) -> None:
        """Time DDP's allreduce through a comm hook (call before the first backward)."""
        if self._ddp is not None:
            return
        recorder = self._phases

        def hook(state, bucket):  # unannotated: DDP rejects annotations other than its own types
            return recorder.time_allreduce(bucket, self.comm_delay_ms)

        ddp.register_comm_hook(state=None, hook=hook)
        self._ddp = ddp

    # -- closing a step -------------------------------------------------------------------

    def step(self, step: int, *, samples: Optional[int] = None, loss: Any = None,
             **values: Any) -> None:
        """Close ``step``: emit its frame(s) now (CPU) or once its CUDA work is done (no sync)."""
        now = time.perf_counter()
        host, events, pooled = self._phases.take(now)
        extra = dict(values)
        if loss is not None:
            extra["loss"] = loss
        capture = None
        if _deferred.has_cuda_tensor(extra):
            capture = _deferred.Capture(extra, metrics.to_metric_value,  # copied now, read when ready
                                        self._phases.step_stream() if self.cuda else None)
            extra = capture.values
        else:
            extra = {k: metrics.to_metric_value(k, v) for k, v in extra.items()}
        phases = self._dp.last_phases if self._dp is not None else None
        memory = self._memory.sample(phases, now)
        if phases is not None and phases._events:
            for i, (start, end) in enumerate(phases._events):
                events.append((f"apply@{i}", start, end))
        self._pending.append(_Pending(step, host, events, self._builder(step, samples, extra, phases),
                                      capture, memory, pooled))
        self._last_step, self._last_memory_sent = step, memory is not None
        self._phases.next_stream()
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
            phases = self._dp.last_phases if self._dp is not None else None
            memory = self._memory.sample(phases, None)
            if self._pending:
                self._pending[-1].memory = memory
            elif memory is not None:
                # The closing memory sample of a step whose frame already went out without one.
                for message in memory_frames(self._last_step, phases.devices if phases is not None else [self.rank],
                                             memory, self.run_id):
                    self.records.append(message)
                    if self.emit:
                        frames.emit(message)
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
                self._phases.pool.give(e for _, start, end in pending.events[:pending.pooled // 2] for e in (start, end))
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
            return step_frames(step, self.rank, times, pending.memory, samples, extra, phases, self._ddp is not None, run_id)
        return build

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
