"""The GPU queue: which kernel gets the host's GPUs, in what order, and what each waiting one is told.

Separate from the daemon because it is the agent's one scheduling policy, first come first served
with the free GPUs reserved for the head (a kernel has no end time: one let past the head could
delay it without bound), and it decides nothing about sockets or processes: starting a kernel,
announcing its state and streaming its buffer are the daemon's, through QueueHost."""
from __future__ import annotations

import os
import time
from typing import Dict, List, Optional, Protocol

from mgpulab_wire import agent_protocol_generated as wire

from . import runtime_dir
from .kernel_proc import KernelProc
from .links import Link
from .slots import GpuSlots
from .timers import Timers

ORPHAN_QUEUED_S = 120.0


def orphan_queued_seconds() -> float:
    # MGPULAB_AGENT_ORPHAN_SECONDS: tests shorten the wait (the agent inherits the bootstrap's environment).
    try:
        return float(os.environ.get("MGPULAB_AGENT_ORPHAN_SECONDS", ORPHAN_QUEUED_S))
    except ValueError:
        return ORPHAN_QUEUED_S


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


class QueueHost(Protocol):
    def announce(self, kernel: KernelProc, requester: Optional[Link] = None, request_id: Optional[str] = None) -> None: ...

    def pump(self, kernel: KernelProc) -> None: ...

    def start(self, kernel: KernelProc) -> Optional[str]:
        """Starts a kernel whose GPUs are leased; the error in words, or None."""
        ...


class GpuQueue:
    def __init__(self, slots: GpuSlots, kernels: Dict[str, KernelProc], timers: Timers, host: QueueHost) -> None:
        self.slots = slots
        self.kernels = kernels
        self.timers = timers
        self.host = host
        self.ids: List[str] = []
        self._waits: Dict[str, wire.GpuWait] = {}
        """The wait each queued kernel was last told (a change is announced)."""
        self.closed = False

    def wait(self, kernel: KernelProc) -> wire.GpuWait:
        """What the kernel waits for: the GPUs free of the total, who holds the rest, who is before it."""
        holders: List[wire.GpuUse] = [{"kernel": holder, "gpus": count, "since": since} for holder, (count, since) in self.slots.held().items()]
        place = self.ids.index(kernel.kernel_id) if kernel.kernel_id in self.ids else len(self.ids)
        ahead: List[wire.GpuUse] = [{"kernel": other.kernel_id, "gpus": other.gpus_requested, "since": other.queued_at}
                                    for other in (self.kernels[kid] for kid in self.ids[:place])]
        return {"asked": kernel.gpus_requested, "free": len(self.slots.free()), "total": self.slots.total,
                "holders": holders[:1024], "ahead": ahead[:1024]}

    def refusal_text(self, wanted: int) -> str:
        """A refusal in words (the lab names the holders' notebooks; this is for logs and older labs)."""
        total, free = self.slots.total, len(self.slots.free())
        if wanted > total:
            return f"the kernel asks for {plural(wanted, 'GPU')}; this host has {total}"
        waiting = f"; {len(self.ids)} kernel(s) wait before it" if self.ids else ""
        held = ", ".join(f"{uuid} by {holder}" for uuid, holder in sorted(self.slots.holders.items())) or "none"
        return f"no GPU free: it asks for {wanted}, {free} of {total} are free{waiting} (held: {held})"

    def must_wait(self, wanted: int) -> bool:
        """A request behind others waits even where it would fit: the free GPUs are reserved for the first."""
        return wanted > self.slots.total or (wanted > 0 and (len(self.slots.free()) < wanted or bool(self.ids)))

    def join(self, kernel: KernelProc) -> None:
        self.ids.append(kernel.kernel_id)
        kernel.position = len(self.ids)
        kernel.queued_at = time.time() * 1000
        self._waits[kernel.kernel_id] = self.wait(kernel)

    def lease_gpus(self, kernel: KernelProc) -> None:
        kernel.gpus = self.slots.lease(kernel.kernel_id, kernel.gpus_requested)

    def release(self, kernel: KernelProc) -> None:
        # kernel.gpus stays: what it held, in its last state
        for uuid in self.slots.release([uuid for uuid in kernel.gpus if self.slots.holders.get(uuid) == kernel.kernel_id]):
            runtime_dir.log(f"GPU {uuid} left the host: it is no longer in the hosts file and kernel {kernel.kernel_id} has ended")

    def advance(self) -> None:
        """The head starts once enough GPUs are free; until then the free GPUs are reserved for it."""
        if self.closed:
            return
        for kernel_id in list(self.ids):
            kernel = self.kernels[kernel_id]
            if kernel.gpus_requested > self.slots.total:
                # The host no longer has that many (its GPU list shrank): it would wait forever.
                self.refuse(kernel)
        while self.ids:
            head = self.kernels[self.ids[0]]
            if len(self.slots.free()) < head.gpus_requested:
                break
            self.ids.pop(0)
            self._waits.pop(head.kernel_id, None)
            self.lease_gpus(head)
            error = self.host.start(head)
            if error is not None:
                head.leave_queue(error)
                self.host.pump(head)
            self.host.announce(head)
        self._renumber()

    def _renumber(self) -> None:
        """Tells each queued kernel its place and what it waits for, when either changed."""
        for position, kernel_id in enumerate(self.ids, start=1):
            kernel = self.kernels[kernel_id]
            wait = self.wait(kernel)
            if kernel.position != position or self._waits.get(kernel_id) != wait:
                kernel.position = position
                self._waits[kernel_id] = wait
                self.host.announce(kernel)

    def leave(self, kernel: KernelProc, why: str, requester: Optional[Link] = None, request_id: Optional[str] = None,
              refusal: Optional[wire.GpuWait] = None) -> None:
        self.ids.remove(kernel.kernel_id)
        self._waits.pop(kernel.kernel_id, None)
        kernel.leave_queue(why, refusal)
        self.host.pump(kernel)
        self.host.announce(kernel, requester, request_id)
        self._renumber()

    def refuse(self, kernel: KernelProc) -> None:
        """Out of the queue with the refusal it would have had if it had asked now."""
        self.leave(kernel, self.refusal_text(kernel.gpus_requested), refusal=self.wait(kernel))

    def refuse_all(self) -> None:
        for kernel_id in list(self.ids):
            self.refuse(self.kernels[kernel_id])

    def close(self, why: str) -> None:
        """Every queued kernel leaves, and none starts from here (the agent is ending)."""
        self.closed = True
        for kernel_id in list(self.ids):
            self.leave(self.kernels[kernel_id], f"removed from the GPU queue: {why}")

    def forget_if_orphaned(self, kernel: KernelProc) -> None:
        """A queued kernel whose lab went away (a server stopped while it waited; the next one
        does not know it) would hold the queue, and the GPUs reserved for it, for nobody: it
        leaves the queue unless a link resumes it within ORPHAN_QUEUED_S (a dropped link reconnects
        within seconds; a stalled one is reopened after 30 s)."""
        def check() -> None:
            if kernel.state == "queued" and kernel.link is None and kernel.kernel_id in self.ids:
                self.leave(kernel, "removed from the GPU queue: the lab server that asked for it went away")
                self.advance()
        self.timers.after(orphan_queued_seconds(), check)

    def described(self) -> List[wire.GpuUse]:
        """The queue in order, for the health reply."""
        return [{"kernel": kid, "gpus": self.kernels[kid].gpus_requested, "since": self.kernels[kid].queued_at} for kid in self.ids]
