"""The supervision loop of one launch: relay output, track ranks, enforce limits.

Single-threaded: it polls the rank sockets (``RankIO``), the processes
(``SpawnGroup``/``TorchrunGroup``), the per-rank stack files and the clock.
Policy: a failing rank stops the run (the others get ``FAILURE_GRACE_S`` to end
on their own, then their stacks are taken and they are killed). The rank blamed
is the earliest failure that is not collateral — an error about a lost peer
("Connection closed by peer") is what the survivors of a crash see, and a rank
torchrun's agent stopped because another failed did not fail at all. A
stalled rank (watchdog), a start-up that never ends or the time limit stops
it the same way, at once. Whichever group ran the ranks, the outcomes read
alike: exit codes and signals, who failed first, stacks of what was killed.
"""
from __future__ import annotations

import pickle
import re
import signal
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple, Union

from mgpulab_wire import processes

from . import watchdog
from ._rank_groups import KILL_WAIT_S, RankExit, SpawnGroup, TorchrunGroup
from ._relay import RankIO

FAILURE_GRACE_S = 1.0
TERM_GRACE_S = 2.0
DRAIN_S = 3.0
POLL_S = 0.05


@dataclass
class RankOutcome:
    """How one rank ended. ``state``: ok | failed | killed | lost."""

    rank: int
    state: str = "running"
    pid: Optional[int] = None
    exit_code: Optional[int] = None
    result: Any = None
    error: Optional[str] = None
    traceback: Optional[str] = None
    stack: Optional[str] = None
    where: Optional[str] = None
    last_step: Optional[int] = None
    reason: Optional[str] = None
    has_result: bool = False
    ctl_closed: bool = False
    exited_at: Optional[float] = None
    failed_at: Optional[float] = None
    ready: bool = False  # reached the code it was launched to run
    stopped: bool = False  # ended by the group's own agent (torchrun stopping it after another rank failed)


class Supervisor:
    """The single-threaded loop: relay output, track ranks, enforce limits."""

    def __init__(self, nprocs: int, group: Union[SpawnGroup, TorchrunGroup], io: RankIO,
                 stacks: watchdog.StackFiles, write_out: Callable[[str], None],
                 write_err: Callable[[str], None], dog: Optional[watchdog.Watchdog],
                 time_limit_s: Optional[float], stack_timeout_s: float) -> None:
        self.group, self.io, self.stacks, self.dog = group, io, stacks, dog
        self.write_out, self.write_err = write_out, write_err
        self.time_limit_s, self.stack_timeout_s = time_limit_s, stack_timeout_s
        self.outcomes = {r: RankOutcome(r) for r in range(nprocs)}
        self.started = time.monotonic()
        self._registered: List[int] = []
        self.duration_s = 0.0
        self.culprit: Optional[int] = None  # the rank that failed first, once the run failed
        if dog is not None:
            for rank in range(nprocs):
                dog.started(rank, self.started)

    def run(self) -> Tuple[str, str]:
        try:
            status, detail = self._watch()
        except BaseException:
            self._kill_everything()
            raise
        finally:
            self._unregister_all()
        self._drain()
        self.duration_s = time.monotonic() - self.started
        self._settle_outcomes()
        return status, self._summary(status, detail)

    # -- the loop -------------------------------------------------------------------------

    def _watch(self) -> Tuple[str, str]:
        while True:
            self._pump(POLL_S)
            now = time.monotonic()
            if self._failures():
                self._wait_exit(FAILURE_GRACE_S)  # survivors usually fail on their own, quickly
                culprit = self.culprit = self._culprit()
                self._stop(grace_s=0.0, reason=f"rank {culprit} failed")
                return "failed", self._failure_text(culprit)
            if self.group.finished():
                return "ok", ""
            if self.dog is not None:
                stall = self._stalled(now)
                if stall is not None:
                    ranks = ", ".join(map(str, stall.ranks))
                    who = f"rank{'s' if len(stall.ranks) > 1 else ''} {ranks}"
                    if stall.starting:
                        self._stop(grace_s=0.0, reason="start-up limit reached")
                        end = "a first step" if self.dog.startup_ends == watchdog.FIRST_STEP else "their code"
                        return "start_timeout", (f"{who} did not reach {end} within the start-up limit of "
                                                 f"{stall.limit_s:g} s")
                    self._stop(grace_s=0.0, reason="hang detected")
                    return "hang", f"no heartbeat from {who} for {stall.silent_s:.1f} s"
            if self.time_limit_s is not None and now - self.started > self.time_limit_s:
                self._stop(grace_s=0.0, reason=f"time limit {self.time_limit_s:g} s")
                return "time_limit", f"time limit of {self.time_limit_s:g} s reached"

    def _stalled(self, now: float) -> Optional[watchdog.Stall]:
        """The watchdog's stall, once ranks whose code has not beaten yet were looked at: one whose stack shows
        it importing or initialising CUDA is starting, not stalled (until the start-up limit)."""
        assert self.dog is not None
        stall = self.dog.check(now)
        probe = self.dog.to_probe(stall) if stall is not None else []
        if stall is None or not probe:
            return stall
        pids = {rank: pid for rank in probe if (pid := self.outcomes[rank].pid) is not None}
        found = self.stacks.request(pids, timeout_s=self.stack_timeout_s)
        late = []
        for rank, text in found.items():
            if watchdog.in_start_up(text):
                self.dog.still_starting(rank, now)
                if self.dog.start_up_over(rank, now):
                    late.append(rank)
        if late:
            return watchdog.Stall(late, True, now - self.started, self.dog.startup_s)
        return self.dog.check(now)

    def _pump(self, timeout: float) -> None:
        for rank, message in self.io.poll(timeout):
            self._handle(rank, message)
        for rank, ended in self.group.poll().items():
            self._ended(rank, ended)
        now = time.monotonic()
        for rank, text in self.stacks.poll().items():  # a SIGQUIT from the tty
            self._show_stack(rank, text)
        self.io.flush_idle(now)

    def _handle(self, rank: Optional[int], message: Any) -> None:
        if rank is None:
            return  # from a connection that never said which rank it is (a corrupt handshake)
        outcome = self.outcomes.get(rank)
        if outcome is None:
            return
        kind = message[0]
        if kind == "hello":
            outcome.pid = message[1]
            self.group.note_pid(rank, message[1])
            self._register(rank, message[1])
            if self.dog is not None:
                self.dog.started(rank, time.monotonic(), message[1])
        elif kind == "ready":
            outcome.ready = True
            if self.dog is not None:
                self.dog.entered(rank, time.monotonic())
        elif kind == "beat":
            outcome.last_step = message[1] if message[1] is not None else outcome.last_step
            if self.dog is not None:
                self.dog.beat(rank, time.monotonic(), message[1])
        elif kind == "exit":  # from the rank's keeper (torchrun)
            self.group.note_exit(rank, message[1], message[2], message[3])
        elif kind == "result":
            try:
                outcome.result = pickle.loads(message[1])
                outcome.has_result = True
            except Exception as error:
                outcome.error = f"the return value could not be unpickled here: {type(error).__name__}: {error}"
        elif kind == "error":
            outcome.error = f"{message[1]}: {message[2]}" if message[2] else message[1]
            outcome.traceback = message[3] or None
        elif kind == "eof":
            outcome.ctl_closed = True
        elif kind == "corrupt":
            outcome.error = f"corrupt control stream ({message[1]})"

    def _ended(self, rank: int, ended: RankExit) -> None:
        outcome = self.outcomes[rank]
        outcome.exit_code, outcome.exited_at, outcome.stopped = ended.code, ended.at, ended.stopped
        if self.dog is not None:
            self.dog.exited(rank, ended.code)

    def _failures(self) -> List[Tuple[float, int]]:
        """(when, rank) of every rank that has failed so far: a crash when it ended, an error when it was read."""
        now = time.monotonic()
        out = []
        for rank, o in self.outcomes.items():
            crashed = o.exit_code is not None and o.exit_code != 0
            silent_exit = (o.exited_at is not None and not o.has_result and o.error is None
                           and (o.ctl_closed or o.pid is None or now - o.exited_at > DRAIN_S))
            if o.error is not None or crashed or silent_exit:
                if o.failed_at is None:
                    o.failed_at = o.exited_at if (crashed and o.error is None and o.exited_at is not None) else now
                out.append((o.failed_at, rank))
        return sorted(out)

    def _culprit(self) -> int:
        failures = self._failures()
        # torchrun's agent stops the others once one fails: those did not fail, and neither did a rank
        # whose error only says a peer went away
        primary = [f for f in failures if not is_collateral(self.outcomes[f[1]].error) and not self.outcomes[f[1]].stopped]
        return (primary or failures)[0][1]

    # -- stopping -------------------------------------------------------------------------

    def _stop(self, grace_s: float, reason: str) -> None:
        """Let others end on their own for ``grace_s``, collect stacks of the rest, kill them."""
        deadline = time.monotonic() + grace_s
        while not self.group.finished() and time.monotonic() < deadline:
            self._pump(POLL_S)
        running = self.group.pids()
        # Only a rank that said hello has its stack dump installed: SIGQUIT would end one still importing.
        entered = {rank: pid for rank, pid in running.items() if self.outcomes[rank].pid is not None}
        if entered:
            dumps = self.stacks.request(entered, timeout_s=self.stack_timeout_s)
            for rank, text in dumps.items():
                self._show_stack(rank, text)
        for rank, outcome in self.outcomes.items():
            if (rank in running and outcome.exited_at is None) or outcome.stopped:
                outcome.state, outcome.reason = "killed", f"killed by the launcher: {reason}"
        self.group.signal(signal.SIGTERM)
        self._wait_exit(TERM_GRACE_S)
        if not self.group.finished():
            self.group.signal(signal.SIGKILL)
            self._wait_exit(KILL_WAIT_S)

    def _wait_exit(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self.group.finished() and time.monotonic() < deadline:
            self._pump(POLL_S)

    def _register(self, rank: int, pid: int) -> None:
        """Let the kernel's own stack requests (``stacks`` message) include this rank."""
        processes.register_process(pid, f"rank {rank}", self.stacks.paths[rank])
        self._registered.append(pid)

    def _unregister_all(self) -> None:
        for pid in self._registered:
            processes.unregister_process(pid)
        self._registered = []

    def _kill_everything(self) -> None:
        self.group.signal(signal.SIGKILL)

    def _drain(self) -> None:
        """Read what ranks wrote before exiting (results, last lines)."""
        deadline = time.monotonic() + DRAIN_S
        while self.io.open_streams and time.monotonic() < deadline:
            self._pump(POLL_S)
        self._pump(0)

    def _show_stack(self, rank: int, text: str) -> None:
        outcome = self.outcomes[rank]
        outcome.stack = text
        outcome.where = watchdog.where(text)
        self.write_err("".join(f"[rank {rank}] {line}\n" for line in text.rstrip("\n").splitlines()))

    # -- reporting ------------------------------------------------------------------------

    def _settle_outcomes(self) -> None:
        for outcome in self.outcomes.values():
            if outcome.state == "killed" and not outcome.has_result:
                continue
            if outcome.error is not None or (outcome.exit_code not in (0, None)):
                outcome.state = "failed"
                outcome.reason = outcome.error or _exit_reason(outcome.exit_code)
            elif outcome.has_result:
                outcome.state = "ok"
            else:
                outcome.state = "lost"
                outcome.reason = ("ended without reporting a result" if outcome.pid is not None
                                  else "ended before reaching the rank entry (see the output above)")

    def _failure_text(self, rank: int) -> str:
        outcome = self.outcomes[rank]
        reason = outcome.error or _exit_reason(outcome.exit_code)
        if outcome.pid is None and outcome.error is None:
            reason += " before reaching the rank entry (see the output above: an import error, or a"
            reason += " script that calls launch() without an `if __name__ == '__main__':` guard?)"
        return f"rank {rank} failed first: {reason}"

    def _summary(self, status: str, detail: str) -> str:
        reports = [watchdog.RankReport(o.rank, _report_state(o), o.exit_code, o.stack, o.last_step, o.reason,
                                       starting=(self.dog.was_starting(o.rank) if self.dog is not None
                                                 else not o.ready),
                                       no_stack="no stack" if o.pid is not None else
                                       "no stack (before the rank's entry: its interpreter was still importing)")
                   for o in self.outcomes.values()]
        elapsed = f"{self.duration_s:.1f} s"
        if status == "ok":
            return f"all {len(self.outcomes)} ranks finished in {elapsed}"
        ranks = watchdog.summarise(reports)
        return f"{detail} — {ranks}; stopped after {elapsed}"


_COLLATERAL = re.compile(r"Connection closed by peer|Connection reset by peer|Broken pipe|"
                         r"NCCL communicator was aborted|remote process exited|"
                         r"ECONNRESET|EPIPE", re.IGNORECASE)


def is_collateral(error: Optional[str]) -> bool:
    """An error that says a peer went away (a consequence of another rank's failure)."""
    return error is not None and _COLLATERAL.search(error) is not None


def _report_state(outcome: RankOutcome) -> str:
    if outcome.state == "killed":
        return "killed"
    if outcome.state == "failed":
        return "failed"
    if outcome.state == "ok":
        return "exited"
    return outcome.state


def _exit_reason(code: Optional[int]) -> str:
    if code is None:
        return "ended (exit status unknown)"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (out of memory? the kernel's OOM killer sends SIGKILL)" if -code == signal.SIGKILL else ""
        return f"killed by {name}{hint}"
    return f"exited with code {code}"
