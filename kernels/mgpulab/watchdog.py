"""Hang detection for multi-process runs: who stopped making progress, and where.

* :class:`Watchdog` — pure policy over heartbeat times (the caller supplies
  the clock). A rank is *starting* from its launch until its first step; its
  start-up is bounded as a whole by ``startup_s``, never by ``stall_s``. Once
  every live rank has started, a rank silent for ``stall_s`` is stalled.
* :class:`StackFiles` — per-rank faulthandler files: ask every rank for its
  Python stacks with SIGQUIT and read back what each one wrote.
* :func:`parse_stack_dump`, :func:`where`, :func:`summarise` — turn dumps
  into "rank 0 in all_reduce (distributed_c10d.py:1536) ← step (train.py:40);
  rank 1 exited (code 0)".

:func:`mgpulab.launcher.launch` wires these together (``hang_timeout_s``,
``startup_timeout_s``).
"""
from __future__ import annotations

import os
import re
import signal
import sysconfig
import time
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence

DEFAULT_STARTUP_S = 60.0
"""How long a rank may take from its launch to its first step, unless the launch says otherwise.

On a GPU host with torch 2.x a rank spends seconds there: importing torch and
what the cell imports lazily (``torch.optim`` pulls in more of torch), creating
its CUDA context, joining the process group, and loading the first kernels'
modules during its first step. None of that is a stall."""


FIRST_STEP = "first_step"
ENTRY = "entry"
STARTUP_ENDS = (FIRST_STEP, ENTRY)


@dataclass
class RankLiveness:
    rank: int
    started_at: float
    pid: Optional[int] = None
    entered_at: Optional[float] = None  # reached the code it was launched to run
    last_beat_at: Optional[float] = None
    busy_starting_at: Optional[float] = None  # a stack probe found it importing or initialising CUDA
    last_step: Optional[int] = None
    exit_code: Optional[int] = None
    done: bool = False

    def starting(self, ends: str) -> bool:
        """Still in its start-up: before its first beat, or (``ends`` = entry) before its code's entry."""
        return self.last_beat_at is None if ends == FIRST_STEP else self.entered_at is None

    def progress_at(self) -> float:
        """When it last showed progress: a beat, a probe that found start-up work, its entry, its launch."""
        return max(t for t in (self.started_at, self.entered_at, self.last_beat_at, self.busy_starting_at)
                   if t is not None)


@dataclass(frozen=True)
class Stall:
    """What :meth:`Watchdog.check` found: ``ranks`` silent past their limit, in which phase."""

    ranks: List[int]
    starting: bool  # True: they never finished starting within ``limit_s``
    silent_s: float  # the first rank's silence (start-up: time since its launch)
    limit_s: float


class Watchdog:
    """Which ranks have stopped making progress. Times are ``time.monotonic()`` values.

    Progress is a beat (``lab.log``, ``StepTimer.step``, ``lab.beat``). When a
    rank's start-up ends depends on the code it runs (``startup_ends``):

    * ``first_step`` (a function the toolkit launches: a training loop that
      logs its steps): at its first beat. Everything before — imports, CUDA
      context creation, joining the process group, building the model, and the
      first step itself with its kernels' module loading — is start-up.
    * ``entry`` (a cell's or a script's code, which may never beat): once it
      reaches that code. Silence after that is judged, except that a stack
      probe (:func:`in_start_up`) that finds the rank still importing or
      initialising CUDA counts as progress (:meth:`still_starting`).

    While any live rank is still starting, the ranks that have started are not
    judged: their next collective waits for the starting one, and that wait is
    start-up too. The start-up limit bounds start-up as a whole, from the
    launch, so one that never ends is reported with where each rank was.
    """

    def __init__(self, stall_s: float, *, startup_s: Optional[float] = None, startup_ends: str = FIRST_STEP) -> None:
        if stall_s <= 0:
            raise ValueError("stall_s must be > 0")
        if startup_ends not in STARTUP_ENDS:
            raise ValueError(f"startup_ends must be one of {STARTUP_ENDS}, got {startup_ends!r}")
        self.stall_s = stall_s
        self.startup_s = max(stall_s, DEFAULT_STARTUP_S) if startup_s is None else startup_s
        if self.startup_s <= 0:
            raise ValueError("startup_s must be > 0")
        self.startup_ends = startup_ends
        self.ranks: Dict[int, RankLiveness] = {}

    def started(self, rank: int, now: float, pid: Optional[int] = None) -> None:
        state = self.ranks.setdefault(rank, RankLiveness(rank, now))
        if pid is not None:
            state.pid = pid

    def entered(self, rank: int, now: float) -> None:
        self.ranks.setdefault(rank, RankLiveness(rank, now)).entered_at = now

    def beat(self, rank: int, now: float, step: Optional[int] = None) -> None:
        state = self.ranks.setdefault(rank, RankLiveness(rank, now))
        state.last_beat_at = now
        if step is not None:
            state.last_step = step

    def still_starting(self, rank: int, now: float) -> None:
        """A stack probe found the rank importing or initialising CUDA: progress of its start-up."""
        self.ranks.setdefault(rank, RankLiveness(rank, now)).busy_starting_at = now

    def exited(self, rank: int, code: Optional[int]) -> None:
        state = self.ranks.get(rank)
        if state is not None:
            state.done, state.exit_code = True, code

    def starting(self, rank: int) -> bool:
        state = self.ranks.get(rank)
        return state is not None and not state.done and state.starting(self.startup_ends)

    def was_starting(self, rank: int) -> bool:
        """Whether the rank had not finished its start-up (live or not: for the report of a stopped run)."""
        state = self.ranks.get(rank)
        return state is not None and state.starting(self.startup_ends)

    def never_beat(self, rank: int) -> bool:
        state = self.ranks.get(rank)
        return state is not None and state.last_beat_at is None

    def silent_for(self, rank: int, now: float) -> float:
        return now - self.ranks[rank].progress_at()

    def check(self, now: float) -> Optional[Stall]:
        """The ranks past their limit now (start-up ones first), or None."""
        live = [state for _, state in sorted(self.ranks.items()) if not state.done]
        starting = [state for state in live if state.starting(self.startup_ends)]
        if starting:
            late = [s.rank for s in starting if now - s.started_at > self.startup_s]
            if late:
                return Stall(late, True, now - self.ranks[late[0]].started_at, self.startup_s)
            return None
        stalled = [s.rank for s in live if self.silent_for(s.rank, now) > self.stall_s]
        if not stalled:
            return None
        return Stall(stalled, False, self.silent_for(stalled[0], now), self.stall_s)

    def to_probe(self, stall: Stall) -> List[int]:
        """Ranks of a stall whose stacks may show start-up work (entry mode: they never beat)."""
        if stall.starting or self.startup_ends != ENTRY:
            return []
        return [rank for rank in stall.ranks if self.never_beat(rank)]

    def start_up_over(self, rank: int, now: float) -> bool:
        return now - self.ranks[rank].started_at > self.startup_s

    def stalled(self, now: float) -> List[int]:
        """Live ranks past their limit (see :meth:`check`)."""
        found = self.check(now)
        return found.ranks if found is not None else []


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str

    def short(self) -> str:
        return f"{self.function} ({os.path.basename(self.file)}:{self.line})"


@dataclass
class ThreadStack:
    thread: str
    current: bool
    frames: List[Frame] = field(default_factory=list)  # innermost first, as faulthandler prints


_THREAD = re.compile(r"^(Current thread|Thread) (0x[0-9a-fA-F]+)")
_FRAME = re.compile(r'^\s+File "(.*)", line (\d+) in (.*)$')


def parse_stack_dump(text: str) -> List[ThreadStack]:
    """Threads of one faulthandler dump (all_threads=True format)."""
    stacks: List[ThreadStack] = []
    for line in text.splitlines():
        header = _THREAD.match(line)
        if header:
            stacks.append(ThreadStack(header.group(2), header.group(1) == "Current thread"))
            continue
        frame = _FRAME.match(line)
        if frame and stacks:
            stacks[-1].frames.append(Frame(frame.group(1), int(frame.group(2)), frame.group(3).strip()))
    return stacks


def main_thread(stacks: Sequence[ThreadStack]) -> Optional[ThreadStack]:
    """The thread that started at module level (not from ``threading``'s bootstrap)."""
    for stack in stacks:
        if stack.frames and not stack.frames[-1].function.startswith("_bootstrap"):
            return stack
    return stacks[0] if stacks else None


def _library_roots() -> List[str]:
    roots = [os.path.dirname(os.path.abspath(__file__)) + os.sep]
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.append(os.path.abspath(path) + os.sep)
    return roots


def is_library_file(path: str) -> bool:
    if any(part in path for part in ("/site-packages/", "/dist-packages/", "/torch/")):
        return True
    return any(os.path.abspath(path).startswith(root) for root in _library_roots())


def where(stack_text: str) -> Optional[str]:
    """"all_reduce (distributed_c10d.py:1536) ← step (train.py:40)" for a rank's dump."""
    thread = main_thread(parse_stack_dump(stack_text))
    if thread is None or not thread.frames:
        return None
    innermost = thread.frames[0]
    text = innermost.short()
    if is_library_file(innermost.file):
        caller = next((f for f in thread.frames if not is_library_file(f.file)), None)
        if caller is not None:
            text += f" ← {caller.short()}"
    return text


_START_UP_FRAMES = ("_find_and_load", "_load_unlocked", "_call_with_frames_removed", "exec_module",
                    "import_module", "_gcd_import", "_lazy_init")


def in_start_up(stack_text: str) -> bool:
    """True when a rank's main thread is importing a module or initialising CUDA (torch's ``_lazy_init``):
    start-up work that takes seconds on a GPU host, whatever code triggered it."""
    thread = main_thread(parse_stack_dump(stack_text))
    if thread is None:
        return False
    return any(frame.file.startswith("<frozen importlib") or frame.function in _START_UP_FRAMES
               for frame in thread.frames)


@dataclass
class RankReport:
    """What :func:`summarise` needs to know about one rank."""

    rank: int
    state: str  # "running" | "starting" | "exited" | "failed" | "killed"
    exit_code: Optional[int] = None
    stack: Optional[str] = None
    last_step: Optional[int] = None
    reason: Optional[str] = None
    starting: bool = False  # stopped before its first step
    no_stack: str = "no stack"  # what to say where a running or killed rank left no stack


def summarise(ranks: Sequence[RankReport]) -> str:
    parts = []
    for report in sorted(ranks, key=lambda r: r.rank):
        stopped_live = report.state == "killed" and (report.stack or report.starting)
        if report.state in ("running", "starting") or stopped_live:
            location = where(report.stack) if report.stack else None
            starting = report.starting or report.state == "starting"
            text = f"rank {report.rank} " + ("starting, " if starting else "")
            text += f"in {location}" if location else (report.no_stack if starting else "running (no stack)")
            if report.last_step is not None:
                text += f", last step {report.last_step}"
        else:
            code = "" if report.exit_code is None else f" (code {report.exit_code})"
            text = f"rank {report.rank} {report.state}{code}"
            if report.reason and report.state == "failed":
                reason = report.reason if len(report.reason) <= 120 else report.reason[:117] + "…"
                text += f": {reason}"
        parts.append(text)
    return "; ".join(parts)


class StackFiles:
    """Per-rank faulthandler output files, read incrementally."""

    def __init__(self, paths: Mapping[int, str]) -> None:
        self.paths = dict(paths)
        self._offsets = {rank: _size(path) for rank, path in self.paths.items()}
        self._seen = dict(self._offsets)

    def poll(self) -> Dict[int, str]:
        """New dumps whose file size was stable since the previous poll."""
        out = {}
        for rank, path in self.paths.items():
            size = _size(path)
            if size > self._offsets[rank] and size == self._seen[rank]:
                out[rank] = self._read(rank, size)
            self._seen[rank] = size
        return out

    def request(self, pids: Mapping[int, int], timeout_s: float = 3.0,
                signum: int = signal.SIGQUIT) -> Dict[int, str]:
        """SIGQUIT each rank and return what each wrote (waits at most ``timeout_s``)."""
        asked = {}
        for rank, pid in pids.items():
            try:
                os.kill(pid, signum)
                asked[rank] = pid
            except ProcessLookupError:
                continue
        out: Dict[int, str] = {}
        deadline = time.monotonic() + timeout_s
        last = {rank: _size(self.paths[rank]) for rank in asked}
        while asked.keys() - out.keys() and time.monotonic() < deadline:
            time.sleep(0.05)
            for rank in asked.keys() - out.keys():
                size = _size(self.paths[rank])
                if size > self._offsets[rank] and size == last[rank]:
                    out[rank] = self._read(rank, size)
                last[rank] = size
        for rank in asked.keys() - out.keys():  # partial dump at the deadline is better than none
            size = _size(self.paths[rank])
            if size > self._offsets[rank]:
                out[rank] = self._read(rank, size)
        return out

    def _read(self, rank: int, size: int) -> str:
        with open(self.paths[rank], "rb") as handle:
            handle.seek(self._offsets[rank])
            data = handle.read(size - self._offsets[rank])
        self._offsets[rank] = size
        self._seen[rank] = size
        return data.decode("utf-8", "replace")


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0
