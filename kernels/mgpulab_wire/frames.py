"""Messages out of a process as frames on the kernel's tty (TypeScript twin: the frame decoder).

Output frames are ``ESC ] mgl ; <nonce> ; <ASCII JSON> BEL`` written with a
single ``os.write`` so that frames from several processes sharing the tty (DDP
ranks) never interleave mid-frame. JSON is dumped with ``ensure_ascii`` so a
frame holds no control byte that could end it early and no multi-byte UTF-8.

The kernel configures it at boot, a rank process at start; the messages
themselves are built by the checking constructors of
:mod:`mgpulab_wire.protocol_generated`.
"""
from __future__ import annotations

import json
import os
import threading
from typing import Any, Callable, List, Mapping, Optional, Sequence

from . import protocol_generated as wire

FRAME_PREFIX = wire.FRAME_PREFIX.encode("ascii")
FRAME_END = wire.FRAME_END.encode("ascii")
BOOT_READY_MARKER = wire.BOOT_READY_MARKER.encode("ascii")

Sink = Callable[[wire.KernelMessage], None]
"""Receives each message instead of the tty (tests, plain Python)."""

_nonce: Optional[str] = None
_fd = 1
_sink: Optional[Sink] = None
_taps: List[Sink] = []
_write_lock = threading.Lock()
_HEX = frozenset("0123456789abcdef")


def configure(nonce: str, fd: int = 1) -> None:
    """Set the frame nonce for this process (the kernel at boot; a rank process at start)."""
    global _nonce, _fd
    if len(nonce) != wire.NONCE_HEX_LENGTH or not set(nonce) <= _HEX:
        raise ValueError(f"nonce must be {wire.NONCE_HEX_LENGTH} lowercase hex characters")
    _nonce, _fd = nonce, fd


def current_nonce() -> Optional[str]:
    """The nonce, so a launcher can hand it to the rank processes it starts."""
    return _nonce


def set_sink(sink: Optional[Sink]) -> None:
    """Capture messages in-process instead of writing frames (tests, plain Python)."""
    global _sink
    _sink = sink


def add_tap(tap: Sink) -> None:
    """Also hand every message this process sends to ``tap`` (before it is written or dropped).

    A tap only observes: the message still goes to the sink or the tty. The
    scenario evidence recorder uses one to see exactly the metric messages a
    cell sends for its charts, in and outside a kernel.
    """
    _taps.append(tap)


def remove_tap(tap: Sink) -> None:
    """Stop handing messages to ``tap`` (a tap not added is ignored)."""
    try:
        _taps.remove(tap)
    except ValueError:
        pass


def encode_frame(message: Mapping[str, Any], nonce: str) -> bytes:
    body = json.dumps(message, ensure_ascii=True, allow_nan=False, default=_json_default)
    return FRAME_PREFIX + nonce.encode("ascii") + b";" + body.encode("ascii") + FRAME_END


def emit(message: wire.KernelMessage) -> None:
    """Send one message to the server. Outside a kernel with no sink, it is dropped (taps still see it)."""
    for tap in tuple(_taps):  # a copy: a tap may be removed from another thread meanwhile
        tap(message)
    if _sink is not None:
        _sink(message)
        return
    if _nonce is None:
        return
    frame = encode_frame(message, _nonce)
    with _write_lock:
        _write_all(frame)


def emit_many(messages: Sequence[wire.KernelMessage]) -> None:
    """Send several messages in order, as one write when they go to the tty (a step timer's batch of
    step frames: one system call instead of one per step)."""
    if _taps or _sink is not None or _nonce is None:
        for message in messages:
            emit(message)
        return
    if not messages:
        return
    data = b"".join(encode_frame(message, _nonce) for message in messages)
    with _write_lock:
        _write_all(data)


def _write_all(data: bytes) -> None:
    # A frame is one os.write; a pty accepts a short write only under pressure,
    # and then the remainder follows before any other write from this process.
    view = memoryview(data)
    while view:
        written = os.write(_fd, view)
        view = view[written:]


def _json_default(value: Any) -> Any:
    # numpy / torch scalars and the like
    if hasattr(value, "item"):
        return value.item()
    return str(value)
