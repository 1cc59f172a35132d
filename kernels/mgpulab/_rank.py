"""What runs inside each rank process, whichever launcher started it.

``spawn_entry`` is the ``torch.multiprocessing`` target; ``python -m
mgpulab._rank_keeper SPEC`` is what torchrun runs (it forks this module's
:func:`main` and reports how it ended). Both end in :func:`run_rank`: stack
dumps on SIGQUIT into a per-rank file, die with the parent, stdout and stderr
to the launcher (labelled there), stdin from /dev/null, protocol frames
straight to the inherited fd 1 with the kernel's nonce, ``hello``; then the
rank's payload (the target, script or source: unpickling it imports the
target's module, and with it torch, so that happens after ``hello``, where a
stack dump can say where a slow start-up is), the process group, ``ready``,
the target, and the result or error back over ``ctl``.
"""
from __future__ import annotations

import faulthandler
import os
import pickle
import runpy
import sys
import traceback
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Callable, Dict, List, Optional, Tuple

from mgpulab_wire import frames

from . import _channel, _env, devices, heartbeat, metrics
from ._lifeline import die_with_parent


@dataclass
class RankSpec:
    nprocs: int
    backend: str
    socket_path: str
    token: str
    stack_dir: str
    payload: bytes = b""  # pickled (target, args, kwargs): read in the rank after hello
    script: Optional[str] = None
    argv: List[str] = field(default_factory=list)
    init_process_group: bool = True
    timeout_s: Optional[float] = None
    nonce: Optional[str] = None
    run_id: Optional[str] = None
    master_addr: str = "127.0.0.1"
    master_port: int = 0
    num_threads: Optional[int] = None
    cuda: bool = False
    devices: Tuple[str, ...] = ()  # the plan's device of each (local) rank: "cuda:0", "cpu"
    init_backend: Optional[str] = None  # what init_process_group gets (default: backend)


def pack_target(target: Callable[..., Any], args: tuple, kwargs: dict) -> bytes:
    """The payload of a function launch: unpickled only inside the rank, after ``hello``."""
    return pickle.dumps((target, tuple(args), dict(kwargs)), protocol=pickle.HIGHEST_PROTOCOL)


def stack_file(stack_dir: str, rank: int) -> str:
    return os.path.join(stack_dir, f"stacks-rank{rank}.txt")


def spawn_entry(local_rank: int, spec: RankSpec) -> None:
    """``torch.multiprocessing.start_processes`` target: env rendezvous, then run.

    As under torchrun, the c10d store is hosted by the launcher (an "agent
    store"), so every rank connects to a listening server at once instead of
    racing rank 0's server and backing off for a second.
    """
    os.environ.update(
        MASTER_ADDR=spec.master_addr, MASTER_PORT=str(spec.master_port), RANK=str(local_rank),
        WORLD_SIZE=str(spec.nprocs), LOCAL_RANK=str(local_rank), LOCAL_WORLD_SIZE=str(spec.nprocs),
        GROUP_RANK="0", TORCHELASTIC_USE_AGENT_STORE="True", TORCHELASTIC_RESTART_COUNT="0")
    os.environ.update(single_host_env(os.environ))
    _exit(run_rank(local_rank, spec))


def single_host_env(env: Any) -> dict:
    """What every rank of a one-host launch should have unless the user set it: gloo on the
    loopback interface, so it never resolves the host's name (slow where there is no DNS)."""
    out = {}
    if "GLOO_SOCKET_IFNAME" not in env:
        loopback = _loopback_interface()
        if loopback is not None:
            out["GLOO_SOCKET_IFNAME"] = loopback
    return out


def _loopback_interface() -> Optional[str]:
    import socket
    try:
        names = [name for _, name in socket.if_nameindex()]
    except (AttributeError, OSError):
        return None
    return next((name for name in ("lo", "lo0") if name in names), None)


def read_spec(path: str) -> RankSpec:
    """The spec torchrun's worker gets as a file (plain values: reading it imports no torch)."""
    with open(path, "rb") as handle:
        spec = pickle.load(handle)
    if not isinstance(spec, RankSpec):
        raise TypeError(f"{path} holds a {type(spec).__name__}, not a RankSpec")
    return spec


def main(argv: Optional[List[str]] = None) -> None:
    """``python -m mgpulab._rank SPEC_FILE`` (torchrun sets RANK etc.; the launcher runs it through the keeper)."""
    argv = sys.argv if argv is None else argv
    run_as_rank(read_spec(argv[1]))


def run_as_rank(spec: RankSpec) -> None:
    """Run this process as the rank ``$RANK`` of ``spec`` and exit with its code."""
    _exit(run_rank(_env.rank(), spec))


def _exit(code: int) -> None:
    """Exit without tearing the interpreter down (seconds with torch loaded and 4 ranks
    on 2 cores): atexit handlers run and std streams are flushed; module teardown,
    the final garbage collection and joins of leftover non-daemon threads are skipped."""
    import atexit
    try:
        atexit._run_exitfuncs()
    finally:
        _flush()
        os._exit(code)


def run_rank(rank: int, spec: RankSpec) -> int:
    local = _env.local_rank()
    if 0 <= local < len(spec.devices):
        os.environ[devices.RANK_DEVICE_ENV] = spec.devices[local]  # lab.devices.rank_device() reads it
    heartbeat.install_stack_dump(stack_file(spec.stack_dir, rank))
    die_with_parent()
    ctl = _channel.RankChannel(_channel.connect(spec.socket_path, spec.token, "ctl", rank))
    frames_fd = _redirect_output(spec, rank)
    faulthandler.enable(file=sys.stderr, all_threads=True)
    if spec.nonce is not None:
        frames.configure(spec.nonce, fd=frames_fd)
    metrics.set_run_id(spec.run_id)
    _channel.attach(ctl)
    ctl.send(("hello", os.getpid()))
    try:
        if spec.num_threads:
            import torch
            torch.set_num_threads(spec.num_threads)
        call = _load(spec)  # imports the target's module (torch with it): start-up, watched as such
        if spec.init_process_group:
            _init_process_group(spec)
        # The rank reaches the cell's code. It is still starting until its first step: lazy imports,
        # CUDA context creation and the first kernels' module loading come next (see watchdog).
        ctl.send(("ready",))
        result = call()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        if code == 0:
            return _finish(ctl, spec, None)
        ctl.send(("error", "SystemExit", f"exit code {code}", ""))
        return code
    except BaseException as error:  # report every failure, KeyboardInterrupt included
        metrics.flush_deferred(block=False)  # what the device already finished; never wait on a failed run
        text = _user_traceback(error)
        hint = backend_hint(str(error), spec)
        if hint:
            text += f"[mgpulab] {hint}\n"
        sys.stderr.write(text)
        ctl.send(("error", type(error).__name__, f"{error}{f' — {hint}' if hint else ''}", text))
        _flush()
        return 1
    return _finish(ctl, spec, result)


def backend_hint(message: str, spec: RankSpec) -> Optional[str]:
    """What to do about a backend that does not fit where this rank keeps its tensors (None: not that)."""
    if "No backend type associated with device type cpu" in message:
        return ("this rank's tensors are on the CPU but its process group is NCCL, which takes CUDA tensors only: "
                "move the model and data to lab.devices.rank_device(), or launch with placement='cpu' "
                "(CPU ranks over gloo; in a cell: %%ranks N --placement cpu)")
    if "Duplicate GPU detected" in message:
        return ("NCCL refuses two ranks on one GPU: put each rank on lab.devices.rank_device(), or leave the "
                "backend to the lab (ranks that share a GPU get gloo)")
    if "No backend type associated with device type cuda" in message:
        return ("this rank's tensors are on a GPU but its process group is gloo on the CPU: keep them on "
                "lab.devices.rank_device(), or launch with placement='auto'")
    return None


def _finish(ctl: _channel.RankChannel, spec: RankSpec, result: Any) -> int:
    metrics.flush_deferred(block=True)  # values and step frames still waiting for the device
    try:
        blob = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:  # unpicklable result: say so instead of dying silently
        message = f"the return value ({type(result).__name__}) cannot be pickled: {error}"
        sys.stderr.write(message + "\n")
        ctl.send(("error", "PicklingError", message, ""))
        _flush()
        return 1
    ctl.send(("result", blob))
    if spec.init_process_group:
        import torch.distributed as dist
        if dist.is_initialized():
            dist.destroy_process_group()
    _flush()
    return 0


def _user_traceback(error: BaseException) -> str:
    """The traceback without this module's own frames (the user's code comes first)."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__ and tb.tb_next is not None:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(error), error, tb))


def _load(spec: RankSpec) -> Callable[[], Any]:
    """What the rank runs, ready to call: the script as ``__main__``, or the target with its arguments."""
    if spec.script is not None:
        script, argv = spec.script, spec.argv

        def run_script() -> Any:
            sys.argv = [script, *argv]
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
            runpy.run_path(script, run_name="__main__")
            return None
        return run_script
    target, args, kwargs = pickle.loads(spec.payload)
    return lambda: target(*args, **kwargs)


def _init_process_group(spec: RankSpec) -> None:
    import torch
    import torch.distributed as dist
    device = devices.rank_device()
    if device.type == "cuda":
        torch.cuda.set_device(device)
    backend = spec.init_backend or spec.backend
    if "nccl" in backend:
        # without async error handling NCCL ignores the process-group timeout; torch < 2.2 reads the old
        # name, which 2.x reports as deprecated, so it is set only there
        os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
        if _torch_before(2, 2):
            os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    options: Dict[str, Any] = {} if spec.timeout_s is None else {"timeout": timedelta(seconds=spec.timeout_s)}
    dist.init_process_group(backend, init_method="env://", **options)


def _torch_before(major: int, minor: int) -> bool:
    import torch
    parts = torch.__version__.split("+")[0].split(".")
    try:
        return (int(parts[0]), int(parts[1])) < (major, minor)
    except (IndexError, ValueError):
        return False


def _redirect_output(spec: RankSpec, rank: int) -> int:
    """Point fd 1/2 at the launcher, fd 0 at /dev/null; return a dup of the old fd 1 for frames."""
    out = _channel.connect(spec.socket_path, spec.token, "out", rank)
    err = _channel.connect(spec.socket_path, spec.token, "err", rank)
    _flush()
    frames_fd = os.dup(1)
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    out.close()
    err.close()
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(line_buffering=True)
    return frames_fd


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass


if __name__ == "__main__":
    main()
