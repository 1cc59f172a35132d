"""torchrun's worker for one rank: fork the rank, wait for it, report how it ended.

torchrun's agent is the parent of the processes it starts, so only the agent
learns how they end: a rank killed by a signal would just vanish for the
launcher ("exit status unknown"), where the spawn launcher, their parent,
reads the signal. So the worker torchrun starts is this keeper. It reads the
spec (plain values: no torch yet), forks the rank (:func:`mgpulab._rank.run_as_rank`),
forwards the signals torchrun's agent sends it, reaps the rank, and reports
its exit status over the launch's socket as ``("exit", status, when,
stopped_by_agent)`` (``status`` as ``subprocess`` gives it: negative for a
signal; ``when`` on the system-wide monotonic clock, so the launcher orders
failures by when they happened, not when it read them). Then it ends the
same way, so torchrun sees what happened too.

Only the rank does the work: the keeper is a small stdlib process sharing
the rank's pages until the rank imports torch.
"""
from __future__ import annotations

import os
import resource
import signal
import sys
import time
from typing import List, Optional

from . import _channel, _env, _rank
from ._lifeline import die_with_parent

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)


def main(argv: Optional[List[str]] = None) -> None:
    argv = sys.argv if argv is None else argv
    spec = _rank.read_spec(argv[1])
    rank = _env.rank()
    child = os.fork()
    if child == 0:
        _rank.run_as_rank(spec)  # exits
        os._exit(1)
    forwarded: List[int] = []

    def forward(signum: int, _frame: object) -> None:
        forwarded.append(signum)
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    for signum in FORWARDED:
        signal.signal(signum, forward)
    die_with_parent()  # torchrun's agent gone: the keeper goes, and the rank with it (its own lifeline)
    _, status = os.waitpid(child, 0)  # retried across signals (PEP 475)
    code = os.waitstatus_to_exitcode(status)
    report(spec, rank, ("exit", code, time.monotonic(), bool(forwarded)))
    end_like(code)


def report(spec: _rank.RankSpec, rank: int, message: tuple) -> None:
    """One message to the launcher; nothing when it is gone (the run is over then anyway)."""
    try:
        sock = _channel.connect(spec.socket_path, spec.token, "keeper", rank)
    except OSError:
        return
    try:
        sock.sendall(_channel.encode(message))
    except OSError:
        pass
    finally:
        sock.close()


def end_like(code: int) -> None:
    """Exit as the rank did: the same code, or the same signal (without a core file of our own)."""
    sys.stdout.flush()
    sys.stderr.flush()
    if code < 0:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # those two cannot be handled, so are default already
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        time.sleep(1)  # a signal whose default is to ignore it leaves us here
    os._exit(code if 0 <= code < 256 else 1)


if __name__ == "__main__":
    main()
