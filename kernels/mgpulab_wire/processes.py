"""Processes a kernel started (DDP ranks), and whether a process is still alive.

A launcher registers each rank it starts with the file that rank's
``faulthandler`` writes its stacks to on SIGQUIT; the kernel, asked for
stacks, signals and reads every registered process
(:mod:`mgpulab_kernel.diagnostics`). The registry lives here, below both, so
the toolkit registers without importing the kernel.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Dict, List


@dataclass(frozen=True)
class ChildProcess:
    pid: int
    label: str
    stack_path: str


_children: Dict[int, ChildProcess] = {}
_lock = threading.Lock()


def register_process(pid: int, label: str, stack_path: str) -> None:
    """A launcher calls this for each rank it starts (the rank has run
    ``faulthandler.register(SIGQUIT, file=open(stack_path, "a"), all_threads=True)``)."""
    with _lock:
        _children[pid] = ChildProcess(pid, label, stack_path)


def unregister_process(pid: int) -> None:
    with _lock:
        _children.pop(pid, None)


def registered_processes() -> List[ChildProcess]:
    """The processes registered now, in the order they were registered."""
    with _lock:
        return list(_children.values())


def pid_alive(pid: int) -> bool:
    """True while the process exists and is not a zombie (the launcher's check too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True
