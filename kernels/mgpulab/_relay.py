"""Launcher side of the rank channels: accept, label output, decode control messages.

Single-threaded: the launcher's supervision loop calls :meth:`RankIO.poll`.
"""
from __future__ import annotations

import codecs
import hmac
import os
import re
import selectors
import socket
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _channel

_LINE_END = re.compile(r"\r\n|\n|\r(?!$)")
IDLE_FLUSH_S = 0.3
MAX_HANDSHAKE = 256


class LineLabeller:
    """Prefix every line of a byte stream (``\\r`` too, so progress bars still redraw)."""

    def __init__(self, prefix: str, write: Callable[[str], None]) -> None:
        self.prefix = prefix
        self._write = write
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._partial = ""
        self._partial_since: Optional[float] = None
        self._mid_line = False  # a partial line (and its prefix) is already out

    def feed(self, data: bytes, now: Optional[float] = None) -> None:
        self._push(self._decoder.decode(data), time.monotonic() if now is None else now)

    def flush_idle(self, now: float, idle_s: float = IDLE_FLUSH_S) -> None:
        """Write an unfinished line that has waited ``idle_s`` (a prompt, ``print(end="")``)."""
        if self._partial and self._partial_since is not None and now - self._partial_since >= idle_s:
            self._write(self._lead() + self._partial)
            self._mid_line = not self._partial.endswith("\r")
            self._partial, self._partial_since = "", None

    def close(self) -> None:
        self._push(self._decoder.decode(b"", final=True), time.monotonic())
        if self._partial:
            self._write(self._lead() + self._partial + "\n")
            self._partial, self._mid_line = "", False

    def _push(self, text: str, now: float) -> None:
        buffer = self._partial + text
        pieces = []
        start = 0
        for match in _LINE_END.finditer(buffer):
            pieces.append(self._lead() + buffer[start:match.start()] + match.group())
            self._mid_line = False
            start = match.end()
        self._partial = buffer[start:]
        self._partial_since = (self._partial_since or now) if self._partial else None
        if pieces:
            self._write("".join(pieces))

    def _lead(self) -> str:
        return "" if self._mid_line else self.prefix


class _Conn:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.handshake = bytearray()
        self.rank: Optional[int] = None
        self.kind: Optional[str] = None
        self.labeller: Optional[LineLabeller] = None
        self.decoder: Optional[_channel.Decoder] = None


Event = Tuple[Optional[int], Any]  # (rank, message) — message is a ctl tuple, or ("eof",); rank None: not known yet


class RankIO:
    """Unix-socket server for ranks' ``out``/``err``/``ctl`` connections."""

    def __init__(self, path: str, token: str, write_out: Callable[[str], None],
                 write_err: Callable[[str], None]) -> None:
        self._token = token
        self._write = {"out": write_out, "err": write_err}
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        self._listener.listen(128)
        self._listener.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, None)
        self._conns: Dict[socket.socket, _Conn] = {}
        self._pipes: Dict[int, LineLabeller] = {}
        self._events: List[Event] = []
        self.rejected = 0

    def add_pipe(self, fd: int, labeller: LineLabeller) -> None:
        """Also relay a plain pipe (torchrun's own stderr)."""
        self._pipes[fd] = labeller
        self._selector.register(fd, selectors.EVENT_READ, fd)

    @property
    def open_streams(self) -> int:
        return len(self._conns) + len(self._pipes)

    def poll(self, timeout: float) -> List[Event]:
        for key, _ in self._selector.select(timeout):
            if key.fileobj is self._listener:
                self._accept()
            elif isinstance(key.data, int):
                self._read_pipe(key.data)
            else:
                self._read(key.fileobj)  # type: ignore[arg-type]
        events, self._events = self._events, []
        return events

    def flush_idle(self, now: float) -> None:
        for conn in self._conns.values():
            if conn.labeller is not None:
                conn.labeller.flush_idle(now)
        for labeller in self._pipes.values():
            labeller.flush_idle(now)

    def close(self) -> None:
        for sock in list(self._conns):
            self._drop(sock)
        for fd in list(self._pipes):
            self._close_pipe(fd)
        self._selector.unregister(self._listener)
        self._listener.close()
        self._selector.close()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            sock.setblocking(False)
            self._conns[sock] = _Conn(sock)
            self._selector.register(sock, selectors.EVENT_READ, "conn")

    def _read(self, sock: socket.socket) -> None:
        conn = self._conns[sock]
        try:
            data = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            if conn.rank is not None and conn.kind == "ctl":
                self._events.append((conn.rank, ("eof",)))
            self._drop(sock)
            return
        if conn.kind is None:
            rest = self._handshake(conn, data)
            if rest is None or conn.kind is None:
                return
            data = rest
        if conn.labeller is not None:
            conn.labeller.feed(data)
        elif conn.decoder is not None:
            try:
                messages = conn.decoder.feed(data)
            except Exception as error:  # a corrupt control stream: report it, drop the connection
                self._events.append((conn.rank, ("corrupt", f"{type(error).__name__}: {error}")))
                self._drop(sock)
                return
            self._events.extend((conn.rank, message) for message in messages)

    def _handshake(self, conn: _Conn, data: bytes) -> Optional[bytes]:
        conn.handshake += data
        end = conn.handshake.find(b"\n")
        if end < 0:
            if len(conn.handshake) > MAX_HANDSHAKE:
                self._reject(conn)
            return None
        line, rest = bytes(conn.handshake[:end + 1]), bytes(conn.handshake[end + 1:])
        try:
            token, kind, rank = _channel.parse_handshake(line)
        except ValueError:
            self._reject(conn)
            return None
        if not hmac.compare_digest(token.encode("ascii"), self._token.encode("ascii")):
            self._reject(conn)
            return None
        conn.rank, conn.kind = rank, kind
        if kind in ("ctl", "keeper"):
            conn.decoder = _channel.Decoder()
        else:
            conn.labeller = LineLabeller(f"[rank {rank}] ", self._write[kind])
        return rest

    def _reject(self, conn: _Conn) -> None:
        self.rejected += 1
        self._drop(conn.sock)

    def _drop(self, sock: socket.socket) -> None:
        conn = self._conns.pop(sock, None)
        if conn is not None and conn.labeller is not None:
            conn.labeller.close()
        try:
            self._selector.unregister(sock)
        except (KeyError, ValueError):
            pass
        sock.close()

    def _read_pipe(self, fd: int) -> None:
        try:
            data = os.read(fd, 65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._close_pipe(fd)
            return
        self._pipes[fd].feed(data)

    def _close_pipe(self, fd: int) -> None:
        labeller = self._pipes.pop(fd)
        labeller.close()
        self._selector.unregister(fd)
        os.close(fd)
