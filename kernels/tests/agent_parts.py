"""Helpers for the agent's per-module tests: a real socket pair registered in a real selector as a
link, frames read back off its peer, a manual clock for Timers, and kernels that are bookkeeping
only (no process) for the queue and settings policies."""
from __future__ import annotations

import json
import selectors
import socket
from typing import Any, Dict, List, Optional

from mgpulab_agent.gpu_queue import GpuQueue
from mgpulab_agent.kernel_proc import KernelProc
from mgpulab_agent.links import Link
from mgpulab_agent.outbuf import SeqBuffer
from mgpulab_agent.slots import GpuSlots
from mgpulab_agent.timers import Timers
from mgpulab_wire.frames import FRAME_END, FRAME_PREFIX

NONCE = "n" * 32


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def kernel(kernel_id: str, gpus: int = 0) -> KernelProc:
    return KernelProc(kernel_id, gpus, None, {}, SeqBuffer(1 << 20))


def gpus(count: int) -> List[Dict[str, Any]]:
    return [{"index": i, "uuid": f"GPU-{i}", "name": "test GPU", "memoryTotalMiB": 1024} for i in range(count)]


class Peer:
    """The lab's end of a link: reads the frames the agent wrote, in order."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sock.setblocking(False)
        self.pending = b""

    def frames(self) -> List[Dict[str, Any]]:
        """Every whole frame the agent has written so far (its writes are done by the time this reads)."""
        try:
            while True:
                data = self.sock.recv(1 << 20)
                if not data:
                    break
                self.pending += data
        except BlockingIOError:
            pass
        out = []
        while True:
            end = self.pending.find(FRAME_END)
            if end == -1:
                return out
            frame, self.pending = self.pending[:end], self.pending[end + len(FRAME_END):]
            assert frame.startswith(FRAME_PREFIX + NONCE.encode() + b";"), frame[:80]
            out.append(json.loads(frame[len(FRAME_PREFIX) + len(NONCE) + 1:]))


def link_pair(sel: selectors.BaseSelector, named: Optional[bool] = True) -> "tuple[Link, Peer]":
    mine, theirs = socket.socketpair()
    mine.setblocking(False)
    link = Link(mine, nonce=NONCE if named else None)
    sel.register(mine, selectors.EVENT_READ, ("link", link))
    return link, Peer(theirs)


class QuietHost:
    """The daemon's side of the GPU queue where a test does not look at it: starting always works."""

    def announce(self, kernel: KernelProc, requester: Optional[Link] = None, request_id: Optional[str] = None) -> None:
        pass

    def pump(self, kernel: KernelProc) -> None:
        pass

    def start(self, kernel: KernelProc) -> Optional[str]:
        return None


def quiet_queue(gpu_list: List[Dict[str, Any]], kernels: Dict[str, KernelProc]) -> GpuQueue:
    return GpuQueue(GpuSlots(list(gpu_list), "declared"), kernels, Timers(Clock()), QuietHost())


def holding(queue: GpuQueue, kernel_id: str, count: int) -> KernelProc:
    """A running kernel holding ``count`` of the queue's GPUs."""
    held = kernel(kernel_id, count)
    queue.kernels[kernel_id] = held
    queue.lease_gpus(held)
    held.state = "running"
    return held


def waiting(queue: GpuQueue, kernel_id: str, count: int) -> KernelProc:
    """A kernel queued for ``count`` GPUs."""
    queued = kernel(kernel_id, count)
    queue.kernels[kernel_id] = queued
    queue.join(queued)
    return queued
