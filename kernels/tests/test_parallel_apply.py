"""mgpulab._parallel_apply: the emulation's parallel apply, one real thread per replica, each on its
emulated device with the caller's grad mode; a replica's exception names the replica and device."""
import threading

import pytest
import torch
from torch import nn

from mgpulab._dp_record import ApplyLog
from mgpulab._parallel_apply import autocast_state, parallel_apply, replica_tensors


class WhereAmI(nn.Module):
    def forward(self, x):
        return x + 1, threading.current_thread().name, torch.is_grad_enabled()


def test_each_replica_runs_on_its_own_thread_with_the_callers_grad_mode():
    modules = [WhereAmI(), WhereAmI(), WhereAmI()]
    with torch.no_grad():
        outputs = parallel_apply(modules, [torch.zeros(1), torch.ones(1), (torch.full((1,), 2.0),)])
    assert [o[0].item() for o in outputs] == [1.0, 2.0, 3.0]
    assert [o[1] for o in outputs] == ["dp-replica-0", "dp-replica-1", "dp-replica-2"]
    assert [o[2] for o in outputs] == [False, False, False]


def test_a_single_replica_runs_on_the_calling_thread_and_logs_its_time():
    log = ApplyLog(1, origin=0.0, cuda=False)
    [(value, thread, grad)] = parallel_apply([WhereAmI()], [torch.zeros(1)], log=log)
    assert thread == threading.current_thread().name and grad and log.apply_ms[0] >= 0


def test_a_replica_that_raises_is_named_with_its_device():
    class Fails(nn.Module):
        def forward(self, x):
            raise ValueError("bad input")

    with pytest.raises(ValueError, match="in replica 1 on device 7"):
        parallel_apply([WhereAmI(), Fails()], [torch.zeros(1), torch.zeros(1)], devices=[6, 7])


def test_autocast_is_off_by_default_and_seen_when_on():
    assert autocast_state("cpu")[0] is False
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert autocast_state("cpu") == (True, torch.bfloat16)


def test_a_replicas_tensors_are_its_buffers_and_former_parameters():
    module = nn.BatchNorm1d(3)
    found = replica_tensors(module)
    assert len(found) == 3  # running_mean, running_var, num_batches_tracked (the original keeps real parameters)
