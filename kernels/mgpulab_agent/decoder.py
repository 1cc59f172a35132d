"""Splits a kernel's PTY byte stream into its frames and its console text.

The Python twin of server/kernel/frame-decoder.ts: chunks may end anywhere
(inside the frame prefix, the nonce, the JSON or a UTF-8 sequence); a frame
with another nonce is never matched, so it stays console text; an oversized
frame is dropped and reported; console bytes are decoded as UTF-8
incrementally (a character split across reads is never mangled).
"""
from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import List, Union

from mgpulab_wire import agent_protocol_generated as agent_wire
from mgpulab_wire import protocol_generated as kernel_wire

_PREFIX = kernel_wire.FRAME_PREFIX.encode("ascii")
_END = kernel_wire.FRAME_END.encode("ascii")


@dataclass(frozen=True)
class Console:
    text: str


@dataclass(frozen=True)
class Frame:
    json: str


@dataclass(frozen=True)
class BadFrame:
    reason: str


Piece = Union[Console, Frame, BadFrame]


class FrameDecoder:
    def __init__(self, nonce: str, max_frame_bytes: int = agent_wire.MAX_AGENT_FRAME_CHARS) -> None:
        self._header = _PREFIX + nonce.encode("ascii") + b";"
        self._max = max_frame_bytes
        self._carry = b""
        self._in_frame = False
        self._skipping = False
        self._body: List[bytes] = []
        self._body_bytes = 0
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def push(self, chunk: bytes) -> List[Piece]:
        pieces: List[Piece] = []
        data = self._carry + chunk if self._carry else chunk
        self._carry = b""
        pos = 0
        while pos < len(data):
            pos = self._read_body(data, pos, pieces) if self._in_frame else self._read_text(data, pos, pieces)
        return pieces

    def end(self) -> List[Piece]:
        """End of stream: held-back bytes were text after all; an unfinished frame is reported."""
        pieces: List[Piece] = []
        if self._carry:
            self._text(self._carry, pieces)
        tail = self._utf8.decode(b"", final=True)
        if tail:
            pieces.append(Console(tail))
        if self._in_frame:
            pieces.append(BadFrame("stream ended inside a frame"))
        self._carry = b""
        self._reset()
        return pieces

    def _text(self, data: bytes, pieces: List[Piece]) -> None:
        text = self._utf8.decode(data)
        if text:
            pieces.append(Console(text))

    def _read_text(self, data: bytes, pos: int, pieces: List[Piece]) -> int:
        start = data.find(self._header, pos)
        if start != -1:
            if start > pos:
                self._text(data[pos:start], pieces)
            self._in_frame = True
            return start + len(self._header)
        held = self._partial_header_at_end(data, pos)
        text_end = len(data) - held
        if text_end > pos:
            self._text(data[pos:text_end], pieces)
        if held:
            self._carry = data[text_end:]
        return len(data)

    def _read_body(self, data: bytes, pos: int, pieces: List[Piece]) -> int:
        end = data.find(_END, pos)
        stop = len(data) if end == -1 else end
        if not self._skipping:
            self._body_bytes += stop - pos
            if self._body_bytes > self._max:
                self._skipping = True
                self._body = []
                pieces.append(BadFrame(f"frame larger than {self._max} bytes dropped"))
            else:
                self._body.append(data[pos:stop])
        if end == -1:
            return len(data)
        if not self._skipping:
            pieces.append(self._parse())
        self._reset()
        return end + 1

    def _parse(self) -> Piece:
        body = b"".join(self._body)
        try:
            return Frame(body.decode("ascii"))
        except UnicodeDecodeError:
            return BadFrame("frame is not ASCII JSON")

    def _reset(self) -> None:
        self._in_frame = False
        self._skipping = False
        self._body = []
        self._body_bytes = 0

    def _partial_header_at_end(self, data: bytes, pos: int) -> int:
        """Length of the longest suffix of data[pos:] that could begin a header."""
        window = max(pos, len(data) - (len(self._header) - 1))
        i = data.find(self._header[:1], window)
        while i != -1:
            tail = data[i:]
            if self._header.startswith(tail):
                return len(tail)
            i = data.find(self._header[:1], i + 1)
        return 0
