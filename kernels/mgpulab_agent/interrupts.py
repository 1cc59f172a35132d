"""Interrupt escalation and ending a kernel's tree: SIGINT, then stacks, then SIGTERM, then SIGKILL.

Separate from the daemon because it is one policy with its own clock: an interrupt first asks
nicely (0x03 on the PTY, which is SIGINT to the foreground group), and only if the cell is still
busy after the grace does it print every process's stacks (0x1c, faulthandler) so the lab can show
where it hung, then end the tree. Each step checks it is still the same interrupt of a kernel
still running, so a late timer never touches the next cell. The requester gets one
``interrupt_result`` naming the step that ended it."""
from __future__ import annotations

import signal
import time
from typing import Callable, Optional

from mgpulab_wire import agent_protocol_generated as wire

from .kernel_proc import Interrupt, InterruptStep, KernelProc
from .links import Link, Links
from .timers import Timers

KILL_AFTER_TERM_S = 2.0
STACKS_BEFORE_TERM_S = 0.3


class Escalation:
    def __init__(self, timers: Timers, links: Links, watch: Callable[[KernelProc], None]) -> None:
        self.timers = timers
        self.links = links
        self.watch = watch
        """Re-arms the kernel's PTY in the selector (writing input needs EVENT_WRITE)."""

    def interrupt(self, link: Link, request_id: str, kernel: KernelProc, grace_s: float) -> None:
        if kernel.state != "running" or kernel.outstanding == 0:
            # Idle: no SIGINT (the kernel would keep it for its next cell).
            self.links.send(link, wire.interrupt_result_message(request_id=request_id, kernel=kernel.kernel_id, step="not-running", elapsed_ms=0))
            return
        if kernel.interrupt is not None:
            self.links.send(link, wire.request_failed_message(request_id=request_id, message=f"kernel {kernel.kernel_id} is already being interrupted"))
            return
        interrupt = Interrupt(request_id, link, time.monotonic())
        kernel.interrupt = interrupt
        self._type(kernel, b"\x03")

        def current() -> bool:
            return kernel.interrupt is interrupt and kernel.state == "running"

        def escalate() -> None:
            if current():
                self.dump_stacks(kernel)
                self.timers.after(STACKS_BEFORE_TERM_S, terminate)

        def terminate() -> None:
            if current():
                interrupt.step = "sigterm"
                kernel.ending = kernel.ending or "the cell did not stop on interrupt"
                kernel.signal_tree(signal.SIGTERM)
                self.timers.after(KILL_AFTER_TERM_S, kill)

        def kill() -> None:
            if current():
                interrupt.step = "sigkill"
                kernel.signal_tree(signal.SIGKILL)
        self.timers.after(grace_s, escalate)

    def after_output(self, kernel: KernelProc) -> None:
        """The cell answered a SIGINT by going idle: the interrupt is done."""
        interrupt = kernel.interrupt
        if interrupt is not None and interrupt.step == "sigint" and kernel.outstanding == 0:
            self.done(kernel, "sigint")

    def done(self, kernel: KernelProc, step: Optional[InterruptStep] = None) -> None:
        """The interrupt ended at ``step`` (by default the step it had reached): its requester is told,
        or every link when that one has gone."""
        interrupt = kernel.interrupt
        if interrupt is None:
            return
        kernel.interrupt = None
        elapsed = (time.monotonic() - interrupt.started) * 1000
        message = wire.interrupt_result_message(request_id=interrupt.request_id, kernel=kernel.kernel_id,
                                                step=step or interrupt.step, elapsed_ms=elapsed)
        if isinstance(interrupt.link, Link) and not interrupt.link.closed:
            self.links.send(interrupt.link, message)
        else:
            self.links.broadcast(lambda _link: message)

    def dump_stacks(self, kernel: KernelProc) -> None:
        self._type(kernel, b"\x1c")  # faulthandler: every process on the tty prints its stacks

    def end_tree(self, kernel: KernelProc, why: str, grace_s: float) -> None:
        """SIGHUP and SIGTERM to the kernel's tree now, SIGKILL after ``grace_s``."""
        if kernel.ending is None:
            kernel.ending = why
        kernel.signal_tree(signal.SIGHUP)
        kernel.signal_tree(signal.SIGTERM)

        def kill() -> None:
            if kernel.state == "running":
                kernel.signal_tree(signal.SIGKILL)
        self.timers.after(grace_s, kill)

    def _type(self, kernel: KernelProc, data: bytes) -> None:
        kernel.write_pty(data)
        kernel.flush_input()
        self.watch(kernel)
