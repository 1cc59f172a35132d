"""The links to the lab: the Unix-socket connections bootstraps open, their line reading, their
framed writes, and the flow control between a kernel's buffered stream and its link.

Separate from the daemon because a link's job is bytes in order at a bounded pace, whatever the
requests mean: it splits request lines (and drops one past MAX_LINE), frames what the agent sends
with the link's nonce, and sends a kernel's stream at most LINK_HIGH_WATER ahead of what the
socket has taken (the rest waits in the kernel's bounded buffer, so a slow lab never grows the
agent). What a line asks and what a closed link means for its kernels is the daemon's, through
LinkEvents."""
from __future__ import annotations

import array
import os
import selectors
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Protocol

from mgpulab_wire import agent_protocol_generated as wire
from mgpulab_wire.frames import encode_frame

from .kernel_proc import KernelProc

LINK_HIGH_WATER = 1 << 20
MAX_LINE = 64 * 1024 * 1024
_FD_SIZE = array.array("i").itemsize
DIRECT = b"direct\n"
"""What a direct link's bootstrap hears once the agent took the lab's sockets (bootstrap.py)."""


@dataclass
class Link:
    sock: socket.socket
    """Where requests are read: the bootstrap's connection, or the lab's own socket once the link is direct."""
    rbuf: bytearray = field(default_factory=bytearray)
    wbuf: bytearray = field(default_factory=bytearray)
    nonce: Optional[str] = None
    closed: bool = False
    out: Optional[socket.socket] = None
    """Direct: the lab's socket frames are written to (``sock`` otherwise)."""
    relay: Optional[socket.socket] = None
    """Direct: the bootstrap's connection, which carries nothing more; its end is the link's end."""
    passed: List[int] = field(default_factory=list)
    """Descriptors the bootstrap sent with its first line (the lab's two sockets), until the link is named."""
    out_watched: bool = False

    def sockets(self) -> List[socket.socket]:
        """Every socket the link holds (one, or three once direct)."""
        return [sock for sock in (self.sock, self.out, self.relay) if sock is not None]


class LinkEvents(Protocol):
    def on_line(self, link: Link, line: bytes) -> None: ...

    def on_link_closed(self, link: Link) -> None: ...


class Links:
    def __init__(self, sel: selectors.BaseSelector, kernels: Dict[str, KernelProc], events: LinkEvents) -> None:
        self.sel = sel
        self.kernels = kernels
        """The agent's kernels (shared): a link that drains below high water resumes their streams."""
        self.events = events
        self.open: List[Link] = []
        # One receive buffer for every link: recv(1 MiB) would allocate (mmap) and free a megabyte per request.
        self._received = bytearray(1 << 20)

    def accept(self, listener: socket.socket) -> bool:
        """Takes every pending connection; True when there was one."""
        accepted = False
        while True:
            try:
                sock, _ = listener.accept()
            except BlockingIOError:
                return accepted
            sock.setblocking(False)
            link = Link(sock)
            self.open.append(link)
            self.sel.register(sock, selectors.EVENT_READ, ("link", link))
            accepted = True

    def on_event(self, link: Link, mask: int) -> None:
        if mask & selectors.EVENT_WRITE:
            self.flush(link)
        if mask & selectors.EVENT_READ and not link.closed:
            try:
                if link.nonce is None and link.relay is None:
                    size = self._receive_first(link)
                else:
                    size = link.sock.recv_into(self._received)
            except BlockingIOError:
                return
            except OSError:
                size = 0
            if size == 0:
                self.close(link)
                return
            link.rbuf += memoryview(self._received)[:size]
            while not link.closed:
                end = link.rbuf.find(b"\n")
                if end == -1:
                    if len(link.rbuf) > MAX_LINE:
                        link.rbuf.clear()
                        self.send(link, wire.agent_log_message(level="warning", message=f"a request line longer than {MAX_LINE} bytes was dropped"))
                    return
                line = bytes(link.rbuf[:end]).strip()
                del link.rbuf[: end + 1]
                if line:
                    self.events.on_line(link, line)

    def _receive_first(self, link: Link) -> int:
        """A read before the link is named: the bootstrap may send the lab's sockets with its first line."""
        size, ancillary, _flags, _address = link.sock.recvmsg_into([self._received], socket.CMSG_SPACE(2 * _FD_SIZE))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                usable = len(payload) - len(payload) % _FD_SIZE
                link.passed.extend(array.array("i", payload[:usable]))
        return size

    def go_direct(self, link: Link) -> bool:
        """Reads requests from and writes frames to the lab's own sockets, which the bootstrap passed
        (its stdin and stdout, when they are sockets: a local link), instead of through the bootstrap:
        two fewer process hops each way. The bootstrap's connection stays open only to say that the
        bootstrap lives, so killing it still drops the link (as a dropped ssh does). False, and the
        descriptors closed, when fewer or more than two came or they are not sockets."""
        passed, link.passed = link.passed, []
        if len(passed) != 2 or link.closed:
            for fd in passed:
                os.close(fd)
            return False
        try:
            inbound, outbound = (socket.socket(fileno=fd) for fd in passed)
        except OSError:  # not sockets: refused like any malformed first line
            for fd in passed:
                os.close(fd)
            return False
        inbound.setblocking(False)
        outbound.setblocking(False)
        self.sel.unregister(link.sock)
        link.relay, link.sock, link.out = link.sock, inbound, outbound
        self.sel.register(inbound, selectors.EVENT_READ, ("link", link))
        self.sel.register(link.relay, selectors.EVENT_READ, ("link-relay", link))
        link.relay.sendall(DIRECT)  # the bootstrap now only waits (an agent before direct links answers it a frame)
        return True

    def send(self, link: Optional[Link], message: Any) -> None:
        if link is None or link.closed or link.nonce is None:
            return
        link.wbuf += encode_frame(message, link.nonce)
        self.flush(link)

    def broadcast(self, message_for: Callable[[Link], Any]) -> None:
        for link in list(self.open):
            if link.nonce is not None:
                self.send(link, message_for(link))

    def flush(self, link: Link) -> None:
        out = link.out or link.sock
        while link.wbuf and not link.closed:
            try:
                sent = out.send(link.wbuf[: 1 << 20])
            except BlockingIOError:
                break
            except OSError:
                self.close(link)
                return
            del link.wbuf[:sent]
        if link.closed:
            return
        if link.out is None:
            self.sel.modify(link.sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if link.wbuf else 0), ("link", link))
        elif bool(link.wbuf) != link.out_watched:
            link.out_watched = bool(link.wbuf)
            if link.out_watched:
                self.sel.register(link.out, selectors.EVENT_WRITE, ("link", link))
            else:
                self.sel.unregister(link.out)
        if len(link.wbuf) < LINK_HIGH_WATER:
            for kernel in self.kernels.values():
                if kernel.link is link and kernel.cursor < kernel.buffer.last_seq:
                    self.pump(kernel)

    def pump(self, kernel: KernelProc) -> None:
        """Send the kernel's stream link what it has not been sent, up to the link's high water."""
        link = kernel.link
        if not isinstance(link, Link) or link.closed or link.nonce is None:
            return
        buffer = kernel.buffer
        while kernel.cursor < buffer.last_seq and len(link.wbuf) < LINK_HIGH_WATER:
            entry = buffer.get(kernel.cursor + 1)
            if entry is None:
                gap = buffer.gap(kernel.cursor)
                if gap is not None:
                    link.wbuf += encode_frame(wire.kernel_gap_message(
                        kernel=kernel.kernel_id, after_seq=gap.after_seq, resumed_from=gap.resumed_from,
                        dropped_messages=gap.dropped_messages, dropped_bytes=gap.dropped_bytes), link.nonce)
                kernel.cursor = buffer.first_seq - 1
                continue
            link.wbuf += encode_frame(entry.message, link.nonce)
            kernel.cursor = entry.seq
            buffer.sent_up_to = max(buffer.sent_up_to, entry.seq)
        if link.wbuf:
            self.flush(link)

    def resume(self, link: Link, kernel: KernelProc, after_seq: int) -> None:
        """The kernel's stream goes to ``link`` from after ``after_seq``; what is no longer buffered
        after it is reported by the pump as a kernel_gap first."""
        kernel.link = link
        kernel.cursor = min(after_seq, kernel.buffer.last_seq)
        self.pump(kernel)

    def close(self, link: Link) -> None:
        if link.closed:
            return
        link.closed = True
        for fd in link.passed:
            os.close(fd)
        for sock in link.sockets():
            try:
                self.sel.unregister(sock)
            except (KeyError, ValueError):
                pass
            sock.close()
        self.open.remove(link)
        self.events.on_link_closed(link)

    def last_words(self, seconds: float) -> None:
        """What is still buffered (kernel_exit, states) goes out before every link closes, bounded in time."""
        deadline = time.monotonic() + seconds
        for link in list(self.open):
            out = link.out or link.sock
            try:
                out.setblocking(True)
                out.settimeout(max(0.1, deadline - time.monotonic()))
                out.sendall(link.wbuf)
            except OSError:
                pass
            for sock in link.sockets():
                sock.close()
