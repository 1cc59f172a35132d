"""Python stacks of the kernel and of the processes it started, on request.

The server asks when a busy cell has made no progress for a while. The
request is answered from the kernel's reader thread, so a main thread stuck
in a collective (which releases the GIL) does not stop the answer. Child
processes (DDP ranks) register a file that `faulthandler` writes their
stacks to on SIGQUIT; faulthandler needs no GIL, so a rank blocked in C++
still answers.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from typing import Dict, List, Optional

from mgpulab_wire import processes
from mgpulab_wire.processes import register_process, unregister_process
from mgpulab_wire.protocol_generated import StacksMessageProcessesItem

# register_process / unregister_process: the registry lives in mgpulab_wire (the toolkit's
# launcher registers its ranks there without importing the kernel); code in a cell that
# starts its own child processes registers them through this module as before.
__all__ = ["collect", "kernel_stacks", "register_process", "unregister_process"]

_STACK_WAIT_S = 2.0


def kernel_stacks(main_thread_ident: Optional[int] = None) -> str:
    """Every thread of this process, main thread first, kernel plumbing left out."""
    frames = sys._current_frames()  # noqa: SLF001 - the documented way to see other threads
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    order = sorted(frames, key=lambda ident: (ident != main_thread_ident, names.get(ident, "")))
    parts = []
    for ident in order:
        name = names.get(ident, f"thread {ident}")
        if name.startswith("mgpulab-"):
            continue
        # The user's frames only: the kernel's loop and bootstrap are noise in a hang report.
        summary = [frame for frame in traceback.extract_stack(frames[ident]) if not _is_kernel_frame(frame.filename)]
        stack = "".join(traceback.format_list(summary))
        parts.append(f'Thread "{name}" (most recent call last):\n{stack}')
    return "\n".join(parts)


# The kernel's own package and the wire package it writes frames with.
_PLUMBING_DIRS = frozenset(os.path.dirname(os.path.abspath(path)) for path in (__file__, processes.__file__))


def _is_kernel_frame(filename: str) -> bool:
    return filename == "<string>" or os.path.dirname(os.path.abspath(filename)) in _PLUMBING_DIRS


def collect(main_thread_ident: Optional[int] = None) -> List[StacksMessageProcessesItem]:
    """The kernel's stacks and those of every child registered in :mod:`mgpulab_wire.processes`, side by side."""
    found: List[StacksMessageProcessesItem] = [
        {"label": "kernel", "pid": os.getpid(), "alive": True, "stack": kernel_stacks(main_thread_ident)}]
    children = processes.registered_processes()
    offsets: Dict[int, int] = {}
    for child in children:
        offsets[child.pid] = _size(child.stack_path)
        try:
            os.kill(child.pid, signal.SIGQUIT)
        except ProcessLookupError:
            pass
    for child in children:
        alive = processes.pid_alive(child.pid)
        stack = _wait_for_dump(child.stack_path, offsets[child.pid]) if alive else ""
        found.append({"label": child.label, "pid": child.pid, "alive": alive,
                      "stack": stack or ("(exited)" if not alive else "(no stack written in time)")})
    return found


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _wait_for_dump(path: str, offset: int) -> str:
    # faulthandler writes from a signal handler; there is no event to wait on,
    # so wait until the file has grown and then stopped growing.
    deadline = time.monotonic() + _STACK_WAIT_S
    last_size = offset
    stable_since = None
    while time.monotonic() < deadline:
        size = _size(path)
        if size > offset and size == last_size:
            if stable_since is None:
                stable_since = time.monotonic()
            elif time.monotonic() - stable_since > 0.05:
                break
        else:
            stable_since = None
        last_size = size
        time.sleep(0.01)
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            handle.seek(offset)
            return handle.read()
    except OSError:
        return ""
