"""Run a function, script or source on N ranks (DDP), supervised.

Where the ranks run is the device plan (:func:`mgpulab.devices.detect` for
DDP): one GPU per rank over NCCL when the host has them (with gloo for CPU
tensors where torch supports ``"cpu:gloo,cuda:nccl"``), ranks sharing the
GPUs over gloo when there are more ranks than GPUs, CPU ranks over gloo
without a GPU or with ``placement="cpu"``. The echo line and
``LaunchResult.device_mode`` are that plan; each rank gets its device in
``$MGPULAB_DEVICE`` (``lab.devices.rank_device()``).

Launchers: ``torchrun`` (``python -m torch.distributed.run``) where it works
and is quick, ``torch.multiprocessing.start_processes`` (spawn) with env-var
rendezvous otherwise. Debian's torch 1.13 on Python 3.11 has a broken torchrun
(see :func:`torchrun_status`); torch 2.x's torchrun calls
``socket.getfqdn()`` for every agent event, which waits on DNS timeouts on a
host without DNS (see :func:`name_resolution_s`). The launcher used, and why,
is in the result. Both rendezvous on 127.0.0.1; gloo uses the loopback
interface (``GLOO_SOCKET_IFNAME``) so it never resolves the host's name.

In every rank (see ``_rank.py``): the default process group is initialised
(the plan's backend, ``timeout_s``) unless ``init_process_group=False``;
stdout/stderr reach the caller's ``sys.stdout``/``sys.stderr`` as lines
prefixed ``[rank N] ``; protocol frames (metrics) go straight to the
inherited fd 1 with the kernel's nonce; SIGQUIT dumps every thread's stack.

Supervision: a rank that fails (exception, non-zero exit, signal) gets the
others killed after a short grace; ``hang_timeout_s`` kills everything when a
rank stops calling :func:`mgpulab.heartbeat.beat` (``lab.log`` and
``StepTimer`` beat for you) — after collecting every rank's Python stack. A
launched function is starting until its first beat, code and scripts until
they reach their code (and while their stack shows them importing or
initialising CUDA): imports, CUDA initialisation and the first step's module
loading take seconds on a GPU host and never count as a hang;
``startup_timeout_s`` bounds that start-up instead (status
``start_timeout``, with where each rank was). ``time_limit_s`` bounds the
whole run. Nothing is left running on return. Both launchers report alike:
exit codes and signals, who failed first, stacks on a kill. The process
groups are in ``_rank_groups.py``, the loop in ``_supervisor.py``.

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
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from mgpulab_wire import frames

from . import _launch_events, _rank, _run_tag, devices, watchdog
from ._rank_groups import SpawnGroup, TorchrunGroup, agent_store, free_port
from ._relay import RankIO
from ._supervisor import RankOutcome, Supervisor
from .outcome import launch_outcome

__all__ = ["launch", "launch_script", "launch_code", "torchrun_status", "name_resolution_s", "choose_launcher",
           "LaunchResult", "RankOutcome"]

SPAWN = "torch.multiprocessing.spawn"
TORCHRUN = "torchrun"
NAME_PROBE_S = 0.25  # how long to wait for socket.getfqdn() before calling this host's name resolution slow
TORCHRUN_FQDN_BUDGET_S = 0.25  # what torchrun's getfqdn() calls may cost a launch before spawn is used instead


@dataclass
class LaunchResult:
    """Outcome of :func:`launch`. ``status``: ok | failed | hang | start_timeout | time_limit."""

    nprocs: int
    launcher: str
    launcher_note: str
    backend: str
    device_mode: Dict[str, Any]
    status: str
    summary: str
    duration_s: float
    ranks: List[RankOutcome] = field(default_factory=list)
    culprit: Optional[int] = None  # with status "failed": the rank that failed first

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def outcome(self) -> str:
        """``ok``, ``hang``, ``start_timeout``, ``time_limit`` or ``failed:<kind>`` (:mod:`mgpulab.outcome`)."""
        return launch_outcome(self)

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


@functools.lru_cache(maxsize=None)
def name_resolution_s() -> Optional[float]:
    """Seconds ``socket.getfqdn(socket.gethostname())`` takes here, as torchrun calls it; None
    when it has not answered within ``NAME_PROBE_S`` (no DNS: the resolver waits for timeouts).

    Asked once per process, on a daemon thread, so a slow resolver costs the
    caller ``NAME_PROBE_S`` once and never blocks it longer.
    """
    took: List[float] = []
    done = threading.Event()

    def probe() -> None:
        started = time.perf_counter()
        try:
            socket.getfqdn(socket.gethostname())
        finally:
            took.append(time.perf_counter() - started)
            done.set()

    threading.Thread(target=probe, name="mgpulab-name-probe", daemon=True).start()
    return took[0] if done.wait(NAME_PROBE_S) else None


def choose_launcher(requested: str, torchrun_works: bool, torchrun_why: str, fqdn_s: Optional[float],
                    nprocs: int) -> Tuple[str, str]:
    """(launcher, why) — pure. torchrun's agent calls ``socket.getfqdn()`` for each of its
    events (rendezvous, rank assignment, one per worker at the end): ``nprocs + 3`` calls."""
    if requested == "spawn":
        return SPAWN, "requested"
    if requested == "torchrun":
        return TORCHRUN, "requested" + ("" if torchrun_works else f" although {torchrun_why}")
    if requested != "auto":
        raise ValueError(f"launcher must be 'auto', 'torchrun' or 'spawn', got {requested!r}")
    if not torchrun_works:
        return SPAWN, torchrun_why
    if fqdn_s is None or fqdn_s * (nprocs + 3) > TORCHRUN_FQDN_BUDGET_S:
        took = f"took {fqdn_s * 1000:.0f} ms" if fqdn_s is not None else f"did not answer within {NAME_PROBE_S:g} s"
        return SPAWN, (f"torchrun calls socket.getfqdn() for each of its {nprocs + 3} agent events and here it "
                       f"{took} (no DNS?)")
    return TORCHRUN, torchrun_why


@functools.lru_cache(maxsize=None)
def _torchrun_flags() -> Tuple[str, ...]:
    """Extra torchrun options this torch understands: ``--local_addr`` (torch >= 2.3) keeps the
    agent from looking up the host's name for its own address."""
    try:
        from torch.distributed.run import get_args_parser
        usage = get_args_parser().format_help()
    except Exception:  # noqa: BLE001 - torchrun unusable: the spawn path does not need flags
        return ()
    return ("--local_addr=127.0.0.1",) if ("--local_addr" in usage or "--local-addr" in usage) else ()


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


def _launch(nprocs: int, what: _RankTarget, *, backend: Optional[str] = None, placement: str = "auto",
            timeout_s: Optional[float] = 120.0,
            time_limit_s: Optional[float] = None, hang_timeout_s: Optional[float] = None,
            startup_timeout_s: Optional[float] = None, startup_ends: Optional[str] = None,
            launcher: str = "auto", init_process_group: bool = True, run_id: Optional[str] = None,
            echo: bool = True, num_threads: Optional[int] = None,
            torchrun_cmd: Optional[Sequence[str]] = None, stack_timeout_s: float = 3.0) -> LaunchResult:
    """Shared implementation.

    backend: "gloo" | "nccl" | None (the plan's: NCCL with one GPU per rank, gloo
        when ranks share GPUs or run on the CPU).
    placement: "auto" | "cuda" | "cpu" — where the ranks keep their tensors
        ("cpu": CPU ranks over gloo even on a GPU host).
    timeout_s: process-group timeout, 120 s by default (torch's is 30 min);
        collectives raise after it (NCCL: with async error handling, which the
        ranks enable).
    time_limit_s: wall-clock limit of the whole run; then stacks, then kill.
    hang_timeout_s: kill when a live rank has not beaten for this long, once every rank has started
        (beaten once).
    startup_timeout_s: with hang_timeout_s, how long ranks may take to start (default: the larger of 60 s
        and hang_timeout_s).
    startup_ends: when a rank's start-up ends — "first_step" (its first beat; the default for a function,
        a training loop that logs its steps) or "entry" (when it reaches its code; the default for code and
        scripts, which may never beat: silence after that is a stall unless the rank's stack shows it still
        importing or initialising CUDA). See :class:`mgpulab.watchdog.Watchdog`.
    launcher: "auto" | "torchrun" | "spawn".
    num_threads: torch threads per rank (default: host cores // nprocs, ≥ 1).
    torchrun_cmd: command prefix for torchrun (default: python -m torch.distributed.run).
    """
    if nprocs < 1:
        raise ValueError(f"nprocs must be >= 1, got {nprocs}")
    if run_id is not None:
        _run_tag.check_run_id(run_id)  # refused here, before any rank starts, not in each rank's first frame
    mode = devices.detect(nprocs, "DDP", backend=backend, placement=placement)
    name, note = _pick_launcher(launcher, nprocs)

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
        from . import metrics
        assert mode.backend is not None and mode.init_backend is not None
        spec = _rank.RankSpec(
            nprocs=nprocs, backend=mode.backend, socket_path=socket_path, token=token, stack_dir=run_dir,
            payload=_rank.pack_target(what.target, what.args, what.kwargs) if what.target is not None else b"",
            script=what.script, argv=what.argv,
            init_process_group=init_process_group, timeout_s=timeout_s, nonce=frames.current_nonce(),
            run_id=run_id if run_id is not None else metrics.current_run_id(), master_port=free_port(),
            num_threads=num_threads or max(1, devices.host_cores() // nprocs), cuda=mode.cuda,
            devices=tuple(mode.devices), init_backend=mode.init_backend)
        metrics.publish_plan(mode, run_id=spec.run_id)  # the charts name the plan these ranks run
        if echo:
            # Which launcher ran, not why (the why names torch internals): LaunchResult.launcher_note keeps that.
            write_out(f"[launch] {nprocs} rank{'s' if nprocs > 1 else ''} · {mode.label} · {name}\n")
        stacks = watchdog.StackFiles({r: _rank.stack_file(run_dir, r) for r in range(nprocs)})
        if name == TORCHRUN:
            group = TorchrunGroup(spec, run_dir, list(torchrun_cmd) if torchrun_cmd else None, io, write_err,
                                  _torchrun_flags())
        else:
            store = agent_store(timeout_s)
            spec.master_port = store.port
            group = SpawnGroup(spec)
        supervisor = Supervisor(nprocs, group, io, stacks, write_out, write_err,
                                watchdog.Watchdog(hang_timeout_s, startup_s=startup_timeout_s,
                                                  startup_ends=startup_ends or (
                                                      watchdog.FIRST_STEP if what.target is not None
                                                      else watchdog.ENTRY)) if hang_timeout_s else None,
                                time_limit_s, stack_timeout_s)
        status, summary = supervisor.run()
        result = LaunchResult(nprocs, name, note, mode.backend, mode.to_dict(), status, summary,
                              supervisor.duration_s, [supervisor.outcomes[r] for r in range(nprocs)],
                              supervisor.culprit)
        if echo:
            write_out(f"[launch] {status}: {summary}\n")
        _launch_events.finished(result)
        return result
    finally:
        if group is not None:
            group.kill_all()
            group.close()
        if io is not None:
            io.close()
        del store
        shutil.rmtree(run_dir, ignore_errors=True)


def _pick_launcher(requested: str, nprocs: int) -> Tuple[str, str]:
    works, why = torchrun_status()
    fqdn_s = name_resolution_s() if requested == "auto" and works else None
    return choose_launcher(requested, works, why, fqdn_s, nprocs)


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
