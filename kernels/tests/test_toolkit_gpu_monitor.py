"""GPU sampling: the nvidia-smi parser, and the monitor's frames, with a reader standing in for the driver."""
import threading

import pytest

from mgpulab import gpu_monitor
from mgpulab_wire import frames


def test_parses_nvidia_smi_rows_and_unavailable_fields():
    text = "0, GPU-aaaa, 87, 40536\n1, GPU-bbbb, [N/A], 1024\n\nnot a row\n"
    assert gpu_monitor.parse_nvidia_smi_csv(text) == [
        {"index": 0, "uuid": "GPU-aaaa", "gpu_util_pct": 87.0, "gpu_mem_mib": 40536.0},
        {"index": 1, "uuid": "GPU-bbbb", "gpu_util_pct": None, "gpu_mem_mib": 1024.0},
    ]


SAMPLES = [{"index": i, "uuid": f"GPU-{i}{i}{i}{i}-uuid"} for i in range(4)]


@pytest.mark.parametrize("visible, expected", [
    (None, {0: 0, 1: 1, 2: 2, 3: 3}),            # every GPU, in NVML order
    ("2", {2: 0}),                               # a workshop seat's one GPU is cuda:0 in the process
    ("3,1", {3: 0, 1: 1}),
    ("GPU-2222,GPU-0000", {2: 0, 0: 1}),         # by UUID (prefixes work, as for CUDA)
    ("1,7,2", {1: 0}),                           # CUDA stops at the first entry that names nothing
    ("MIG-abcd", {}),                            # NVML has no utilisation per MIG instance
    ("", {}),
])
def test_nvml_indices_map_to_the_cuda_indices_this_process_sees(visible, expected):
    assert gpu_monitor.cuda_indices(SAMPLES, visible) == expected


def test_monitor_reports_cuda_indices_and_leaves_out_invisible_gpus():
    seen = []
    enough = threading.Event()

    def sink(message):
        seen.append(message)
        enough.set()

    frames.set_sink(sink)
    read = lambda: [{"index": 0, "uuid": "GPU-0", "gpu_util_pct": 10.0, "gpu_mem_mib": 1.0},  # noqa: E731
                    {"index": 3, "uuid": "GPU-3", "gpu_util_pct": 90.0, "gpu_mem_mib": 2.0}]
    monitor = gpu_monitor.GpuMonitor(read, interval_s=0.01, source="test", visible="3")
    try:
        monitor.start()
        assert enough.wait(10)
    finally:
        monitor.stop()
        frames.set_sink(None)
    assert {(m["rank"], m["values"]["gpu_util_pct"]) for m in seen} == {(0, 90.0)}


def test_monitor_emits_one_metric_per_gpu_per_sample():
    seen = []
    enough = threading.Event()

    def sink(message):
        seen.append(message)
        if len(seen) >= 4:
            enough.set()

    frames.set_sink(sink)
    monitor = gpu_monitor.GpuMonitor(lambda: [{"index": 0, "gpu_util_pct": 50.0, "gpu_mem_mib": 10.0}, {"index": 1, "gpu_util_pct": 75.0, "gpu_mem_mib": 20.0}], interval_s=0.01)
    try:
        monitor.start()
        assert enough.wait(10)
    finally:
        monitor.stop()
        frames.set_sink(None)
    first_two = sorted(seen[:2], key=lambda message: message["rank"])
    assert [(m["rank"], m["step"], m["values"]["gpu_util_pct"]) for m in first_two] == [(0, 0, 50.0), (1, 0, 75.0)]
    # samples of the whole GPU, never one of a cell's variants (nor an untagged series among them)
    assert {m["runId"] for m in seen} == {gpu_monitor.TAG}


def test_no_monitor_without_a_driver(monkeypatch):
    monkeypatch.setattr(gpu_monitor, "_nvml_reader", lambda: None)
    monkeypatch.setattr(gpu_monitor.shutil, "which", lambda name: None)
    monkeypatch.setattr(gpu_monitor, "_monitor", None)
    assert gpu_monitor.ensure_started() is None
