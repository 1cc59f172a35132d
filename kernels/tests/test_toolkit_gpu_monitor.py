"""GPU sampling: the nvidia-smi parser, and the monitor's frames, with a reader standing in for the driver."""
import threading

from mgpulab import gpu_monitor
from mgpulab_kernel import protocol


def test_parses_nvidia_smi_rows_and_unavailable_fields():
    text = "0, 87, 40536\n1, [N/A], 1024\n\nnot a row\n"
    assert gpu_monitor.parse_nvidia_smi_csv(text) == [
        {"index": 0, "gpu_util_pct": 87.0, "gpu_mem_mib": 40536.0},
        {"index": 1, "gpu_util_pct": None, "gpu_mem_mib": 1024.0},
    ]


def test_monitor_emits_one_metric_per_gpu_per_sample():
    seen = []
    enough = threading.Event()

    def sink(message):
        seen.append(message)
        if len(seen) >= 4:
            enough.set()

    protocol.set_sink(sink)
    monitor = gpu_monitor.GpuMonitor(lambda: [{"index": 0, "gpu_util_pct": 50.0, "gpu_mem_mib": 10.0}, {"index": 1, "gpu_util_pct": 75.0, "gpu_mem_mib": 20.0}], interval_s=0.01)
    try:
        monitor.start()
        assert enough.wait(10)
    finally:
        monitor.stop()
        protocol.set_sink(None)
    first_two = sorted(seen[:2], key=lambda message: message["rank"])
    assert [(m["rank"], m["step"], m["values"]["gpu_util_pct"]) for m in first_two] == [(0, 0, 50.0), (1, 0, 75.0)]


def test_no_monitor_without_a_driver(monkeypatch):
    monkeypatch.setattr(gpu_monitor, "_nvml_reader", lambda: None)
    monkeypatch.setattr(gpu_monitor.shutil, "which", lambda name: None)
    monkeypatch.setattr(gpu_monitor, "_monitor", None)
    assert gpu_monitor.ensure_started() is None
