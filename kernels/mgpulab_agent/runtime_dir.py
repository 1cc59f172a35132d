"""The agent's folder on the host (``<runtimeDir>/mgpulab-<uid>/<agent id>/``): its log,
kept bounded, and what an ending agent removes so that nothing of the lab stays behind.

The bootstrap starts the daemon with ``agent.log`` on its stdout and stderr. The log is
rotated once it passes LOG_LIMIT_BYTES (one older file is kept), so it never grows past
twice that. When the agent ends (its lease ran out, or the lab shut it down) it removes
its code, boot files and launch lock, leaving only the log. A bootstrap may be starting
a new agent at that moment: the removal happens under the launch lock, and not at all
once a new agent's socket exists (the code may be the new agent's)."""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
import time
from typing import Optional, Tuple

from mgpulab_wire import agent_protocol_generated as wire

LOG_LIMIT_BYTES = 512 * 1024

_log_path: Optional[str] = None


def use_log(path: str) -> None:
    """The file on this process's stdout and stderr (the bootstrap opened it)."""
    global _log_path
    _log_path = path


def rotate_log() -> None:
    """agent.log → agent.log.1 once it is past the limit; stdout and stderr go on in a fresh file."""
    if _log_path is None:
        return
    try:
        if os.fstat(2).st_size <= LOG_LIMIT_BYTES:
            return
        os.replace(_log_path, _log_path + ".1")
        fresh = os.open(_log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError:
        return  # a full disk or a removed folder: logging goes on where it was
    os.dup2(fresh, 1)
    os.dup2(fresh, 2)
    os.close(fresh)


def log(message: str) -> None:
    """One line to the agent's log (its stderr), rotating it first when it is past the limit."""
    rotate_log()
    sys.stderr.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} mgpulab agent[{os.getpid()}]: {message}\n")
    sys.stderr.flush()


def read_boot(path: str) -> Tuple[Optional[wire.AgentBoot], str]:
    """The boot payload the bootstrap wrote (removed once read: it names the agent); None and why if unusable."""
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except (OSError, ValueError) as exc:
        return None, f"cannot read the boot payload: {exc}"
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    try:
        return wire.check_agent_boot(raw, "boot payload"), ""
    except wire.ProtocolError as exc:
        return None, f"bad boot payload: {exc}"


def remove_other_code(directory: str, code_dir: str) -> None:
    """Code directories of earlier versions: left-overs, since no other agent with this id runs
    (the bootstrap holds the launch lock and found no socket)."""
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if name.startswith("code-") and os.path.realpath(path) != os.path.realpath(code_dir):
            shutil.rmtree(path, ignore_errors=True)


def remove_code(directory: str, socket_path: str) -> bool:
    """Removes the code, boot files and launch lock of an ending agent; False when a new agent
    started meanwhile (its files stay). Runs under the launch lock the bootstrap takes."""
    lock_path = os.path.join(directory, "launch.lock")
    try:
        lock = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        # A bootstrap holds the lock only while it starts an agent (at most its 20 s ready wait).
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.lexists(socket_path):
            return False
        for name in os.listdir(directory):
            path = os.path.join(directory, name)
            if name.startswith("code-") and os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            elif name.startswith("boot-") and name.endswith(".json"):
                _unlink(path)
        # Unlinked while held: a bootstrap waiting on this lock finds its file gone and takes a new one.
        _unlink(lock_path)
        return True
    finally:
        os.close(lock)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
