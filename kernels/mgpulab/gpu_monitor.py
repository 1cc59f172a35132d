"""GPU utilisation and memory from NVML, sampled once a second on CUDA hosts.

NVML through ``pynvml`` when importable, else ``nvidia-smi``'s CSV query
(which reads NVML too). Samples go out as metric frames with ``rank`` = the
CUDA device index and values

* ``gpu_util_pct`` — NVML ``utilization.gpu``: the percentage of the last
  sample period (1/6 s to 1 s, the driver's choice) during which one or more
  kernels ran on the GPU, whichever process launched them. It says the GPU
  was busy, not how much of it was used;
* ``gpu_mem_mib`` — NVML ``memory.used``: the GPU's used memory, every
  process and CUDA context included (larger than ``torch.cuda.memory_allocated``).

(step = sample number), tagged :data:`TAG` (a sample of the whole GPU, not of
one variant of the experiment: untagged, it read as a variant of its own
among the cell's tagged ones), so the charts show them next to each device's
step times. NVML numbers GPUs in PCI order and ignores ``CUDA_VISIBLE_DEVICES``;
the monitor maps them to CUDA indices by UUID (or by the visible-device list)
and leaves out GPUs this process cannot use. ``source()`` says which reader
runs. Nothing runs where there is no NVIDIA driver.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import threading
from typing import Callable, Dict, List, Optional, Sequence

from . import metrics

QUERY = ["nvidia-smi", "--query-gpu=index,uuid,utilization.gpu,memory.used", "--format=csv,noheader,nounits"]
SOURCE_NVML = "NVML via pynvml (utilization.gpu: % of time a kernel ran; memory.used: all processes)"
SOURCE_SMI = "NVML via nvidia-smi (utilization.gpu: % of time a kernel ran; memory.used: all processes)"

TAG = "GPUs (NVML)"
"""The run tag of every sample: the GPUs as NVML sees them, whichever process or variant used them."""

_monitor: Optional["GpuMonitor"] = None
_lock = threading.Lock()


def parse_nvidia_smi_csv(text: str) -> List[dict]:
    """Rows of ``index, uuid, utilization %, memory MiB`` (NVML index); fields nvidia-smi reports
    as ``[N/A]`` or ``[Not Supported]`` become None."""
    samples = []
    for line in text.strip().splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) != 4 or not parts[0].isdigit():
            continue
        samples.append({"index": int(parts[0]), "uuid": parts[1], "gpu_util_pct": _number(parts[2]),
                        "gpu_mem_mib": _number(parts[3])})
    return samples


def _number(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def cuda_indices(samples: Sequence[dict], visible: Optional[str]) -> Dict[int, int]:
    """NVML index -> CUDA index for the GPUs this process sees (pure).

    ``visible`` is ``$CUDA_VISIBLE_DEVICES``: None (unset) means all, in NVML
    order (CUDA orders the fastest GPU first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID``;
    on hosts of identical GPUs the two orders agree);
    integers name NVML indices; ``GPU-…`` prefixes name UUIDs. An entry that
    matches nothing ends the list, as CUDA does. MIG entries match nothing:
    NVML has no utilisation per MIG instance.
    """
    if visible is None:
        return {s["index"]: i for i, s in enumerate(sorted(samples, key=lambda s: s["index"]))}
    out: Dict[int, int] = {}
    for cuda_index, entry in enumerate(e.strip() for e in visible.split(",") if e.strip()):
        match = None
        if entry.isdigit():
            match = next((s for s in samples if s["index"] == int(entry)), None)
        elif entry.startswith("GPU-"):
            match = next((s for s in samples if str(s.get("uuid", "")).startswith(entry)), None)
        if match is None:
            break
        out[match["index"]] = cuda_index
    return out


def _nvml_reader() -> Optional[Callable[[], List[dict]]]:
    try:
        import pynvml  # optional: kernels/mypy.ini says so
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - any failure means "no NVML here"
        return None

    def read() -> List[dict]:
        samples = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            uuid = pynvml.nvmlDeviceGetUUID(handle)
            uuid = uuid.decode() if isinstance(uuid, bytes) else str(uuid)
            try:
                util: Optional[float] = float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)
            except pynvml.NVMLError:  # MIG instances and some boards do not report it
                util = None
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle).used / (1 << 20)
            samples.append({"index": index, "uuid": uuid, "gpu_util_pct": util, "gpu_mem_mib": float(memory)})
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
    def __init__(self, read: Callable[[], List[dict]], interval_s: float = 1.0, source: str = "",
                 visible: Optional[str] = None) -> None:
        self._read = read
        self._interval_s = interval_s
        self.source = source
        self._visible = visible
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
            mapping = cuda_indices(samples, self._visible)
            for sample in samples:
                if sample["index"] not in mapping:
                    continue  # a GPU this process cannot use
                values = {"gpu_util_pct": sample["gpu_util_pct"], "gpu_mem_mib": sample["gpu_mem_mib"]}
                metrics.emit_metric(self._samples, values, rank=mapping[sample["index"]], run_id=TAG)
            self._samples += 1


def ensure_started(interval_s: float = 1.0) -> Optional[GpuMonitor]:
    """Starts the process's one monitor if this host has NVIDIA GPUs; None otherwise."""
    global _monitor
    with _lock:
        if _monitor is None:
            read, source = _nvml_reader(), SOURCE_NVML
            if read is None:
                read, source = _smi_reader(), SOURCE_SMI
            if read is None:
                return None
            _monitor = GpuMonitor(read, interval_s, source, os.environ.get("CUDA_VISIBLE_DEVICES")).start()
        return _monitor


def source() -> Optional[str]:
    """What the utilisation and memory samples come from (None: no monitor running)."""
    return _monitor.source if _monitor is not None else None
