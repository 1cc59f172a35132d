"""The real ``torch.nn.DataParallel``, one GPU per device, with ``last_phases`` recorded.

Separate from the emulation because this is torch's own algorithm on real GPUs: ``forward`` is
upstream's step for step with timestamps between phases, and torch's parallel apply runs each
replica through a callable that times it (CUDA events on the device's stream, no synchronize).
:func:`mgpulab.data_parallel.DataParallel` picks it when the plan gives every device a GPU."""
from __future__ import annotations

import time
from itertools import chain
from typing import Any, Callable, List, Optional, Sequence, Tuple

import torch
from torch import nn

from . import devices as _devices
from ._dp_record import ApplyLog, PhaseTimes, device_index, per_device, phase_times


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
            max(len(self.device_ids), 1), "DataParallel", device_ids=[device_index(d) for d in self.device_ids] or None)
        self._log: Optional[ApplyLog] = None

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
            chunks, chunk_kwargs = per_device(self.scatter(inputs, kwargs, self.device_ids))
            t1 = time.perf_counter()
            if len(self.device_ids) == 1:
                self._log = ApplyLog(1, t0, cuda=True)
                output = self._log.run(0, self.module, tuple(chunks[0]), chunk_kwargs[0])
                t2 = time.perf_counter()
                self._record(t0, t1, t1, t2, t2, chunks, chunk_kwargs, [output], output, [self.module])
                return output
            replicas = self.replicate(self.module, self.device_ids[:len(chunks)])
            t2 = time.perf_counter()
            self._log = ApplyLog(len(replicas), t0, cuda=True)
            outputs = self.parallel_apply(replicas, chunks, chunk_kwargs)
            t3 = time.perf_counter()
            output = self.gather(outputs, self.output_device)
            t4 = time.perf_counter()
            self._record(t0, t1, t2, t3, t4, chunks, chunk_kwargs, outputs, output, replicas)
            return output

    def parallel_apply(self, replicas: Sequence[nn.Module], inputs: Sequence[Any], kwargs: Any) -> List[Any]:
        from torch.nn.parallel.parallel_apply import parallel_apply as cuda_parallel_apply
        log = self._log or ApplyLog(len(replicas), time.perf_counter(), cuda=True)
        timed = [_TimedReplica(log, i, r) for i, r in enumerate(replicas)]
        # torch calls each "module" with the chunk: a callable that times the replica is all it needs
        return cuda_parallel_apply(timed, inputs, kwargs, self.device_ids[:len(replicas)])  # type: ignore[arg-type]

    def _record(self, t0: float, t1: float, t2: float, t3: float, t4: float, inputs: tuple, kwargs: tuple,
                outputs: List[Any], output: Any, replicas: List[nn.Module]) -> None:
        log = self._log
        assert log is not None
        ids = [device_index(d) for d in self.device_ids]
        self.last_phases = phase_times(False, ids, (t0, t1, t2, t3, t4), log, self.module, self.dim,
                                       inputs, kwargs, outputs, output)
        self.last_replicas = list(replicas) if self.keep_replicas else []
        self._log = None


class _TimedReplica:
    """Callable stand-in for a replica inside torch's parallel_apply worker."""

    def __init__(self, log: ApplyLog, index: int, replica: nn.Module) -> None:
        self.log, self.index, self.replica = log, index, replica

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.log.run(self.index, self.replica, args, kwargs)
