"""Progress beacons from ranks, and Python stacks on request.

``beat(step)`` says "this rank made progress". :func:`mgpulab.metrics.log` and
:class:`mgpulab.timing.StepTimer` call it for you. It goes two ways:

* to the launcher that started this rank (local socket), where the watchdog
  (:mod:`mgpulab.watchdog`) declares a hang when a rank stops beating;
* to the server as a frame, at most once per ``frame_interval_s``. Until the
  protocol has a dedicated message it is a metric ``{"heartbeat": 1}``; the
  proposed message is ``{"type": "heartbeat", "runId"?, "rank", "step",
  "pid"}`` (change :func:`_heartbeat_message` when the protocol has it).

Never call ``beat`` from a background timer thread: a beacon that keeps
beating while the training loop is stuck hides exactly the hangs it is for.

:func:`install_stack_dump` registers ``faulthandler`` for SIGQUIT (the tty's
QUIT character, Ctrl-\\) so every rank prints all its threads' Python stacks
without stopping. The launcher calls it in every rank.
"""
from __future__ import annotations

import faulthandler
import signal
import sys
import time
from typing import IO, Optional

from mgpulab_wire import frames
from mgpulab_wire import protocol_generated as wire

from . import _channel, _env, _run_tag

CHANNEL_INTERVAL_S = 0.1
_frame_interval_s: Optional[float] = 1.0
_last_channel = float("-inf")
_last_channel_step: Optional[int] = None
_last_frame = float("-inf")
_stack_file: Optional[IO[str]] = None


def configure(*, frame_interval_s: Optional[float] = 1.0) -> None:
    """Heartbeat frames to the server at most every ``frame_interval_s`` (None: never)."""
    global _frame_interval_s
    _frame_interval_s = frame_interval_s


def beat(step: Optional[int] = None, *, frame: bool = True) -> None:
    """Report progress at ``step`` (cheap: rate-limited, never blocks on the server)."""
    global _last_channel, _last_channel_step, _last_frame
    now = time.monotonic()
    channel = _channel.current()
    # every new step goes to the launcher (so a hang report names the true last step);
    # repeated beats at the same step are rate-limited
    if channel is not None and (step != _last_channel_step or now - _last_channel >= CHANNEL_INTERVAL_S):
        _last_channel, _last_channel_step = now, step
        channel.send(("beat", step))
    if frame and step is not None and _frame_interval_s is not None and now - _last_frame >= _frame_interval_s:
        _last_frame = now
        frames.emit(_heartbeat_message(step))


def _heartbeat_message(step: int) -> wire.MetricMessage:
    # Built here, not by mgpulab.metrics: metrics.log calls beat(), so this module stays below it.
    return wire.metric_message(run_id=_run_tag.current_run_id(), rank=_env.rank(), step=step,
                               values={"heartbeat": 1.0})


def install_stack_dump(path: Optional[str] = None, signum: int = signal.SIGQUIT) -> None:
    """On ``signum``, write every thread's Python stack to ``path`` (default stderr).

    The process keeps running. Safe while the main thread is blocked in C++
    (e.g. inside a gloo or NCCL collective): faulthandler does not need the GIL.
    """
    global _stack_file
    if path is None:
        faulthandler.register(signum, file=sys.stderr, all_threads=True, chain=False)
        return
    handle = open(path, "a", encoding="utf-8")
    faulthandler.register(signum, file=handle, all_threads=True, chain=False)
    if _stack_file is not None:
        _stack_file.close()
    _stack_file = handle

