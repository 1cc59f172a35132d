"""mgpulab._step_phases: what one step's phases record (host clocks on the CPU), handed over in one
swap so the next step starts empty; the timer's own use is in test_toolkit_metrics.py."""
import time

import torch

from mgpulab._step_phases import Phase, PhaseRecorder


def test_cpu_phases_add_host_milliseconds_and_step_runs_from_the_first_phase():
    recorder = PhaseRecorder(torch.device("cpu"))
    with Phase(recorder, "forward"):
        time.sleep(0.01)
    with Phase(recorder, "forward"):
        pass
    with Phase(recorder, "data"):
        pass
    first = recorder.step_start
    now = time.perf_counter()
    host, events, pooled = recorder.take(now)
    assert set(host) == {"forward", "data", "step"} and host["forward"] >= 10.0
    assert abs(host["step"] - (now - first) * 1000.0) < 1e-6
    assert (events, pooled) == ([], 0)
    assert recorder.step_start == now


def test_the_next_step_starts_empty_at_the_end_of_the_last():
    recorder = PhaseRecorder(torch.device("cpu"))
    recorder.add("comm", 2.5)
    recorder.add("comm", 1.5)
    host, _, _ = recorder.take(100.0)
    assert host == {"comm": 4.0, "step": 0.0}, "a step with no phase before it has no duration"
    host, _, _ = recorder.take(100.25)
    assert host == {"step": 250.0}


def test_event_pairs_are_counted_as_the_pools():
    recorder = PhaseRecorder(torch.device("cpu"))
    recorder.add_events("forward", "start", "end")
    recorder.add_events("comm", "s2", "e2")
    _, events, pooled = recorder.take(1.0)
    assert events == [("forward", "start", "end"), ("comm", "s2", "e2")] and pooled == 4
