"""Facts about the host the kernel reports in its hello, gathered without importing torch
(importing torch takes a second; a kernel must start faster than that)."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import socket
import sys
from typing import Optional

from mgpulab_wire import protocol_generated as wire


def torch_version() -> Optional[str]:
    if importlib.util.find_spec("torch") is None:
        return None
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def visible_cuda_devices() -> int:
    """GPUs the NVIDIA driver exposes, narrowed by CUDA_VISIBLE_DEVICES."""
    try:
        count = len(os.listdir("/proc/driver/nvidia/gpus"))
    except OSError:
        return 0
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return count
    ids = [part for part in visible.split(",") if part.strip() not in ("", "-1")]
    return min(count, len(ids))


def hello_message(protocol_version: int) -> wire.HelloMessage:
    return wire.hello_message(
        protocol=protocol_version,
        pid=os.getpid(),
        hostname=socket.gethostname(),
        python=platform.python_version(),
        executable=sys.executable,
        torch=torch_version(),
        cuda_devices=visible_cuda_devices(),
    )
