"""The emulation's parallel apply: one Python thread per replica, each on its emulated device, and on
virtual devices (more devices than GPUs) each replica on its GPU with its own CUDA stream.

Separate from the wrapper because it is where the emulation meets threads and streams: the
caller's grad mode and autocast state carried into each thread, a replica's exception re-raised
as "Caught X in replica i on device i", and the stream ordering that makes sharing a GPU safe
(replica i's stream waits for the caller's before its forward, the caller's waits for every
replica's before gather, tensors used across streams are marked with ``record_stream``)."""
from __future__ import annotations

import contextlib
import threading
import time
from itertools import chain
from typing import Any, List, Optional, Sequence, Tuple

import torch
from torch import nn
from torch._utils import ExceptionWrapper

from ._dp_record import ApplyLog, tensors
from ._emulated_device import on_device


def parallel_apply(modules: Sequence[nn.Module], inputs: Sequence[Any],
                   kwargs_tup: Optional[Sequence[dict]] = None,
                   devices: Optional[Sequence[int]] = None,
                   log: Optional[ApplyLog] = None, streams: Optional["Streams"] = None) -> List[Any]:
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
    run_log = log or ApplyLog(len(modules), time.perf_counter(), cuda=False)
    lock = threading.Lock()
    results: dict = {}
    grad_enabled = torch.is_grad_enabled()
    autocast_cpu, autocast_dtype = autocast_state("cpu")
    autocast_cuda, autocast_cuda_dtype = autocast_state("cuda") if streams is not None else (False, None)
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


class Streams:
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
            for tensor in chain(tensors(inputs[i]), tensors(kwargs[i]), replica_tensors(modules[i])):
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
            for tensor in tensors(output):
                if tensor.is_cuda:
                    # a CUDA stream is what record_stream takes; 1.13's stubs name a different Stream class
                    tensor.record_stream(torch.cuda.current_stream(tensor.device))  # type: ignore[arg-type]


def autocast_state(device_type: str) -> Tuple[bool, Any]:
    """Whether autocast is on for ``device_type`` here, and its dtype (torch 1.13 and 2.x spellings)."""
    try:  # torch >= 2.4 (the per-device functions are deprecated there)
        # torch >= 2.4's API: absent from the stubs of the torch these checks run with (1.13)
        return torch.is_autocast_enabled(device_type), torch.get_autocast_dtype(device_type)  # type: ignore
    except (TypeError, AttributeError):
        if device_type == "cpu":
            return torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()
        return torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype()


def replica_tensors(replica: nn.Module) -> List[torch.Tensor]:
    """A replica's parameter copies and buffers (replicas keep parameters as plain attributes)."""
    out: List[torch.Tensor] = []
    for module in replica.modules():
        out.extend(t for t in getattr(module, "_former_parameters", {}).values() if isinstance(t, torch.Tensor))
        out.extend(t for t in module._buffers.values() if t is not None)
    return out
