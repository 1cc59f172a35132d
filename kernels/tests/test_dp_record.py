"""mgpulab._dp_record: what one DataParallel forward records, built the same way by both wrappers."""
import threading

import pytest
import torch
from torch import nn

from mgpulab._dp_record import ApplyLog, batch_size, device_index, per_device, phase_times, tensor_bytes, tensors


def test_the_log_records_each_replicas_time_interval_and_thread_also_when_it_raises():
    log = ApplyLog(2, origin=0.0, cuda=False)
    assert log.run(0, lambda x, scale=1: x * scale, (3,), {"scale": 2}) == 6

    def broken():
        raise ValueError("replica failed")

    with pytest.raises(ValueError):
        log.run(1, broken, (), {})
    assert all(ms >= 0 for ms in log.apply_ms)
    assert all(end >= start > 0 for start, end in log.intervals)
    assert log.threads == [threading.current_thread().name] * 2 and log.events == [None, None]


def test_phase_times_turn_the_clock_marks_into_phases_and_count_rows_and_bytes():
    module = nn.Linear(4, 2)  # 10 float parameters: 40 bytes of state on each device
    inputs = ((torch.zeros(3, 4),), (torch.zeros(2, 4),))
    kwargs = ({}, {"mask": torch.zeros(2, 1)})
    outputs = [torch.zeros(3, 2), torch.zeros(2, 2)]
    gathered = torch.zeros(5, 2)
    log = ApplyLog(2, origin=0.0, cuda=False)
    log.apply_ms = [1.5, 2.5]
    times = phase_times(True, [4, 5, 6], (1.0, 1.001, 1.003, 1.006, 1.010), log, module, 0, inputs, kwargs, outputs, gathered)
    assert times.emulated and times.devices == [4, 5] and times.samples == [3, 2]
    assert [round(v, 6) for v in (times.scatter_ms, times.replicate_ms, times.parallel_apply_ms, times.gather_ms, times.total_ms)] == \
        [1.0, 2.0, 3.0, 4.0, 10.0]
    assert times.apply_ms == [1.5, 2.5] and times.device_ms() == [1.5, 2.5]
    assert times.memory_bytes == [40 + 48 + 24 + 40, 40 + 32 + 8 + 16]
    assert times.to_dict()["samples"] == [3, 2] and times.to_dict()["deviceMs"] == [1.5, 2.5]


@pytest.mark.parametrize("device, index", [(2, 2), ("cuda:3", 3), ("cuda", 0), (torch.device("cuda", 1), 1), (torch.device("cpu"), 0)])
def test_device_ids_in_every_spelling_give_their_index(device, index):
    assert device_index(device) == index


def test_tensor_walks_look_into_containers_four_levels_down():
    t = torch.zeros(2, 3)
    assert len(tensors({"a": [t, (t, "x")], "b": 1})) == 2
    deep = t
    for _ in range(6):
        deep = [deep]
    assert tensors(deep) == []
    assert tensor_bytes([t, {"k": t}]) == 48
    assert batch_size((torch.tensor(1.0), t), 1) == 3 and batch_size(("no tensor",), 0) is None


def test_a_forward_without_inputs_runs_once_with_none():
    assert per_device(((), ())) == (((),), ({},))
    scattered = (((torch.zeros(1),),), ({},))
    assert per_device(scattered) is not None and per_device(scattered)[0] is scattered[0]
