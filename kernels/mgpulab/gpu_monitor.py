"""GPU utilisation and memory, sampled once a second on CUDA hosts.

NVML (``pynvml``) when importable, else ``nvidia-smi``'s CSV query. Samples
go out as metric frames with ``rank`` = GPU index and values
``gpu_util_pct`` and ``gpu_mem_mib`` (step = sample number), so the charts
show them next to each device's step times. Nothing runs where there is no
NVIDIA driver.
"""
from __future__ import annotations

import shutil
import subprocess
import threading
from typing import Callable, List, Optional

from . import metrics

QUERY = ["nvidia-smi", "--query-gpu=index,utilization.gpu,memory.used", "--format=csv,noheader,nounits"]

_monitor: Optional["GpuMonitor"] = None
_lock = threading.Lock()


def parse_nvidia_smi_csv(text: str) -> List[dict]:
    """Rows of ``index, utilization %, memory MiB``; fields nvidia-smi reports as
    ``[N/A]`` or ``[Not Supported]`` become None."""
    samples = []
    for line in text.strip().splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) != 3 or not parts[0].isdigit():
            continue
        samples.append({"index": int(parts[0]), "gpu_util_pct": _number(parts[1]), "gpu_mem_mib": _number(parts[2])})
    return samples


def _number(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def _nvml_reader() -> Optional[Callable[[], List[dict]]]:
    try:
        import pynvml  # type: ignore[import-not-found]
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - any failure means "no NVML here"
        return None

    def read() -> List[dict]:
        samples = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            util = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle).used / (1 << 20)
            samples.append({"index": index, "gpu_util_pct": float(util), "gpu_mem_mib": float(memory)})
        return samples

    return read


def _smi_reader() -> Optional[Callable[[], List[dict]]]:
    if shutil.which("nvidia-smi") is None:
        return None

    def read() -> List[dict]:
        done = subprocess.run(QUERY, capture_output=True, text=True, timeout=5, check=False)
        return parse_nvidia_smi_csv(done.stdout) if done.returncode == 0 else []

    return read


class GpuMonitor:
    def __init__(self, read: Callable[[], List[dict]], interval_s: float = 1.0) -> None:
        self._read = read
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._samples = 0
        self._thread = threading.Thread(target=self._run, name="mgpulab-gpu-monitor", daemon=True)

    def start(self) -> "GpuMonitor":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                samples = self._read()
            except Exception:  # noqa: BLE001 - a monitoring hiccup must not end the run
                continue
            for sample in samples:
                values = {"gpu_util_pct": sample["gpu_util_pct"], "gpu_mem_mib": sample["gpu_mem_mib"]}
                metrics.emit_metric(self._samples, values, rank=sample["index"])
            self._samples += 1


def ensure_started(interval_s: float = 1.0) -> Optional[GpuMonitor]:
    """Starts the process's one monitor if this host has NVIDIA GPUs; None otherwise."""
    global _monitor
    with _lock:
        if _monitor is None:
            read = _nvml_reader() or _smi_reader()
            if read is None:
                return None
            _monitor = GpuMonitor(read, interval_s).start()
        return _monitor
