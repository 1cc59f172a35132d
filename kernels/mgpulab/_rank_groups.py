"""The processes of one launch: started by torch.multiprocessing (spawn) or by torchrun.

Both groups answer the same questions for the supervisor — which ranks are
running (pids), which ended (:class:`RankExit`: exit code or signal, when,
and whether the group's own agent stopped them), signal them all — and clean
up. Spawn's ranks are the launcher's children, so it reads their exit status
itself; torchrun's are its agent's, so each runs under a keeper
(:mod:`mgpulab._rank_keeper`) that reports the status over the launch's socket.
"""
from __future__ import annotations

import os
import pickle
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Set

from mgpulab_wire.processes import pid_alive

from . import _rank

from ._relay import LineLabeller, RankIO

KILL_WAIT_S = 5.0
MONITOR_INTERVAL_S = 0.1  # how often torchrun's agent looks at its workers (it exits this long after them)
KEEPER_REPORT_S = 2.0  # how long a vanished torchrun rank's exit status may take to arrive before it is "unknown"


@dataclass(frozen=True)
class RankExit:
    """How one rank process ended: ``code`` as ``subprocess`` gives it (negative: killed by that signal;
    None: unknown), ``at`` on the monotonic clock, ``stopped``: by the group's own agent (torchrun stopping
    the other ranks after one failed), not by anything the rank did."""

    code: Optional[int]
    at: float
    stopped: bool = False


def agent_store(timeout_s: Optional[float]) -> Any:
    """A c10d TCPStore served by the launcher on a free port (torchrun's agent store)."""
    from datetime import timedelta
    import torch.distributed as dist
    timeout = timedelta(seconds=timeout_s if timeout_s is not None else 1800)
    return dist.TCPStore("127.0.0.1", 0, None, True, timeout, wait_for_workers=False)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class SpawnGroup:
    """Ranks started by ``torch.multiprocessing.start_processes`` (spawn)."""

    def __init__(self, spec: _rank.RankSpec) -> None:
        import torch.multiprocessing as tmp
        self.context = tmp.start_processes(_rank.spawn_entry, args=(spec,), nprocs=spec.nprocs,
                                           join=False, daemon=False, start_method="spawn")
        self.procs = list(self.context.processes)
        self._reported: set = set()

    def note_pid(self, rank: int, pid: int) -> None:
        pass

    def pids(self) -> Dict[int, int]:
        return {r: p.pid for r, p in enumerate(self.procs) if p.exitcode is None}

    def poll(self) -> Dict[int, RankExit]:
        out = {}
        now = time.monotonic()
        for rank, proc in enumerate(self.procs):
            if rank not in self._reported and proc.exitcode is not None:
                self._reported.add(rank)
                out[rank] = RankExit(proc.exitcode, now)
        return out

    def note_exit(self, rank: int, code: int, at: float, stopped: bool) -> None:
        pass  # spawn's ranks are our children: poll() reads their status itself

    def finished(self) -> bool:
        return all(p.exitcode is not None for p in self.procs)

    def signal(self, signum: int) -> None:
        for pid in self.pids().values():
            kill(pid, signum)

    def kill_all(self) -> None:
        self.signal(signal.SIGKILL)
        for proc in self.procs:
            proc.join(KILL_WAIT_S)

    def close(self) -> None:
        for queue in getattr(self.context, "error_queues", []):
            close = getattr(queue, "close", None)
            if close is not None:
                close()


class TorchrunGroup:
    """Ranks started by torchrun: the agent is our child, each rank a keeper's child, the keepers the agent's."""

    def __init__(self, spec: _rank.RankSpec, run_dir: str, command: Optional[List[str]], io: RankIO,
                 write_err: Callable[[str], None], flags: Sequence[str] = ()) -> None:
        self.nprocs = spec.nprocs
        spec_path = os.path.join(run_dir, "spec.pkl")
        fd = os.open(spec_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(spec, handle)
        command = command or [sys.executable, "-m", "torch.distributed.run"]
        argv = [*command, "--nnodes=1", f"--nproc_per_node={spec.nprocs}",
                f"--master_addr={spec.master_addr}", f"--master_port={spec.master_port}", *flags,
                "--max_restarts=0", f"--monitor_interval={MONITOR_INTERVAL_S}", "-m", "mgpulab._rank_keeper",
                spec_path]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(_child_sys_path())
        env.update(_rank.single_host_env(env))
        # torchrun sets OMP_NUM_THREADS=1 itself, with a warning on every launch, unless it is set;
        # the ranks set their torch threads from the spec anyway
        env.setdefault("OMP_NUM_THREADS", str(spec.num_threads or 1))
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     preexec_fn=_ignore_sigquit)
        assert self.proc.stderr is not None
        io.add_pipe(os.dup(self.proc.stderr.fileno()), LineLabeller("[torchrun] ", write_err))
        self.proc.stderr.close()
        self._pids: Dict[int, int] = {}
        self._exits: Dict[int, RankExit] = {}  # from the keepers
        self._vanished: Dict[int, float] = {}  # rank -> when its process was first seen gone without a report
        self._agent_gone: Optional[float] = None
        self._reported: Set[int] = set()

    def note_pid(self, rank: int, pid: int) -> None:
        self._pids[rank] = pid

    def note_exit(self, rank: int, code: int, at: float, stopped: bool) -> None:
        if 0 <= rank < self.nprocs and rank not in self._exits:
            self._exits[rank] = RankExit(code, at, stopped)

    def pids(self) -> Dict[int, int]:
        return {r: p for r, p in self._pids.items() if r not in self._exits and r not in self._reported}

    def poll(self) -> Dict[int, RankExit]:
        now = time.monotonic()
        out = {r: e for r, e in self._exits.items() if r not in self._reported}
        # A keeper that could not report (killed with its rank): the status stays unknown, after a while.
        for rank, pid in self._pids.items():
            if rank not in self._exits and rank not in self._reported and not pid_alive(pid):
                since = self._vanished.setdefault(rank, now)
                if now - since > KEEPER_REPORT_S:
                    out[rank] = RankExit(None, since)
        if self._agent_gone is None and self.proc.poll() is not None:
            self._agent_gone = now
        if self._agent_gone is not None and now - self._agent_gone > KEEPER_REPORT_S:
            for rank in range(self.nprocs):
                if rank not in self._exits and rank not in self._reported and rank not in out:
                    out[rank] = RankExit(None, self._vanished.get(rank, self._agent_gone))
        self._reported.update(out)
        return out

    def finished(self) -> bool:
        """The agent has exited and every rank's end has been reported (or given up on)."""
        return self.proc.poll() is not None and len(self._reported) == self.nprocs

    def signal(self, signum: int) -> None:
        for pid in self.pids().values():
            kill(pid, signum)
        if self.proc.poll() is None:
            self.proc.send_signal(signum)

    def kill_all(self) -> None:
        self.signal(signal.SIGKILL)
        try:
            self.proc.wait(KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        pass


def _child_sys_path() -> List[str]:
    """What the rank interpreter needs on its path: mgpulab's root, then ours (as spawn passes it)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [root] + [os.path.abspath(p) if p else os.getcwd() for p in sys.path]
    seen: List[str] = []
    for path in paths:
        if path not in seen:
            seen.append(path)
    return seen


def _ignore_sigquit() -> None:
    # torchrun's agent must survive the tty's QUIT (stack-dump request for ranks);
    # an ignored disposition survives exec, our ranks install their own handler.
    signal.signal(signal.SIGQUIT, signal.SIG_IGN)


def kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass
