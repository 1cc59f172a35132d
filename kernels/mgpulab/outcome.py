"""What kind of outcome a launch had, in one word an experiment can declare it expects.

A launch that went wrong went wrong in a particular way. An experiment that
provokes a failure on purpose (a hang, an out-of-memory error, a collective
that fails) says which one it provokes; any other way (an error in the code,
a rank killed from outside, a start-up that never ended, a time limit) means
the experiment itself failed, and its numbers must not become a verdict.

:func:`launch_outcome` is one of ``ok``, ``hang``, ``start_timeout``,
``time_limit``, or ``failed:<kind>`` where the kind is :func:`failure_kind`
of the rank that failed first: ``oom`` (out of memory, real or emulated),
``collective`` (the process group's own error: gloo/NCCL, a peer gone, a
collective timeout), ``abort`` (a library aborted the process: SIGABRT, as
gloo does on mismatched tensors and NCCL's watchdog on a timeout),
``signal`` (killed by another signal), ``exit`` (a non-zero exit without an
error) or ``error`` (any other exception: a bug, or the user's error).

Stdlib only: the scenario catalog reads it without importing torch.
"""
from __future__ import annotations

import re
import signal
from typing import Any, Optional

KINDS = ("oom", "collective", "abort", "signal", "exit", "error")
STATUSES = ("ok", "hang", "start_timeout", "time_limit")
OUTCOMES = STATUSES + tuple(f"failed:{kind}" for kind in KINDS)

_OOM = re.compile(r"out of memory|OutOfMemoryError|EmulatedOOM", re.IGNORECASE)
_DIST_ERRORS = ("DistError", "DistBackendError", "DistNetworkError", "DistStoreError")
# RuntimeErrors raised by a process group (torch 1.13 has no Dist* classes): what their messages name
_COLLECTIVE = re.compile(r"gloo|nccl|ProcessGroup|c10d|Connection (closed|reset) by peer|Broken pipe|"
                         r"Timed out waiting|Socket Timeout|collective operation timeout|Watchdog caught", re.IGNORECASE)


def failure_kind(error: Optional[str], exit_code: Optional[int]) -> str:
    """The kind of one rank's failure, from its error (``"Type: message"``) or, without one, its exit status."""
    if error:
        name = error.split(":", 1)[0].strip()
        if _OOM.search(error):
            return "oom"
        if name in _DIST_ERRORS or (name == "RuntimeError" and _COLLECTIVE.search(error)):
            return "collective"
        return "error"
    if exit_code is not None and exit_code < 0:
        return "abort" if -exit_code == signal.SIGABRT else "signal"
    return "exit"


def launch_outcome(result: Any) -> str:
    """``result`` (a :class:`mgpulab.launcher.LaunchResult`) as one of :data:`OUTCOMES`."""
    if result.status != "failed":
        return str(result.status)
    culprit = result.culprit
    if culprit is None or not 0 <= culprit < len(result.ranks):
        return "failed:error"
    rank = result.ranks[culprit]
    return f"failed:{failure_kind(rank.error, rank.exit_code)}"


def describe(outcome: str) -> str:
    """The outcome in words, for a sentence that says what was expected and what happened."""
    words = {"ok": "finished", "hang": "a hang (a rank stopped making progress)",
             "start_timeout": "a start-up that never ended", "time_limit": "the time limit",
             "failed:oom": "an out-of-memory error", "failed:collective": "a collective's error",
             "failed:abort": "a rank aborted (SIGABRT)", "failed:signal": "a rank killed by a signal",
             "failed:exit": "a rank that exited with an error code", "failed:error": "an error in a rank"}
    return words.get(outcome, outcome)
