"""mgpulab._step_frames: what each step frame carries, for one rank and per DataParallel device."""
from mgpulab._step_frames import memory_frames, step_frames


class Phases:
    devices = [0, 1]
    scatter_ms, replicate_ms, gather_ms = 1.0, 2.0, 3.0
    apply_ms = [4.0, 5.0]
    samples = [3, 2]


def test_one_rank_carries_every_phase_its_own_and_its_values():
    [frame] = step_frames(7, 2, {"forward": 1.5, "step": 9.0, "decode": 0.5}, [(10.0, 12.0)], 4, {"loss": 0.25},
                          None, False, "r1")
    assert (frame["rank"], frame["step"], frame["runId"]) == (2, 7, "r1")
    assert frame["values"] == {"data_ms": 0.0, "forward_ms": 1.5, "backward_ms": 0.0, "optimizer_ms": 0.0, "step_ms": 9.0,
                               "decode_ms": 0.5, "samples": 4.0, "memory_mib": 10.0, "memory_peak_mib": 12.0, "loss": 0.25}


def test_comm_is_sent_for_ddp_even_with_no_bucket_timed():
    [frame] = step_frames(0, 0, {}, None, None, {}, None, True, None)
    assert frame["values"]["comm_ms"] == 0.0
    [frame] = step_frames(0, 0, {}, None, None, {}, None, False, None)
    assert "comm_ms" not in frame["values"]


def test_dataparallel_device_zero_has_the_hosts_view_and_the_others_their_replica():
    times = {"forward": 20.0, "backward": 30.0, "optimizer": 4.0, "data": 1.0, "step": 60.0, "apply@1": 6.5}
    zero, one = step_frames(3, 0, times, [(1.0, 2.0)], None, {"loss": 0.5}, Phases(), False, None)
    assert zero["rank"] == 0 and zero["values"]["forward_ms"] == 20.0 and zero["values"]["apply_ms"] == 4.0
    assert zero["values"]["gather_ms"] == 3.0 and zero["values"]["loss"] == 0.5 and zero["values"]["memory_mib"] == 1.0
    assert one["rank"] == 1 and one["values"] == {"data_ms": 1.0, "forward_ms": 6.5, "backward_ms": 30.0, "optimizer_ms": 0.0,
                                                  "step_ms": 60.0, "apply_ms": 6.5, "samples": 2.0,
                                                  "memory_mib": None, "memory_peak_mib": None}


def test_a_closing_memory_sample_goes_to_the_devices_that_have_one():
    frames = memory_frames(5, [0, 1, 2], [(1.0, 2.0), (None, None)], "r")
    assert [(f["rank"], f["values"]) for f in frames] == [(0, {"memory_mib": 1.0, "memory_peak_mib": 2.0})]
