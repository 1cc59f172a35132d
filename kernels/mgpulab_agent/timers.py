"""The agent's timers: one heap of one-shot actions on the monotonic clock, run by the loop.

Separate from the loop so that every delayed thing (interrupt escalation, stop grace, the lease,
an orphaned queue entry) is scheduled the same way and the ordering can be tested without
sockets: actions due at the same moment run in the order they were scheduled, and a cancelled
one never runs."""
from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass, field
from typing import Callable, List


@dataclass(order=True)
class Timer:
    when: float
    order: int
    action: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class Timers:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._heap: List[Timer] = []
        self._order = itertools.count()

    def after(self, seconds: float, action: Callable[[], None]) -> Timer:
        timer = Timer(self._clock() + seconds, next(self._order), action)
        heapq.heappush(self._heap, timer)
        return timer

    def run_due(self) -> None:
        now = self._clock()
        while self._heap and self._heap[0].when <= now:
            timer = heapq.heappop(self._heap)
            if not timer.cancelled:
                timer.action()

    def wait(self, longest: float) -> float:
        """Seconds until the next live timer is due, at most ``longest`` (the loop's select timeout)."""
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)
        if not self._heap:
            return longest
        return min(longest, max(0.0, self._heap[0].when - self._clock()))
