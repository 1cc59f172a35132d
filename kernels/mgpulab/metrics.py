"""Metric messages out of the kernel and out of rank processes.

A metric message is ``{"type": "metric", "runId"?: str, "rank": int, "step": int,
"values": {name: float | None}}``. ``rank`` is the DDP rank, or the device
index for per-device DataParallel values (the run's DeviceMode says which).
Each message is built by the protocol's checking constructor
(:mod:`mgpulab_wire.protocol_generated`: a message the server would refuse
raises here, in the cell, naming the field and the limit) and sent as one
frame written with one ``os.write`` by :mod:`mgpulab_wire.frames`, so ranks
sharing the tty never interleave.

Value names used by the toolkit (units in the suffix: ``_ms`` milliseconds,
``_mib`` MiB = 2**20 bytes):

=====================  ====================================================
``loss``               training loss (non-finite → None)
``step_ms``            host wall time of the whole step
``data_ms``            waiting for the next batch
``forward_ms``         forward pass
``backward_ms``        backward pass (DDP: includes waiting for allreduce)
``comm_ms``            DDP allreduce time from the comm hook (overlaps backward)
``optimizer_ms``       optimizer step
``samples``            samples processed by this rank / device in the step
``memory_mib``         memory now: CUDA ``torch.cuda.memory_allocated`` of the
                       device (sampled at most every 0.1 s, so not in every
                       frame) / process RSS (CPU) / tracked tensor bytes
                       (emulated and virtual DataParallel devices)
``memory_peak_mib``    peak memory: CUDA ``torch.cuda.max_memory_allocated``
                       since the previous sample; CPU: process lifetime peak
``scatter_ms``         DataParallel phases of the forward (device 0 frame)
``replicate_ms``
``gather_ms``
``apply_ms``           one replica's forward (one frame per device)
``heartbeat``          1 — progress beacon (see :mod:`mgpulab.heartbeat`)
``gpu_util_pct``       NVML ``utilization.gpu``: % of the last sample period
                       in which a kernel ran on the GPU (any process);
                       ``rank`` = CUDA device index (see :mod:`mgpulab.gpu_monitor`)
``gpu_mem_mib``        NVML ``memory.used``: the GPU's used memory, every
                       process and CUDA context included
=====================  ====================================================

CUDA tensors are never read with ``.item()`` in :func:`log` or by the step
timer (that would wait for the GPU): their values are copied to pinned host
memory without a sync and the frame is sent once the copy has completed
(see :mod:`mgpulab._deferred`); :func:`flush_deferred` sends what is left.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Mapping, Optional, Set, Tuple

from mgpulab_wire import frames
from mgpulab_wire import protocol_generated as wire

from . import _deferred, _env, heartbeat
from ._run_tag import current_run_id, set_run_id

__all__ = ["NAME_PATTERN", "current_run_id", "emit_metric", "flush_deferred", "log", "metric_message",
           "publish_plan", "set_run_id", "to_metric_value"]

NAME_PATTERN = wire.METRIC_NAME_PATTERN
"""The protocol's metric name rule (letters, digits and ``_ . : / -``, at most 64, not starting with a digit)."""


def metric_message(step: int, values: Mapping[str, Any], *, rank: Optional[int] = None,
                   run_id: Optional[str] = None) -> wire.MetricMessage:
    """Build and validate a metric message (pure; does not send it).

    ValueError names the field and the limit the server would refuse it for
    (a run id over 64 characters, a step over 2**31 - 1, a bad value name)."""
    step = _non_negative_int("step", step)
    rank = _env.rank() if rank is None else _non_negative_int("rank", rank)
    if not values:
        raise ValueError("a metric message needs at least one value")
    clean = {name: to_metric_value(name, value) for name, value in values.items()}
    return wire.metric_message(run_id=run_id if run_id is not None else current_run_id(), rank=rank, step=step,
                               values=clean)


def emit_metric(step: int, values: Mapping[str, Any], *, rank: Optional[int] = None,
                run_id: Optional[str] = None) -> wire.MetricMessage:
    """Send one metric message; returns it."""
    message = metric_message(step, values, rank=rank, run_id=run_id)
    frames.emit(message)
    return message


_log_queue = _deferred.FrameQueue(frames.emit)


def log(step: int, loss: Any = None, *, rank: Optional[int] = None, run_id: Optional[str] = None,
        **values: Any) -> wire.MetricMessage:
    """Log ``loss`` and any other ``name=value`` for ``step``; also counts as a heartbeat.

    ``lab.log(step, loss=loss)`` — NaN/inf are sent as None. ``rank`` defaults
    to ``$RANK`` (0 outside DDP). CPU tensors are read with ``.item()``; CUDA
    tensors are copied to the host without waiting for the GPU, and the frame
    goes out once the copy is done (a step or so later; at the latest when the
    cell or rank ends): the returned message's CUDA values are None until then.
    """
    if loss is not None:
        values = {"loss": loss, **values}
    if len(_log_queue) or _deferred.has_cuda_tensor(values):
        capture = _deferred.Capture(values, to_metric_value)
        message = metric_message(step, capture.values, rank=rank, run_id=run_id)
        _log_queue.add(message, capture)
    else:
        message = emit_metric(step, values, rank=rank, run_id=run_id)
    heartbeat.beat(message["step"], frame=False)  # the metric frame itself shows progress
    return message


_published_plans: Set[Tuple[Optional[str], str, str]] = set()


def publish_plan(plan: Any, *, run_id: Optional[str] = None) -> Optional[wire.DevicePlanMessage]:
    """Tell the lab which devices the run tagged ``run_id`` ran on: a ``device_plan``
    message with ``plan`` (a :class:`mgpulab.plan.DevicePlan`), sent once per tag
    and plan per process. The charts and the stored run show its label and what
    its memory values measure, so what the lab says is the plan that ran."""
    run = run_id if run_id is not None else current_run_id()
    as_dict = plan.to_dict()
    key = (run, as_dict["label"], as_dict["memorySource"])
    if key in _published_plans:
        return None
    message = wire.device_plan_message(run_id=run, plan=as_dict)
    _published_plans.add(key)
    frames.emit(message)
    return message


def flush_deferred(block: bool = True) -> None:
    """Send every frame still waiting for a CUDA copy (``lab.log``, step timers).

    ``block=False`` sends those already complete and drops the rest (after an
    interrupt or a failure the device may never finish them).
    """
    _deferred.flush_all(block)


def to_metric_value(name: str, value: Any) -> Optional[float]:
    """A float or None; NaN and ±inf become None (JSON has no NaN)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        number = value
    elif hasattr(value, "item") and callable(value.item):
        numel = getattr(value, "numel", None)
        if callable(numel) and numel() != 1:
            raise TypeError(f"metric {name!r} must be a scalar, got a tensor with {numel()} elements")
        number = value.item()
    else:
        raise TypeError(f"metric {name!r} must be a number or None, got {type(value).__name__}")
    try:
        result = float(number)
    except OverflowError:
        return None
    except (TypeError, ValueError):
        raise TypeError(f"metric {name!r} must be a real number, got {number!r}") from None
    return result if math.isfinite(result) else None


def _non_negative_int(what: str, value: Any) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, got bool")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, got {type(value).__name__}") from None
    if number < 0:
        raise ValueError(f"{what} must be >= 0, got {number}")
    return number
