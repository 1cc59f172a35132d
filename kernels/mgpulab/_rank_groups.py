"""The processes of one launch: started by torch.multiprocessing (spawn) or by torchrun.

Both groups answer the same questions for the supervisor — which ranks are
running (pids), which exited (with what code), signal them all — and clean up.
"""
from __future__ import annotations

import os
import pickle
import signal
import socket
import subprocess
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence

from mgpulab_wire.processes import pid_alive

from . import _rank

from ._relay import LineLabeller, RankIO

KILL_WAIT_S = 5.0
MONITOR_INTERVAL_S = 0.1  # how often torchrun's agent looks at its workers (it exits this long after them)


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

    def poll(self) -> Dict[int, Optional[int]]:
        out = {}
        for rank, proc in enumerate(self.procs):
            if rank not in self._reported and proc.exitcode is not None:
                self._reported.add(rank)
                out[rank] = proc.exitcode
        return out

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
    """Ranks started by torchrun (the agent is our child; ranks are its children)."""

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
                "--max_restarts=0", f"--monitor_interval={MONITOR_INTERVAL_S}", "-m", "mgpulab._rank", spec_path]
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
        self._exited: Dict[int, Optional[int]] = {}
        self._reported: set = set()

    def note_pid(self, rank: int, pid: int) -> None:
        self._pids[rank] = pid

    def pids(self) -> Dict[int, int]:
        return {r: p for r, p in self._pids.items() if r not in self._exited}

    def poll(self) -> Dict[int, Optional[int]]:
        for rank, pid in self.pids().items():
            if not pid_alive(pid):
                self._exited[rank] = None
        if self.proc.poll() is not None:
            for rank in range(self.nprocs):
                self._exited.setdefault(rank, None)
        out = {r: c for r, c in self._exited.items() if r not in self._reported}
        self._reported.update(out)
        return out

    def finished(self) -> bool:
        return self.proc.poll() is not None

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
