"""What the agent knows about its host: its GPUs (declared, or found through NVML or
nvidia-smi), their utilisation sampled in a thread, and the kernel interpreter's
torch and CUDA versions probed once in a thread. The event loop only ever reads
the cached facts (never blocks on a probe)."""
from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from typing import Any, Dict, List, Literal, Optional, Tuple

from mgpulab_wire import agent_protocol_generated as wire

GpuSource = Literal["nvml", "nvidia-smi", "declared", "none"]
Probe = Literal["pending", "done", "failed"]

SAMPLE_SECONDS = 10.0
_SMI_TIMEOUT = 5.0
_SMI_QUERY = ["nvidia-smi", "--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader,nounits"]


def _nvml() -> Any:
    import pynvml  # optional: nvidia-ml-py
    pynvml.nvmlInit()
    return pynvml


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _nvml_gpus() -> List[wire.HostGpu]:
    nvml = _nvml()
    found: List[wire.HostGpu] = []
    for index in range(int(nvml.nvmlDeviceGetCount())):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        migs: List[wire.HostGpu] = []
        try:
            current, _pending = nvml.nvmlDeviceGetMigMode(handle)
            if current == nvml.NVML_DEVICE_MIG_ENABLE:
                for slot in range(int(nvml.nvmlDeviceGetMaxMigDeviceCount(handle))):
                    try:
                        mig = nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
                    except nvml.NVMLError:
                        continue
                    migs.append({"index": len(found) + len(migs), "uuid": _text(nvml.nvmlDeviceGetUUID(mig)),
                                 "name": _text(nvml.nvmlDeviceGetName(mig))[:200],
                                 "memoryTotalMiB": int(nvml.nvmlDeviceGetMemoryInfo(mig).total) // (1024 * 1024)})
        except nvml.NVMLError:
            pass  # no MIG on this GPU (or this driver): the whole GPU is the slot
        if migs:
            found.extend(migs)
            continue
        found.append({"index": len(found), "uuid": _text(nvml.nvmlDeviceGetUUID(handle)),
                      "name": _text(nvml.nvmlDeviceGetName(handle))[:200],
                      "memoryTotalMiB": int(nvml.nvmlDeviceGetMemoryInfo(handle).total) // (1024 * 1024)})
    return found


def _smi_gpus() -> List[wire.HostGpu]:
    done = subprocess.run(_SMI_QUERY, capture_output=True, text=True, timeout=_SMI_TIMEOUT, check=True)
    found: List[wire.HostGpu] = []
    for line in done.stdout.splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) >= 4 and parts[1]:
            memory = int(parts[3]) if parts[3].isdigit() else None
            found.append({"index": int(parts[0]), "uuid": parts[1], "name": parts[2][:200], "memoryTotalMiB": memory})
    return found


def discover_gpus(declared: Optional[List[wire.HostGpu]], visible: Optional[str] = None) -> Tuple[List[wire.HostGpu], GpuSource]:
    """The host's GPU slots and where they came from: declared, else NVML, else nvidia-smi, else none.

    Discovered GPUs are only those the agent may use: NVML and nvidia-smi see
    every GPU of the node, but a Slurm job (or an operator) restricts the
    agent with CUDA_VISIBLE_DEVICES (indexes or UUIDs), and its kernels must
    not be given another job's GPU.
    """
    if declared is not None:
        return list(declared), "declared"
    if visible is None:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    try:
        return only_visible(_nvml_gpus(), visible), "nvml"
    except Exception:  # noqa: BLE001 - no pynvml, no driver: try the next source
        pass
    try:
        return only_visible(_smi_gpus(), visible), "nvidia-smi"
    except (OSError, subprocess.SubprocessError, ValueError):
        return [], "none"


def only_visible(gpus: List[wire.HostGpu], visible: Optional[str]) -> List[wire.HostGpu]:
    """The GPUs CUDA_VISIBLE_DEVICES lets through (all when unset), matched by index or by UUID (or its prefix, as CUDA does)."""
    if visible is None:
        return gpus
    names = [name.strip() for name in visible.split(",") if name.strip()]
    kept: List[wire.HostGpu] = []
    for name in names:
        for gpu in gpus:
            match = str(gpu["index"]) == name if name.isdigit() else gpu["uuid"].startswith(name)
            if match and gpu not in kept:
                kept.append(gpu)
    return kept


Sample = Dict[str, Tuple[Optional[int], Optional[float]]]
"""GPU UUID → (memory used in MiB, utilisation in percent)."""


def _sample_nvml() -> Sample:
    nvml = _nvml()
    sample: Sample = {}
    for index in range(int(nvml.nvmlDeviceGetCount())):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        util: Optional[float]
        try:
            util = float(nvml.nvmlDeviceGetUtilizationRates(handle).gpu)
        except nvml.NVMLError:
            util = None
        sample[_text(nvml.nvmlDeviceGetUUID(handle))] = (int(nvml.nvmlDeviceGetMemoryInfo(handle).used) // (1024 * 1024), util)
    return sample


def _sample_smi() -> Sample:
    done = subprocess.run(["nvidia-smi", "--query-gpu=uuid,memory.used,utilization.gpu", "--format=csv,noheader,nounits"],
                          capture_output=True, text=True, timeout=_SMI_TIMEOUT, check=True)
    sample: Sample = {}
    for line in done.stdout.splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) >= 3:
            sample[parts[0]] = (int(parts[1]) if parts[1].isdigit() else None,
                                float(parts[2]) if parts[2].replace(".", "", 1).isdigit() else None)
    return sample


class Sampler:
    """Samples every GPU's memory and utilisation every SAMPLE_SECONDS in a daemon thread."""

    def __init__(self) -> None:
        self.latest: Sample = {}
        self._stop = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._run, name="mgpulab-agent-gpu-sampler", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        sources = [_sample_nvml, _sample_smi]
        while not self._stop.is_set():
            for source in list(sources):
                try:
                    self.latest = source()
                    break
                except Exception:  # noqa: BLE001 - a source that fails once is not tried again
                    sources.remove(source)
            if not sources:
                return
            self._stop.wait(SAMPLE_SECONDS)


# The probe imports torch: seconds of CPU on a GPU host, from the agent's start, beside the first kernels.
# It yields the CPU as a kernel does: its own session, so its own autogroup (in the agent's, it took the
# agent's share), at the kernels' nice. It never waits on anyone: only the health reply reads it.
_CODE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PROBE = ("from mgpulab_agent.kernel_proc import yield_cpu\n"
          "yield_cpu()\n"
          "import json, platform\n"
          "facts = {'python': platform.python_version(), 'torch': None, 'cuda': None}\n"
          "try:\n"
          "    import torch\n"
          "    facts['torch'] = torch.__version__\n"
          "    facts['cuda'] = torch.version.cuda\n"
          "except Exception:\n"
          "    pass\n"
          "print(json.dumps(facts))\n")


class VersionProbe:
    """The kernel interpreter's Python, torch and CUDA versions, found once in a thread."""

    def __init__(self, python: str) -> None:
        self.python = python
        self.state: Probe = "pending"
        self.facts: Dict[str, Optional[str]] = {}
        self.finished = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._run, name="mgpulab-agent-probe", daemon=True).start()

    def _run(self) -> None:
        started = time.monotonic()
        try:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [_CODE_DIR, os.environ.get("PYTHONPATH")]))}
            done = subprocess.run([self.python, "-c", _PROBE], capture_output=True, text=True, timeout=180, env=env, start_new_session=True)
            facts = json.loads(done.stdout.strip().splitlines()[-1])
            self.facts = {key: (None if facts.get(key) is None else str(facts[key])[:4000]) for key in ("python", "torch", "cuda")}
            self.facts["seconds"] = f"{time.monotonic() - started:.1f}"
            self.state = "done"
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            self.state = "failed"
        self.finished.set()
