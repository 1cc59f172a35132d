"""Ctrl-C reaches the cell's code, whichever thread the operating system gave the signal to.

The tty's Ctrl-C is a SIGINT to the kernel's process; Linux hands a process's
signal to one of its threads, usually the main thread, but not always (it
skips a thread that already has a signal pending, which happens under load).
Python runs its handler in the main thread, yet only the thread that
received the signal is woken from a blocking call: a main thread asleep in
``time.sleep(1000)`` or waiting on a lock then never sees the interrupt. That
is how interrupts were lost on a loaded machine.

:class:`InterruptBridge` closes that gap. Python's C-level handler writes
each signal to a wakeup pipe (``signal.set_wakeup_fd``) whichever thread got
it; the bridge's thread reads the pipe, gives the main thread a moment to run
the handler (:meth:`handled`), and when it has not while a cell runs, sends
SIGINT to the main thread itself (``signal.pthread_kill``), which wakes it.
Signals it sends itself are told apart from the user's, so it never loops,
and an interrupt is never applied twice. The kernel's own threads block
SIGINT (:func:`block_interrupts`), so the OS prefers the main thread.
"""
from __future__ import annotations

import os
import signal
import threading
from typing import Callable

GRACE_S = 0.1  # how long the main thread has to run the handler itself before it is woken


def block_interrupts() -> None:
    """In a thread of the kernel's own: SIGINT goes to another thread, the main one if it can."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


class InterruptBridge:
    """Makes sure the main thread wakes for every SIGINT while ``executing()`` (see the module doc)."""

    def __init__(self, executing: Callable[[], bool], grace_s: float = GRACE_S) -> None:
        self._executing = executing
        self._grace_s = grace_s
        self._main = threading.main_thread().ident
        self._lock = threading.Lock()
        self._handled = threading.Condition(self._lock)
        self._handled_count = 0  # handler runs in the main thread
        self._received = 0  # SIGINTs that came from outside
        self._own = 0  # SIGINTs the bridge sent, not yet read back from the pipe
        self._read_fd = -1

    def install(self) -> None:
        """Call from the main thread, after installing the SIGINT handler."""
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        self._read_fd = read_fd
        threading.Thread(target=self._run, name="mgpulab-interrupts", daemon=True).start()

    def handled(self) -> None:
        """The SIGINT handler ran in the main thread (call it first thing there)."""
        with self._lock:
            self._handled_count += 1
            self._handled.notify_all()

    def _run(self) -> None:
        block_interrupts()
        while True:
            try:
                data = os.read(self._read_fd, 512)
            except InterruptedError:
                continue
            except OSError:
                return
            if not data:
                return
            arrived = data.count(int(signal.SIGINT))
            if arrived:
                self._arrived(arrived)

    def _arrived(self, count: int) -> None:
        with self._lock:
            own = min(count, self._own)
            self._own -= own
            if count == own:
                return  # the bridge's own signals, read back
            self._received += count - own
            waited = self._handled.wait_for(lambda: self._handled_count >= self._received, self._grace_s)
            if waited or not self._executing():
                self._handled_count = max(self._handled_count, self._received)
                return
            self._own += 1
            self._handled_count = self._received  # the handler will run once for this interrupt
        assert self._main is not None
        signal.pthread_kill(self._main, signal.SIGINT)
