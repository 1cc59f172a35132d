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

This module holds the emulation's wrapper and the factory; beside it, ``_dp_record`` (what a
forward records: :class:`PhaseTimes`), ``_parallel_apply`` (threads and streams) and
``_timed_data_parallel`` (the real wrapper on GPUs).
"""
from __future__ import annotations

import contextlib
import time
from itertools import chain
from typing import Any, Callable, ContextManager, List, Optional, Sequence, Tuple, Union

import torch
from torch import nn

from . import devices as _devices
from ._dp_record import ApplyLog, PhaseTimes, device_index, per_device, phase_times
from ._emulated_device import EmulatedDeviceMismatch, on_device
from ._parallel_apply import Streams, parallel_apply
from ._replicate import replicate as _emulated_replicate
from ._scatter_gather import gather as _emulated_gather
from ._scatter_gather import scatter_kwargs as _emulated_scatter_kwargs
from ._timed_data_parallel import TimedDataParallel

__all__ = ["DataParallel", "EmulatedDataParallel", "TimedDataParallel", "PhaseTimes",
           "EmulatedDeviceMismatch", "parallel_apply"]


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
        ids = [device_index(d) for d in device_ids] if device_ids is not None else \
            list(range(_devices.emulated_device_count()))
        self.module = module
        self.device_ids: List[int] = ids
        self.dim = dim
        self.output_device = device_index(output_device) if output_device is not None else (ids[0] if ids else None)
        self.src_device = ids[0] if ids else None
        self.keep_replicas = keep_replicas
        self.last_phases: Optional[PhaseTimes] = None
        self.last_replicas: List[nn.Module] = []
        self.device_mode = plan if plan is not None else _devices.emulated_mode(max(len(ids), 1), "DataParallel")
        if self.device_mode.count != max(len(ids), 1):
            raise ValueError(f"the plan is for {self.device_mode.count} devices, device_ids has {len(ids)}")
        self._cuda = self.device_mode.kind == "cuda-shared"
        self._targets = [torch.device(d) for d in self.device_mode.devices] if self._cuda else []
        self._streams: Optional[Streams] = None

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        with torch.autograd.profiler.record_function("DataParallel.forward"):
            if not self.device_ids:
                return self.module(*inputs, **kwargs)
            if self._cuda:
                self._check_module_device()
            t0 = time.perf_counter()
            chunks, chunk_kwargs = per_device(self.scatter(inputs, kwargs, self.device_ids))
            t1 = time.perf_counter()
            if len(self.device_ids) == 1:
                log = ApplyLog(1, t0, cuda=self._cuda)
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
            log = ApplyLog(len(replicas), t0, cuda=self._cuda)
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
        index = device_index(device)
        position = self.device_ids.index(index) if index in self.device_ids else 0
        return self._targets[position]

    def _stream_set(self) -> Optional[Streams]:
        if not self._cuda:
            return None
        if self._streams is None:
            self._streams = Streams(self.device_ids, self._targets, self.device_mode.names)
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

    def _record(self, t0: float, t1: float, t2: float, t3: float, t4: float, log: ApplyLog,
                inputs: tuple, kwargs: tuple, outputs: List[Any], output: Any,
                replicas: List[nn.Module]) -> None:
        self.last_phases = phase_times(True, list(self.device_ids), (t0, t1, t2, t3, t4), log, self.module, self.dim,
                                       inputs, kwargs, outputs, output)
        self.last_replicas = list(replicas) if self.keep_replicas else []

    def extra_repr(self) -> str:
        where = f", virtual devices on {sorted({str(t) for t in self._targets})}" if self._cuda else ""
        return f"emulated device_ids={self.device_ids}, dim={self.dim}{where}"


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
    ids = [device_index(d) for d in device_ids] if device_ids is not None else None
    plan = _devices.detect(len(ids) if ids is not None else None, "DataParallel",
                           placement=_devices.placement_for(emulate, placement), device_ids=ids)
    if plan.kind == "cuda":
        return TimedDataParallel(module, device_ids, output_device, dim, keep_replicas=keep_replicas, plan=plan)
    ids = ids if ids is not None else list(range(plan.count))
    return EmulatedDataParallel(module, ids, output_device, dim, keep_replicas=keep_replicas, plan=plan)
