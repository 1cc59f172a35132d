"""A kernel's process tree, found in /proc, and ended.

A kernel's tree is its process group and its session (the kernel leads both),
every descendant of those found by walking parent links (children that called
setsid, e.g. torchrun agents or a ``Popen(..., start_new_session=True)``,
included), and every process remembered from an earlier walk that still
exists with the same start time: with the agent as child subreaper, an orphan
whose parent died is re-parented to the agent, and only the memory of an
earlier walk still ties it to its kernel.
"""
from __future__ import annotations

import ctypes
import os
import signal
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, Optional, Set, Tuple

_PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int
    zombie: bool


def set_child_subreaper() -> bool:
    """Orphaned descendants re-parent to this process (Linux); False where that is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def read_proc(pid: int) -> Optional[Proc]:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
    except OSError:
        return None
    fields = data.rsplit(b")", 1)[1].split()
    # after the command: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
    # utime stime cutime cstime priority nice num_threads itrealvalue starttime
    try:
        return Proc(pid, int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]), fields[0] == b"Z")
    except (IndexError, ValueError):
        return None


def all_procs() -> Dict[int, Proc]:
    found: Dict[int, Proc] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            proc = read_proc(int(name))
            if proc is not None:
                found[proc.pid] = proc
    return found


Known = Set[Tuple[int, int]]
"""(pid, start time) pairs seen in a kernel's tree: a pid reused by another process never matches."""


def _environment(pid: int) -> FrozenSet[bytes]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return frozenset(environ.read().split(b"\0"))
    except OSError:
        return frozenset()


class Snapshot:
    """One read of /proc for several trees: the agent walks every kernel's tree each second, and with
    60 kernels a read of /proc per kernel (and of the other kernels' environments, the agent's own
    children, per kernel) took half a core from the kernels. Each process's stat is read once, and
    each environment at most once."""

    def __init__(self) -> None:
        self.procs = all_procs()
        self._environments: Dict[int, FrozenSet[bytes]] = {}

    def carries(self, pid: int, tag: bytes) -> bool:
        environment = self._environments.get(pid)
        if environment is None:
            environment = self._environments[pid] = _environment(pid)
        return tag in environment


def tree(leader: int, known: Known, tag: Optional[bytes] = None, snapshot: Optional[Snapshot] = None) -> Dict[int, Proc]:
    """The living processes of the tree led by ``leader`` (see the module's doc); ``known`` grows.

    ``tag`` (``NAME=value`` in the kernel's environment, inherited by everything it starts) ties
    an orphan re-parented to the agent to its kernel even when no walk saw it before its parent
    died (a double fork): only the agent's own children are read for it. ``snapshot``: a read of
    /proc shared with other trees of the same moment (a new one by default)."""
    snapshot = Snapshot() if snapshot is None else snapshot
    procs = snapshot.procs
    me = os.getpid()
    members = {pid: p for pid, p in procs.items()
               if p.pgid == leader or p.sid == leader or pid == leader or (pid, p.start) in known
               or (tag is not None and p.ppid == me and snapshot.carries(pid, tag))}
    children: Dict[int, Set[int]] = {}
    for p in procs.values():
        children.setdefault(p.ppid, set()).add(p.pid)
    todo = list(members)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in members and child != me:
                members[child] = procs[child]
                todo.append(child)
    members.pop(me, None)
    for p in members.values():
        known.add((p.pid, p.start))
    return {pid: p for pid, p in members.items() if not p.zombie}


def signal_tree(leader: int, known: Known, signum: int, tag: Optional[bytes] = None) -> int:
    """Send ``signum`` to every living process of the tree; how many there were."""
    members = tree(leader, known, tag)
    for pid in members:
        _kill(pid, signum)
    # the group too: a process forked between the walk and now is in it
    try:
        os.killpg(leader, signum)
    except (ProcessLookupError, PermissionError):
        pass
    return len(members)


def _kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def kill_all(pids: Iterable[int]) -> None:
    for pid in pids:
        _kill(pid, signal.SIGKILL)
