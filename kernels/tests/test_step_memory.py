"""mgpulab._step_memory: per-device memory readings for the step timer (CPU RSS here; CUDA in
test_cuda.py)."""
import torch

from mgpulab._step_memory import MIB, MemorySampler, peak_rss_bytes, rss_bytes


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
