"""DataParallel: real ``nn.DataParallel`` on GPUs, a faithful emulation on CPU.

``DataParallel(module, ...)`` follows the device plan
(:func:`mgpulab.plan.plan`): :class:`TimedDataParallel` (a subclass of the
real ``torch.nn.DataParallel`` that also records per-phase times) when every
device is a GPU of its own; :class:`EmulatedDataParallel` otherwise — on
*virtual devices* sharing the GPUs when there are more devices than GPUs
(each replica on its own CUDA stream, device i on GPU i mod G), on the CPU
without a GPU or with ``placement="cpu"``. All expose ``last_phases`` (a
:class:`PhaseTimes` of the last forward), ``last_replicas`` (with
``keep_replicas=True``) and ``device_mode`` (the plan, with its label).

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

What the CPU emulation does not reproduce: device memory limits (no OOM from
one small GPU), transfer bandwidth (copies are memcpy, not PCIe/NVLink), GPU
kernels running truly concurrently (here replicas share the host's cores, and
torch's intra-op threads compete with the replica threads), CUDA streams, and
device errors other than the plain-attribute case (e.g.
``torch.zeros(3, device="cuda:0")`` created in forward, or tensors hidden in
lists/dicts of attributes). On virtual CUDA devices the kernels of the replicas
do run concurrently (one stream each) and copies are device copies, but all
replicas share one GPU's memory and bandwidth.

Streams on virtual devices: replica i's stream waits for the caller's current
stream (its inputs and parameter copies are made there) before its forward;
the caller's stream waits for every replica stream before gather; tensors used
across streams are marked with ``record_stream`` so the caching allocator does
not hand their memory out early. Backward runs each replica's ops on the
stream of their forward, and autograd synchronises the streams.
"""
from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Callable, ContextManager, List, Optional, Sequence, Tuple, Union

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
                   log: Optional[_ApplyLog] = None, streams: Optional["_Streams"] = None) -> List[Any]:
    """Emulated ``torch.nn.parallel.parallel_apply``: one thread per replica.

    Each thread runs with its emulated device set (so cross-device use of a
    plain tensor attribute raises), the caller's grad mode and autocast
    state. A single module runs on the calling thread, as in torch. With
    ``streams`` (virtual devices on GPUs) replica i runs on its GPU and stream.
    """
    assert len(modules) == len(inputs)
    kwargs_tup = tuple(kwargs_tup) if kwargs_tup is not None else ({},) * len(modules)
    assert len(modules) == len(kwargs_tup)
    devices = list(devices) if devices is not None else list(range(len(modules)))
    assert len(modules) == len(devices)
    run_log = log or _ApplyLog(len(modules), time.perf_counter(), cuda=False)
    lock = threading.Lock()
    results: dict = {}
    grad_enabled = torch.is_grad_enabled()
    autocast_cpu, autocast_dtype = _autocast_state("cpu")
    autocast_cuda, autocast_cuda_dtype = _autocast_state("cuda") if streams is not None else (False, None)
    naming = streams.name if streams is not None else None
    if streams is not None:
        streams.enter(modules, inputs, kwargs_tup)

    def _worker(i: int, module: nn.Module, input: Any, kwargs: dict, device: int) -> None:
        torch.set_grad_enabled(grad_enabled)
        try:
            with contextlib.ExitStack() as stack:
                stack.enter_context(on_device(device, naming))
                stack.enter_context(torch.autocast("cpu", enabled=autocast_cpu, dtype=autocast_dtype))
                if streams is not None:
                    stack.enter_context(streams.context(i))
                    stack.enter_context(torch.autocast("cuda", enabled=autocast_cuda, dtype=autocast_cuda_dtype))
                if not isinstance(input, (list, tuple)):
                    input = (input,)
                output = run_log.run(i, module, tuple(input), kwargs)
            with lock:
                results[i] = output
        except Exception:
            with lock:
                where = naming(device) if naming is not None else f"device {device}"
                results[i] = ExceptionWrapper(where=f"in replica {i} on {where}")

    if len(modules) > 1:
        threads = [threading.Thread(target=_worker, args=(i, m, inp, kw, dev), name=f"dp-replica-{i}")
                   for i, (m, inp, kw, dev) in enumerate(zip(modules, inputs, kwargs_tup, devices))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:
        _worker(0, modules[0], inputs[0], kwargs_tup[0], devices[0])

    if streams is not None:
        streams.leave(len(modules))
    outputs = []
    for i in range(len(inputs)):
        output = results[i]
        if isinstance(output, ExceptionWrapper):
            output.reraise()
        outputs.append(output)
    if streams is not None:
        streams.hand_back(outputs)
    return outputs


class _Streams:
    """Virtual devices on GPUs: replica i runs on ``targets[i]`` with its own CUDA stream.

    Replica 0 uses the caller's current stream (as device 0 does in torch's
    DataParallel); replicas 1..n-1 get a stream each, created once per wrapper.
    """

    def __init__(self, ids: Sequence[int], targets: Sequence[torch.device], names: Sequence[str]) -> None:
        self.targets = list(targets)
        self.names = dict(zip(ids, names))
        self.streams: List[Any] = [None] + [torch.cuda.Stream(device=t) for t in self.targets[1:]]

    def name(self, device: int) -> str:
        return self.names.get(device, f"virtual device {device}")

    def enter(self, modules: Sequence[nn.Module], inputs: Sequence[Any], kwargs: Sequence[dict]) -> None:
        """Order each replica stream after the caller's, and keep cross-stream tensors alive."""
        for i in range(1, len(modules)):
            stream = self.streams[i]
            stream.wait_stream(torch.cuda.current_stream(self.targets[i]))
            for tensor in chain(_tensors(inputs[i]), _tensors(kwargs[i]), _replica_tensors(modules[i])):
                if tensor.is_cuda:
                    tensor.record_stream(stream)

    def context(self, i: int) -> Any:
        stack = contextlib.ExitStack()
        stack.enter_context(torch.cuda.device(self.targets[i]))
        if self.streams[i] is not None:
            stack.enter_context(torch.cuda.stream(self.streams[i]))
        return stack

    def leave(self, count: int) -> None:
        """The caller's stream on every GPU used waits for the replica streams there."""
        for i in range(1, count):
            torch.cuda.current_stream(self.targets[i]).wait_stream(self.streams[i])
            if self.targets[i] != self.targets[0]:
                torch.cuda.current_stream(self.targets[0]).wait_stream(self.streams[i])

    def hand_back(self, outputs: Sequence[Any]) -> None:
        """Outputs made on replica streams are read on the caller's streams from now on."""
        for i, output in enumerate(outputs[1:], start=1):
            for tensor in _tensors(output):
                if tensor.is_cuda:
                    # a CUDA stream is what record_stream takes; 1.13's stubs name a different Stream class
                    tensor.record_stream(torch.cuda.current_stream(tensor.device))  # type: ignore[arg-type]


class EmulatedDataParallel(nn.Module):
    """``nn.DataParallel``'s algorithm on N emulated devices (see the module doc).

    ``device_ids`` are emulated device indices (default: ``range(N)`` with N
    from :func:`mgpulab.devices.emulated_device_count`). ``state_dict`` keys get
    the ``module.`` prefix like the real wrapper. ``plan`` (from
    :func:`mgpulab.devices.detect`) says where the devices live: the CPU (the
    default), or virtual devices sharing GPUs (``kind="cuda-shared"``), where
    the module must be on the first device's GPU, as torch requires.
    """

    def __init__(self, module: nn.Module, device_ids: Optional[Sequence[Any]] = None,
                 output_device: Optional[Any] = None, dim: int = 0, *, keep_replicas: bool = False,
                 plan: Optional[_devices.DevicePlan] = None) -> None:
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
        self.device_mode = plan if plan is not None else _devices.emulated_mode(max(len(ids), 1), "DataParallel")
        if self.device_mode.count != max(len(ids), 1):
            raise ValueError(f"the plan is for {self.device_mode.count} devices, device_ids has {len(ids)}")
        self._cuda = self.device_mode.kind == "cuda-shared"
        self._targets = [torch.device(d) for d in self.device_mode.devices] if self._cuda else []
        self._streams: Optional[_Streams] = None

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        with torch.autograd.profiler.record_function("DataParallel.forward"):
            if not self.device_ids:
                return self.module(*inputs, **kwargs)
            if self._cuda:
                self._check_module_device()
            t0 = time.perf_counter()
            # per device: a tuple of positional inputs and a dict of keyword inputs
            chunks, chunk_kwargs = self.scatter(inputs, kwargs, self.device_ids)
            if not chunks and not chunk_kwargs:
                chunks, chunk_kwargs = ((),), ({},)
            t1 = time.perf_counter()
            if len(self.device_ids) == 1:
                log = _ApplyLog(1, t0, cuda=self._cuda)
                where: ContextManager[Any] = contextlib.nullcontext()
                if self._cuda:
                    where = torch.cuda.device(self._targets[0])
                with on_device(self.device_ids[0], self._naming()), where:
                    output = log.run(0, self.module, tuple(chunks[0]), chunk_kwargs[0])
                t2 = time.perf_counter()
                self._record(t0, t1, t1, t2, t2, log, chunks, chunk_kwargs, [output], output, [self.module])
                return output
            replicas = self.replicate(self.module, self.device_ids[:len(chunks)])
            t2 = time.perf_counter()
            log = _ApplyLog(len(replicas), t0, cuda=self._cuda)
            outputs = parallel_apply(replicas, chunks, chunk_kwargs, self.device_ids[:len(replicas)], log,
                                     self._stream_set())
            t3 = time.perf_counter()
            output = self.gather(outputs, self.output_device)
            t4 = time.perf_counter()
            self._record(t0, t1, t2, t3, t4, log, chunks, chunk_kwargs, outputs, output, replicas)
            return output

    def replicate(self, module: nn.Module, device_ids: Sequence[int]) -> List[nn.Module]:
        targets = self._targets[:len(device_ids)] if self._cuda else None
        return _emulated_replicate(module, device_ids, not torch.is_grad_enabled(), targets)

    def scatter(self, inputs: tuple, kwargs: dict, device_ids: Sequence[int]) -> Tuple[tuple, tuple]:
        return _emulated_scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim,
                                        place=self._place if self._cuda else None)

    def parallel_apply(self, replicas: Sequence[nn.Module], inputs: Sequence[Any],
                       kwargs: Sequence[dict]) -> List[Any]:
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)], None,
                              self._stream_set())

    def gather(self, outputs: Sequence[Any], output_device: Any) -> Any:
        target = self._target_of(output_device) if self._cuda else None
        return _emulated_gather(outputs, dim=self.dim, target=target)

    def _place(self, chunk: torch.Tensor, i: int) -> torch.Tensor:
        """Chunk i on virtual device i's GPU: a copy (chunk 0 stays a view where it already is)."""
        target = self._targets[i]
        if chunk.device != target:
            return chunk.to(target, non_blocking=True)
        return chunk if i == 0 else chunk.clone(memory_format=torch.contiguous_format)

    def _target_of(self, device: Any) -> torch.device:
        index = _index(device)
        position = self.device_ids.index(index) if index in self.device_ids else 0
        return self._targets[position]

    def _stream_set(self) -> Optional[_Streams]:
        if not self._cuda:
            return None
        if self._streams is None:
            self._streams = _Streams(self.device_ids, self._targets, self.device_mode.names)
        return self._streams

    def _naming(self) -> Optional[Callable[[int], str]]:
        return self._stream_set().name if self._cuda else None  # type: ignore[union-attr]

    def _check_module_device(self) -> None:
        source = self._targets[0]
        for t in chain(self.module.parameters(), self.module.buffers()):
            if t.device != source:
                raise RuntimeError(f"module must have its parameters and buffers on device {source} (the GPU of "
                                   f"virtual device {self.device_ids[0]}) but found one of them on device: "
                                   f"{t.device}; move it with model.to(lab.devices.device(0))")

    def _record(self, t0: float, t1: float, t2: float, t3: float, t4: float, log: _ApplyLog,
                inputs: tuple, kwargs: tuple, outputs: List[Any], output: Any,
                replicas: List[nn.Module]) -> None:
        count = len(log.apply_ms)
        self.last_phases = PhaseTimes(
            emulated=True, devices=list(self.device_ids[:count]),
            samples=[_batch_size((inputs[i], kwargs[i]), self.dim) for i in range(count)],
            scatter_ms=(t1 - t0) * 1000.0, replicate_ms=(t2 - t1) * 1000.0,
            parallel_apply_ms=(t3 - t2) * 1000.0, gather_ms=(t4 - t3) * 1000.0,
            total_ms=(t4 - t0) * 1000.0, apply_ms=list(log.apply_ms),
            intervals=list(log.intervals), threads=list(log.threads),
            memory_bytes=_tracked_memory(self.module, inputs, kwargs, outputs, output, count),
            _events=[e for e in log.events if e is not None])
        self.last_replicas = list(replicas) if self.keep_replicas else []

    def extra_repr(self) -> str:
        where = f", virtual devices on {sorted({str(t) for t in self._targets})}" if self._cuda else ""
        return f"emulated device_ids={self.device_ids}, dim={self.dim}{where}"


def _tracked_memory(module: nn.Module, inputs: tuple, kwargs: tuple, outputs: List[Any], output: Any,
                    count: int) -> List[Optional[int]]:
    """Bytes each device holds for this forward: state, its inputs and outputs (device 0: the gathered output)."""
    state_bytes = _tensor_bytes(list(chain(module.parameters(), module.buffers())))
    memory: List[Optional[int]] = []
    for i in range(count):
        used = state_bytes + _tensor_bytes(inputs[i]) + _tensor_bytes(kwargs[i]) + _tensor_bytes(outputs[i])
        memory.append(used + (_tensor_bytes(output) if i == 0 and count > 1 else 0))
    return memory


class TimedDataParallel(nn.DataParallel):
    # torch's DataParallel has these; the stub it ships (1.13) declares only its constructor and forward
    module: nn.Module
    scatter: Callable[..., Tuple[Any, Any]]
    replicate: Callable[..., List[nn.Module]]
    gather: Callable[..., Any]
    """The real ``torch.nn.DataParallel`` (CUDA), with ``last_phases`` recorded.

    ``forward`` is upstream's, step for step, with timestamps between phases;
    replicas run through a timing wrapper that records CUDA events on each
    device's stream (no synchronize: read them with ``last_phases.device_ms``).
    ``last_phases.memory_bytes`` counts the same tracked bytes as the
    emulation (no allocator query per forward); the allocator's own figures
    per GPU come from :class:`mgpulab.timing.StepTimer`.
    """

    def __init__(self, module: nn.Module, device_ids: Optional[Sequence[Any]] = None,
                 output_device: Optional[Any] = None, dim: int = 0, *, keep_replicas: bool = False,
                 plan: Optional[_devices.DevicePlan] = None) -> None:
        super().__init__(module, device_ids, output_device, dim)
        self.keep_replicas = keep_replicas
        self.last_phases: Optional[PhaseTimes] = None
        self.last_replicas: List[nn.Module] = []
        self.device_mode = plan if plan is not None else _devices.detect(
            max(len(self.device_ids), 1), "DataParallel", device_ids=[_index(d) for d in self.device_ids] or None)
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
            # per device: a tuple of positional inputs and a dict of keyword inputs
            chunks, chunk_kwargs = self.scatter(inputs, kwargs, self.device_ids)
            if not chunks and not chunk_kwargs:
                chunks, chunk_kwargs = ((),), ({},)
            t1 = time.perf_counter()
            if len(self.device_ids) == 1:
                self._log = _ApplyLog(1, t0, cuda=True)
                output = self._log.run(0, self.module, tuple(chunks[0]), chunk_kwargs[0])
                t2 = time.perf_counter()
                self._record(t0, t1, t1, t2, t2, chunks, chunk_kwargs, [output], output, [self.module])
                return output
            replicas = self.replicate(self.module, self.device_ids[:len(chunks)])
            t2 = time.perf_counter()
            self._log = _ApplyLog(len(replicas), t0, cuda=True)
            outputs = self.parallel_apply(replicas, chunks, chunk_kwargs)
            t3 = time.perf_counter()
            output = self.gather(outputs, self.output_device)
            t4 = time.perf_counter()
            self._record(t0, t1, t2, t3, t4, chunks, chunk_kwargs, outputs, output, replicas)
            return output

    def parallel_apply(self, replicas: Sequence[nn.Module], inputs: Sequence[Any], kwargs: Any) -> List[Any]:
        from torch.nn.parallel.parallel_apply import parallel_apply as cuda_parallel_apply
        log = self._log or _ApplyLog(len(replicas), time.perf_counter(), cuda=True)
        timed = [_TimedReplica(log, i, r) for i, r in enumerate(replicas)]
        # torch calls each "module" with the chunk: a callable that times the replica is all it needs
        return cuda_parallel_apply(timed, inputs, kwargs, self.device_ids[:len(replicas)])  # type: ignore[arg-type]

    def _record(self, t0: float, t1: float, t2: float, t3: float, t4: float, inputs: tuple, kwargs: tuple,
                outputs: List[Any], output: Any, replicas: List[nn.Module]) -> None:
        log = self._log
        assert log is not None
        count = len(log.apply_ms)
        ids = [_index(d) for d in self.device_ids[:count]]
        self.last_phases = PhaseTimes(
            emulated=False, devices=ids,
            samples=[_batch_size((inputs[i], kwargs[i]), self.dim) for i in range(count)],
            scatter_ms=(t1 - t0) * 1000.0, replicate_ms=(t2 - t1) * 1000.0,
            parallel_apply_ms=(t3 - t2) * 1000.0, gather_ms=(t4 - t3) * 1000.0,
            total_ms=(t4 - t0) * 1000.0, apply_ms=list(log.apply_ms), intervals=list(log.intervals),
            threads=list(log.threads), memory_bytes=_tracked_memory(self.module, inputs, kwargs, outputs, output,
                                                                    count),
            _events=[e for e in log.events if e is not None])
        self.last_replicas = list(replicas) if self.keep_replicas else []
        self._log = None


class _TimedReplica:
    """Callable stand-in for a replica inside torch's parallel_apply worker."""

    def __init__(self, log: _ApplyLog, index: int, replica: nn.Module) -> None:
        self.log, self.index, self.replica = log, index, replica

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.log.run(self.index, self.replica, args, kwargs)


DataParallelModule = Union[TimedDataParallel, EmulatedDataParallel]
"""What :func:`DataParallel` returns: either way ``last_phases``, ``last_replicas`` and ``device_mode``."""


def DataParallel(module: nn.Module, device_ids: Optional[Sequence[Any]] = None,
                 output_device: Optional[Any] = None, dim: int = 0, *,
                 emulate: Optional[bool] = None, placement: Optional[str] = None,
                 keep_replicas: bool = False) -> DataParallelModule:
    """DataParallel on the devices :func:`mgpulab.devices.detect` plans for ``device_ids``.

    * one GPU per device (the host has them): the real ``nn.DataParallel``
      (:class:`TimedDataParallel`);
    * more devices than GPUs: :class:`EmulatedDataParallel` on virtual devices
      sharing the GPUs, one CUDA stream per replica;
    * no GPU, or ``placement="cpu"`` (``emulate=True``): the CPU emulation.

    ``device_ids=None``: every GPU, or the default number of emulated devices.
    ``.device_mode`` is the plan; its ``label`` says what runs and why. On a
    GPU the module must be on the first device's GPU, as torch requires
    (``model.to(lab.devices.device(0))``). ``keep_replicas=True`` keeps the last
    forward's replicas in ``.last_replicas`` (for
    :func:`mgpulab.inspect.replica_state`); it holds their memory until the
    next forward.
    """
    ids = [_index(d) for d in device_ids] if device_ids is not None else None
    plan = _devices.detect(len(ids) if ids is not None else None, "DataParallel",
                           placement=_devices.placement_for(emulate, placement), device_ids=ids)
    if plan.kind == "cuda":
        return TimedDataParallel(module, device_ids, output_device, dim, keep_replicas=keep_replicas, plan=plan)
    ids = ids if ids is not None else list(range(plan.count))
    return EmulatedDataParallel(module, ids, output_device, dim, keep_replicas=keep_replicas, plan=plan)


def _autocast_state(device_type: str) -> Tuple[bool, Any]:
    """Whether autocast is on for ``device_type`` here, and its dtype (torch 1.13 and 2.x spellings)."""
    try:  # torch >= 2.4 (the per-device functions are deprecated there)
        # torch >= 2.4's API: absent from the stubs of the torch these checks run with (1.13)
        return torch.is_autocast_enabled(device_type), torch.get_autocast_dtype(device_type)  # type: ignore
    except (TypeError, AttributeError):
        if device_type == "cpu":
            return torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()
        return torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype()


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


def _replica_tensors(replica: nn.Module) -> List[torch.Tensor]:
    """A replica's parameter copies and buffers (replicas keep parameters as plain attributes)."""
    out: List[torch.Tensor] = []
    for module in replica.modules():
        out.extend(t for t in getattr(module, "_former_parameters", {}).values() if isinstance(t, torch.Tensor))
        out.extend(t for t in module._buffers.values() if t is not None)
    return out


def _tensor_bytes(obj: Any) -> int:
    return sum(t.numel() * t.element_size() for t in _tensors(obj))


def _batch_size(obj: Any, dim: int) -> Optional[int]:
    for t in _tensors(obj):
        if t.dim() > 0:
            return int(t.size(dim))
    return None
