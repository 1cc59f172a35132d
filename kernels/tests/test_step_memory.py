"""mgpulab._step_memory: per-device memory readings for the step timer (CPU RSS here; CUDA in
test_cuda.py)."""
import torch

from mgpulab import devices
from mgpulab._step_memory import MEMORY_INTERVAL_S, MIB, MemorySampler, peak_rss_bytes, rss_bytes


class Emulated:
    emulated = True
    devices = [0, 1]
    memory_bytes = [2 * MIB, None]


def test_cpu_memory_is_the_process_rss_and_its_peak_every_step():
    sampler = MemorySampler(torch.device("cpu"))
    [(resident, peak)] = sampler.sample(None, 1.0)
    assert 0 < resident <= peak
    assert sampler.sample(None, 1.0001) is not None, "RSS is cheap: every step"
    assert rss_bytes() > 0 and peak_rss_bytes() > 0  # (the kernel may count RSS a page ahead of the peak: sample() takes the max)


def test_emulated_devices_report_their_tracked_bytes():
    sampler = MemorySampler(torch.device("cpu"))
    assert sampler.sample(Emulated(), 1.0) == [(2.0, None), (None, None)]


def test_cuda_indices_are_dataparallels_else_the_timers_own():
    sampler = MemorySampler(torch.device("cuda", 3))
    assert sampler.cuda_indices(None) == [3]
    assert sampler.cuda_indices(Emulated()) == [0, 1]
    assert MemorySampler(torch.device("cuda")).cuda_indices(None) == [0]


def test_cuda_memory_is_sampled_at_most_every_interval_and_its_peak_reset_each_time(monkeypatch):
    # The allocator's counters stand in for a GPU this host lacks (test_cuda.py reads real ones).
    readings = iter([(1 * MIB, 3 * MIB), (2 * MIB, 4 * MIB), (5 * MIB, 6 * MIB)])
    resets = []
    monkeypatch.setattr(devices, "cuda_memory", lambda index: next(readings))
    monkeypatch.setattr(devices, "reset_cuda_peak", resets.append)
    sampler = MemorySampler(torch.device("cuda", 1))
    assert sampler.sample(None, 1.0) == [(1.0, 3.0)]
    assert sampler.sample(None, 1.0 + MEMORY_INTERVAL_S / 2) is None
    assert sampler.sample(None, 1.0 + MEMORY_INTERVAL_S * 1.5) == [(2.0, 4.0)]
    assert sampler.sample(None, None) == [(5.0, 6.0)], "closing: sampled whatever the interval"
    assert resets == [1, 1, 1]
