"""Run a function, script or source on N ranks (DDP), supervised.

Launchers: ``torchrun`` (``python -m torch.distributed.run``) where it works,
``torch.multiprocessing.start_processes`` (spawn) with env-var rendezvous
where it does not — Debian's torch 1.13 on Python 3.11 has a broken torchrun
(see :func:`torchrun_status`). The launcher used, and why, is in the result.

In every rank (see ``_rank.py``): the default process group is initialised
(gloo on CPU, NCCL on CUDA, ``timeout_s``) unless ``init_process_group=False``;
stdout/stderr reach the caller's ``sys.stdout``/``sys.stderr`` as lines
prefixed ``[rank N] ``; protocol frames (metrics) go straight to the
inherited fd 1 with the kernel's nonce; SIGQUIT dumps every thread's stack.

Supervision: a rank that fails (exception, non-zero exit, signal) gets the
others killed after a short grace; ``hang_timeout_s`` kills everything when a
rank stops calling :func:`mgpulab.heartbeat.beat` (``lab.log`` and
``StepTimer`` beat for you) — after collecting every rank's Python stack;
``time_limit_s`` bounds the whole run. Nothing is left running on return.
The process groups are in ``_rank_groups.py``, the loop in ``_supervisor.py``.

Not supported: several hosts (ranks and launcher share one machine and a Unix
socket); functions defined in a notebook cell (ranks import targets by name —
use :func:`launch_code`). With the spawn launcher, a script that calls
``launch`` needs the usual ``if __name__ == "__main__":`` guard.
"""
from __future__ import annotations

import functools
import os
import pickle
import secrets
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _rank, devices, watchdog
from ._rank_groups import SpawnGroup, TorchrunGroup, agent_store, free_port
from ._relay import RankIO
from ._supervisor import RankOutcome, Supervisor

__all__ = ["launch", "launch_script", "launch_code", "torchrun_status", "LaunchResult", "RankOutcome"]

SPAWN = "torch.multiprocessing.spawn"
TORCHRUN = "torchrun"


@dataclass
class LaunchResult:
    """Outcome of :func:`launch`. ``status``: ok | failed | hang | time_limit."""

    nprocs: int
    launcher: str
    launcher_note: str
    backend: str
    device_mode: Dict[str, Any]
    status: str
    summary: str
    duration_s: float
    ranks: List[RankOutcome] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def results(self) -> List[Any]:
        """Return values by rank (None where a rank returned nothing or failed)."""
        return [r.result for r in self.ranks]

    def raise_for_status(self) -> "LaunchResult":
        if not self.ok:
            raise RuntimeError(f"launch {self.status}: {self.summary}")
        return self


@functools.lru_cache(maxsize=None)
def torchrun_status() -> Tuple[bool, str]:
    """(usable, why): a cheap in-process probe of the bug that breaks torchrun."""
    try:
        import torch
        from torch.distributed.elastic.multiprocessing.api import Std
    except Exception as error:
        return False, f"torch.distributed.elastic is not importable ({type(error).__name__}: {error})"
    try:
        broken = Std.from_str("0") is None
    except Exception as error:
        return False, f"torchrun's option parsing fails here ({type(error).__name__}: {error})"
    if broken:
        py = ".".join(map(str, sys.version_info[:3]))
        return False, (f"torchrun is broken with torch {torch.__version__} on Python {py} "
                       "(Std.from_str('0') returns None → AttributeError in to_map)")
    return True, "torchrun works here"


def launch(target: Callable[..., Any], nprocs: int = 2, *, args: Sequence[Any] = (),
           kwargs: Optional[Dict[str, Any]] = None, **options: Any) -> LaunchResult:
    """Call ``target(*args, **kwargs)`` in ``nprocs`` rank processes.

    ``target`` must be a module-level function (ranks import it by name).
    Inside it, ``torch.distributed`` is initialised; ``lab.rank()`` /
    ``dist.get_rank()`` say which rank this is. Returns per-rank outcomes with
    each rank's return value (pickled back). Options: see :func:`_launch`.
    """
    _check_picklable(target, options.get("launcher", "auto"))
    if options.get("launcher", "auto") == "auto" and getattr(target, "__module__", None) in ("__main__", "__mp_main__"):
        options["launcher"] = "spawn"  # torchrun's ranks could not import a function from __main__
    return _launch(nprocs, _RankTarget(target=target, args=tuple(args), kwargs=dict(kwargs or {})), **options)


def launch_script(path: str, nprocs: int = 2, *, argv: Sequence[str] = (),
                  init_process_group: bool = False, **options: Any) -> LaunchResult:
    """Run a Python script as ``__main__`` in each rank (RANK, WORLD_SIZE, MASTER_* set).

    Scripts usually call ``init_process_group`` themselves, so by default the
    launcher does not (then ``timeout_s`` is up to the script).
    """
    script = os.path.abspath(path)
    if not os.path.isfile(script):
        raise FileNotFoundError(script)
    return _launch(nprocs, _RankTarget(script=script, argv=[str(a) for a in argv]),
                   init_process_group=init_process_group, **options)


def launch_code(source: str, nprocs: int = 2, *, init_process_group: bool = False,
                **options: Any) -> LaunchResult:
    """Run Python source (e.g. a notebook cell's rank code) as a script in each rank."""
    return _launch(nprocs, _RankTarget(source=source), init_process_group=init_process_group, **options)


@dataclass
class _RankTarget:
    target: Optional[Callable[..., Any]] = None
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    script: Optional[str] = None
    argv: List[str] = field(default_factory=list)
    source: Optional[str] = None


def _launch(nprocs: int, what: _RankTarget, *, backend: Optional[str] = None, timeout_s: Optional[float] = 120.0,
            time_limit_s: Optional[float] = None, hang_timeout_s: Optional[float] = None,
            launcher: str = "auto", init_process_group: bool = True, run_id: Optional[str] = None,
            echo: bool = True, num_threads: Optional[int] = None,
            torchrun_cmd: Optional[Sequence[str]] = None, stack_timeout_s: float = 3.0) -> LaunchResult:
    """Shared implementation.

    backend: "gloo" | "nccl" (default: nccl with GPUs, gloo without).
    timeout_s: process-group timeout, 120 s by default (torch's is 30 min);
        collectives raise after it (NCCL: with async error handling, which the
        ranks enable).
    time_limit_s: wall-clock limit of the whole run; then stacks, then kill.
    hang_timeout_s: kill when a live rank has not beaten for this long.
    launcher: "auto" | "torchrun" | "spawn".
    num_threads: torch threads per rank (default: host cores // nprocs, ≥ 1).
    torchrun_cmd: command prefix for torchrun (default: python -m torch.distributed.run).
    """
    if nprocs < 1:
        raise ValueError(f"nprocs must be >= 1, got {nprocs}")
    gpus = devices.cuda_device_count()
    backend = backend or ("nccl" if gpus > 0 else "gloo")
    if backend not in ("gloo", "nccl"):
        raise ValueError(f"unknown backend {backend!r}")
    cuda = backend == "nccl"
    if cuda and nprocs > gpus:
        raise ValueError(f"{nprocs} NCCL ranks need {nprocs} GPUs, this host has {gpus}")
    mode = devices.detect(nprocs, "DDP", emulate=not cuda, backend=backend)
    name, note = _pick_launcher(launcher)

    run_dir = tempfile.mkdtemp(prefix="mgpulab-run-")  # 0700: only this user reaches the socket
    write_out, write_err = _writer(sys.stdout), _writer(sys.stderr)
    io: Optional[RankIO] = None
    group: Optional[Union[SpawnGroup, TorchrunGroup]] = None
    store: Any = None  # the spawn path's c10d store, alive until the ranks are gone
    try:
        token = secrets.token_hex(16)
        socket_path = os.path.join(run_dir, "ranks.sock")
        io = RankIO(socket_path, token, write_out, write_err)
        if what.source is not None:
            what.script = os.path.join(run_dir, "rank_code.py")
            with open(what.script, "w", encoding="utf-8") as handle:
                handle.write(what.source)
        from mgpulab_kernel import protocol
        from . import metrics
        spec = _rank.RankSpec(
            nprocs=nprocs, backend=backend, socket_path=socket_path, token=token, stack_dir=run_dir,
            target=what.target, args=what.args, kwargs=what.kwargs, script=what.script, argv=what.argv,
            init_process_group=init_process_group, timeout_s=timeout_s, nonce=protocol.current_nonce(),
            run_id=run_id if run_id is not None else metrics.current_run_id(), master_port=free_port(),
            num_threads=num_threads or max(1, devices.host_cores() // nprocs), cuda=cuda)
        if echo:
            write_out(f"[launch] {nprocs} rank{'s' if nprocs > 1 else ''} · {mode.label} · {name}"
                      f"{'' if name == TORCHRUN else f' ({note})'}\n")
        stacks = watchdog.StackFiles({r: _rank.stack_file(run_dir, r) for r in range(nprocs)})
        if name == TORCHRUN:
            group = TorchrunGroup(spec, run_dir, list(torchrun_cmd) if torchrun_cmd else None, io, write_err)
        else:
            store = agent_store(timeout_s)
            spec.master_port = store.port
            group = SpawnGroup(spec)
        supervisor = Supervisor(nprocs, group, io, stacks, write_out, write_err,
                                watchdog.Watchdog(hang_timeout_s) if hang_timeout_s else None,
                                time_limit_s, stack_timeout_s)
        status, summary = supervisor.run()
        result = LaunchResult(nprocs, name, note, backend, mode.to_dict(), status, summary,
                              supervisor.duration_s, [supervisor.outcomes[r] for r in range(nprocs)])
        if echo:
            write_out(f"[launch] {status}: {summary}\n")
        return result
    finally:
        if group is not None:
            group.kill_all()
            group.close()
        if io is not None:
            io.close()
        del store
        shutil.rmtree(run_dir, ignore_errors=True)


def _pick_launcher(requested: str) -> Tuple[str, str]:
    works, why = torchrun_status()
    if requested == "auto":
        return (TORCHRUN, why) if works else (SPAWN, why)
    if requested == "torchrun":
        return TORCHRUN, "requested" + ("" if works else f" although {why}")
    if requested == "spawn":
        return SPAWN, "requested"
    raise ValueError(f"launcher must be 'auto', 'torchrun' or 'spawn', got {requested!r}")


def _check_picklable(target: Callable[..., Any], launcher: str) -> None:
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", "")
    advice = ("rank processes import the function by name: define it at module level in a .py "
              "file, or use lab.launch_code(source) / lab.launch_script(path)")
    if "<locals>" in qualname or "<lambda>" in qualname:
        raise TypeError(f"cannot launch {qualname!r}: {advice}")
    if module in ("__main__", "__mp_main__"):
        main_file = getattr(sys.modules.get("__main__"), "__file__", None)
        if launcher == "torchrun" or main_file is None:
            raise TypeError(f"cannot launch {qualname!r} defined in __main__: {advice}")
    try:
        pickle.dumps(target)
    except Exception as error:
        raise TypeError(f"cannot launch {qualname or target!r} ({error}): {advice}") from None


def _writer(stream: Any) -> Callable[[str], None]:
    def write(text: str) -> None:
        stream.write(text)
        flush = getattr(stream, "flush", None)
        if flush is not None:
            flush()
    return write
