"""Memory readings for :class:`mgpulab.timing.StepTimer`, per device: CUDA allocator counters,
process RSS on the CPU, tracked tensor bytes for emulated DataParallel devices.

Separate from the timer because each source has its own cost and rule: one CUDA allocator snapshot
costs tens of microseconds, so CUDA is sampled on the first step, then at most every
MEMORY_INTERVAL_S (and at close), with the peak reset after each sample so the largest
``memory_peak_mib`` is the run's peak; RSS is one ``pread`` on a descriptor kept open, every step;
emulated devices report what DataParallel tracked (``PhaseTimes.memory_bytes``)."""
from __future__ import annotations

import os
import resource
import time
from typing import Any, List, Optional, Tuple

import torch

from . import devices

MIB = float(1 << 20)
MEMORY_INTERVAL_S = 0.1
Memory = List[Tuple[Optional[float], Optional[float]]]
"""Per device: (allocated or resident MiB, peak MiB); None where not known."""


class MemorySampler:
    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.cuda = device.type == "cuda"
        self._sampled_at: Optional[float] = None  # when CUDA memory was last sampled

    def cuda_indices(self, phases: Any) -> List[int]:
        """The CUDA devices a step ran on: DataParallel's, else the timer's own."""
        if phases is not None:
            return list(phases.devices)
        return [self.device.index if self.device.index is not None else 0]

    def reset_peaks(self) -> None:
        for index in self.cuda_indices(None):
            devices.reset_cuda_peak(index)

    def sample(self, phases: Any, now: Optional[float]) -> Optional[Memory]:
        """Per device (allocated MiB, peak MiB); None on a CUDA step between samples (``now`` None: sample anyway)."""
        if phases is not None and phases.emulated:
            return [(None if b is None else b / MIB, None) for b in phases.memory_bytes]
        if self.cuda:
            if now is not None and self._sampled_at is not None and now - self._sampled_at < MEMORY_INTERVAL_S:
                return None
            self._sampled_at = now if now is not None else time.perf_counter()
            out: Memory = []
            for index in self.cuda_indices(phases):
                allocated, peak = devices.cuda_memory(index)
                out.append((allocated / MIB, peak / MIB))
                devices.reset_cuda_peak(index)
            return out
        rss = rss_bytes()
        return [(rss / MIB, max(rss, peak_rss_bytes()) / MIB)]


_STATM_FD: Optional[int] = None
_STATM_PID: Optional[int] = None
_PAGE_SIZE = resource.getpagesize()


def rss_bytes() -> float:
    # One pread on a descriptor kept open (per process: ranks fork) instead of
    # open/read/close every step: the timer must cost a step microseconds.
    global _STATM_FD, _STATM_PID
    try:
        if _STATM_FD is None or _STATM_PID != os.getpid():
            _STATM_FD, _STATM_PID = os.open("/proc/self/statm", os.O_RDONLY), os.getpid()
        pages = int(os.pread(_STATM_FD, 128, 0).split()[1])
        return float(pages * _PAGE_SIZE)
    except (OSError, ValueError, IndexError):
        return peak_rss_bytes()


def peak_rss_bytes() -> float:
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)  # KiB on Linux
