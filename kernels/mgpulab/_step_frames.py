"""A finished step's phase times → its metric frames, one per rank, or one per DataParallel device.

Separate from the timer because it is the one statement of what each frame carries (the
module doc of :mod:`mgpulab.timing` explains it): with DataParallel, device 0 carries the host's
view of the step and every other device its replica's forward, the shared backward, data and
step times, no optimizer work and no loss. Pure: times, memory and values in, messages out."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from mgpulab_wire import protocol_generated as wire

from . import metrics
from ._step_memory import Memory

PHASES = ("data", "forward", "backward", "comm", "optimizer")


def step_frames(step: int, rank: int, times: Dict[str, float], memory: Optional[Memory], samples: Optional[int],
                extra: Dict[str, Any], phases: Any, with_comm: bool, run_id: Optional[str]) -> List[wire.MetricMessage]:
    """``times``: phase → ms (``step``, ``apply@i`` per replica, any own phase); ``with_comm``: a DDP
    model, so ``comm_ms`` is sent even when no bucket was timed; ``phases``: DataParallel's
    ``last_phases`` for the step, or None."""
    main: Dict[str, Any] = {f"{p}_ms": times.get(p, 0.0) for p in PHASES if p != "comm"}
    main["step_ms"] = times.get("step", 0.0)
    if with_comm or "comm" in times:
        main["comm_ms"] = times.get("comm", 0.0)
    for name, value in times.items():
        if name not in PHASES and name != "step" and not name.startswith("apply@"):
            main[f"{name}_ms"] = value
    if phases is None:
        main["samples"] = samples
        if memory is not None:
            main["memory_mib"], main["memory_peak_mib"] = memory[0]
        main.update(extra)
        return [metrics.metric_message(step, main, rank=rank, run_id=run_id)]
    main.update(scatter_ms=phases.scatter_ms, replicate_ms=phases.replicate_ms, gather_ms=phases.gather_ms)
    main.update(extra)
    out = []
    for i, device in enumerate(phases.devices):
        apply_ms = times.get(f"apply@{i}", phases.apply_ms[i])
        if i == 0:
            values = main
        else:
            # What device i spent of the same step: its replica's forward, the shared
            # backward/data/step, no optimizer work, no loss.
            values = {"data_ms": main["data_ms"], "forward_ms": apply_ms,
                      "backward_ms": main["backward_ms"], "optimizer_ms": 0.0, "step_ms": main["step_ms"]}
        values["apply_ms"] = apply_ms
        values["samples"] = phases.samples[i]
        if memory is not None:
            values["memory_mib"], values["memory_peak_mib"] = memory[i] if i < len(memory) else (None, None)
        out.append(metrics.metric_message(step, values, rank=device, run_id=run_id))
    return out


def memory_frames(step: int, ranks: List[int], memory: Memory, run_id: Optional[str]) -> List[wire.MetricMessage]:
    """The closing memory sample of a step whose frame already went out without one."""
    return [metrics.metric_message(step, {"memory_mib": memory[i][0], "memory_peak_mib": memory[i][1]}, rank=rank, run_id=run_id)
            for i, rank in enumerate(ranks) if i < len(memory) and memory[i][0] is not None]
