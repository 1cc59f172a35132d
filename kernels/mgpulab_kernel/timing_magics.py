"""``%time``/``%%time`` and ``%timeit``/``%%timeit``, printing what IPython prints:

    CPU times: user 1.2 ms, sys: 0 ns, total: 1.2 ms
    Wall time: 1.25 ms

    1.23 µs ± 4.5 ns per loop (mean ± std. dev. of 7 runs, 1,000,000 loops each)

The timed code runs in the user's namespace and is compiled under the cell's
file name at its own line, so tracebacks point at the cell's lines.
"""
from __future__ import annotations

import math
import os
import re
import statistics
import time
import timeit
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional

from . import executor
from .magics import MagicError

Where = tuple[str, int]  # the cell's file name, the line the magic's text starts on


def format_time(seconds: float, precision: int = 3) -> str:
    if seconds >= 60.0:
        parts = []
        for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
            value = int(seconds // size)
            if value > 0:
                parts.append(f"{value}{unit}")
                seconds -= value * size
        return " ".join(parts)
    units = ("s", "ms", "µs", "ns")
    order = 3 if seconds <= 0 else min(3, max(0, -int(math.floor(math.log10(seconds) / 3))))
    return f"{seconds * 1000 ** order:.{precision}g} {units[order]}"


def _run(code: str, namespace: Dict[str, Any], where: Where) -> tuple[bool, Any]:
    filename, first_line = where
    # Blank lines in front keep the code at its line in the cell.
    return executor.run_python("\n" * (first_line - 1) + code, namespace, filename)


def time_magic(code: str, namespace: Dict[str, Any], where: Where) -> Any:
    """Runs `code` once; prints CPU and wall time; returns the value of a trailing expression."""
    wall = time.perf_counter()
    start_times = _cpu_times()
    try:
        has_value, value = _run(code, namespace, where)
    finally:
        user, system = (after - before for after, before in zip(_cpu_times(), start_times))
        elapsed = time.perf_counter() - wall
        print(f"CPU times: user {format_time(user)}, sys: {format_time(system)}, total: {format_time(user + system)}")
        print(f"Wall time: {format_time(elapsed)}")
    return value if has_value else None


def _cpu_times() -> tuple[float, float]:
    times = os.times()
    return times.user, times.system


@dataclass
class TimeitResult:
    """What ``%timeit -o`` returns (the names IPython's result has)."""

    loops: int
    repeat: int
    all_runs: list[float]
    precision: int = 3

    @property
    def timings(self) -> list[float]:
        return [run / self.loops for run in self.all_runs]

    @property
    def best(self) -> float:
        return min(self.timings)

    @property
    def worst(self) -> float:
        return max(self.timings)

    @property
    def average(self) -> float:
        return statistics.fmean(self.timings)

    @property
    def stdev(self) -> float:
        return statistics.pstdev(self.timings)

    def __str__(self) -> str:
        runs = f"{self.repeat} run{'s' if self.repeat != 1 else ''}"
        loops = f"{self.loops:,} loop{'s' if self.loops != 1 else ''}"
        spread = f"mean ± std. dev. of {runs}, {loops} each" if self.repeat > 1 else f"mean of {runs}, {loops} each"
        return (f"{format_time(self.average, self.precision)} ± {format_time(self.stdev, self.precision)} per loop ({spread})"
                if self.repeat > 1 else f"{format_time(self.average, self.precision)} per loop ({spread})")

    __repr__ = __str__


_OPTION = re.compile(r"-(?P<flag>[qo])(?:\s+|$)|-(?P<key>[nrp])\s*(?P<value>\d+)(?:\s+|$)")


def parse_timeit_options(line: str) -> tuple[dict[str, Any], str]:
    """Leading ``-n N -r R -p P -q -o`` options, then the statement."""
    options: dict[str, Any] = {"n": None, "r": 7, "p": 3, "q": False, "o": False}
    rest = line.strip()
    while rest.startswith("-"):
        match = _OPTION.match(rest)
        if match is None:
            raise MagicError(f"%timeit: cannot read the options in {rest!r}; usage: %timeit [-n N] [-r R] [-p P] [-q] [-o] statement")
        if match.group("flag"):
            options[match.group("flag")] = True
        else:
            options[match.group("key")] = int(match.group("value"))
        rest = rest[match.end():]
    if options["r"] < 1 or (options["n"] is not None and options["n"] < 1):
        raise MagicError("%timeit: -n and -r must be at least 1")
    return options, rest


def timeit_magic(line: str, cell: Optional[str], namespace: Dict[str, Any], where: Where,
                 out: Callable[[str], None] = print) -> Optional[TimeitResult]:
    """``%timeit stmt`` (line) or ``%%timeit [setup]`` with the cell as the statement."""
    options, rest = parse_timeit_options(line)
    stmt, setup = (rest, "pass") if cell is None else (cell, rest or "pass")
    if not stmt.strip():
        raise MagicError("%timeit: nothing to time; usage: %timeit [-n N] [-r R] statement")
    # Compiled first, under the cell's name, so a syntax error points at the cell's line.
    compile("\n" * (where[1] - 1 + (1 if cell is not None else 0)) + stmt, where[0], "exec")
    timer = timeit.Timer(stmt, setup, timer=time.perf_counter, globals=namespace)
    number = options["n"]
    if number is None:
        number, _ = timer.autorange()
    runs = timer.repeat(repeat=options["r"], number=number)
    result = TimeitResult(loops=number, repeat=options["r"], all_runs=runs, precision=options["p"])
    if not options["q"]:
        out(str(result))
    return result if options["o"] else None
