"""mgpulab._timed_data_parallel: the real nn.DataParallel with last_phases recorded. Its GPU path
needs two GPUs (skipped here, saying so); test_cuda.py drives it through lab.DataParallel too."""
import pytest
import torch
from torch import nn

from mgpulab import devices
from mgpulab._timed_data_parallel import TimedDataParallel


@pytest.mark.skipif(devices.cuda_device_count() > 0, reason="torch's DataParallel without CUDA is what this checks")
def test_without_cuda_it_is_the_module_and_records_nothing():
    torch.manual_seed(0)
    inner = nn.Linear(4, 2)
    model = TimedDataParallel(inner)
    x = torch.randn(3, 4)
    assert torch.equal(model(x), inner(x)) and model.last_phases is None and model.last_replicas == []


@pytest.mark.cuda(gpus=2)
def test_each_gpus_replica_is_timed_on_its_stream_and_the_forward_split_into_phases():
    model = TimedDataParallel(nn.Linear(4, 2).cuda(), device_ids=[0, 1], keep_replicas=True)
    out = model(torch.randn(6, 4, device="cuda"))
    phases = model.last_phases
    assert out.shape == (6, 2) and not phases.emulated
    assert phases.devices == [0, 1] and phases.samples == [3, 3] and len(model.last_replicas) == 2
    assert all(ms is not None and ms >= 0 for ms in phases.device_ms(block=True))
    assert phases.total_ms >= phases.parallel_apply_ms >= 0 and all(b > 0 for b in phases.memory_bytes)
