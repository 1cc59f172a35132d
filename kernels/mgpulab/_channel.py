"""Local side channel between the launcher and its rank processes.

Each rank opens three connections to the launcher's Unix socket (in a private
0700 directory): ``out`` and ``err`` carry the rank's raw stdout/stderr bytes
(the launcher labels them ``[rank N]``), ``ctl`` carries length-prefixed
pickled control messages: ``("hello", pid)``, ``("beat", step)``,
``("ready",)`` (the rank reaches the code it was launched to run),
``("result", pickled_value)`` (pickled separately, so an unpicklable return value is
reported as such), ``("error", type_name, message, traceback)``. Under torchrun a
fourth connection, ``keeper``, comes from the rank's parent (``_rank_keeper``):
``("exit", status, monotonic_time, stopped_by_agent)`` once the rank has ended.
A connection starts with one handshake line holding the launch's random token;
the launcher drops connections whose token does not match before unpickling
anything from them.
"""
from __future__ import annotations

import pickle
import socket
import struct
import threading
from typing import Any, List, Optional, Tuple

MAGIC = b"MGL1"
_LENGTH = struct.Struct(">I")
MAX_MESSAGE = 1 << 30
KINDS = (b"out", b"err", b"ctl", b"keeper")


def handshake(token: str, kind: str, rank: int) -> bytes:
    return MAGIC + b" " + token.encode("ascii") + b" " + kind.encode("ascii") + b" " + str(rank).encode("ascii") + b"\n"


def parse_handshake(line: bytes) -> Tuple[str, str, int]:
    """(token, kind, rank) from a handshake line; ValueError when malformed."""
    parts = line.strip().split(b" ")
    if len(parts) != 4 or parts[0] != MAGIC or parts[2] not in KINDS:
        raise ValueError("malformed handshake")
    return parts[1].decode("ascii"), parts[2].decode("ascii"), int(parts[3])


def encode(message: Any) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(body)) + body


class Decoder:
    """Incremental decoder of length-prefixed pickles."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> List[Any]:
        self._buffer += data
        messages = []
        while len(self._buffer) >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(self._buffer)
            if length > MAX_MESSAGE:
                raise ValueError(f"control message of {length} bytes")
            end = _LENGTH.size + length
            if len(self._buffer) < end:
                break
            messages.append(pickle.loads(bytes(self._buffer[_LENGTH.size:end])))
            del self._buffer[:end]
        return messages


def connect(path: str, token: str, kind: str, rank: int) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.sendall(handshake(token, kind, rank))
    return sock


class RankChannel:
    """The rank side of the ``ctl`` connection (thread-safe sends)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._lock = threading.Lock()

    def send(self, message: Any) -> bool:
        """Send one message; False when the launcher is gone."""
        data = encode(message)
        with self._lock:
            try:
                self._sock.sendall(data)
            except OSError:
                return False
        return True

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass


_current: Optional[RankChannel] = None


def attach(channel: Optional[RankChannel]) -> None:
    global _current
    _current = channel


def current() -> Optional[RankChannel]:
    return _current
