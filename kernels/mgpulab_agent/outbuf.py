"""A kernel's sequenced, bounded output buffer.

Every sequenced message (kernel_frame, kernel_console, kernel_bad_frame,
kernel_exit) gets the kernel's next number, from 1. The buffer keeps what the
lab has not acknowledged; ``ack`` drops up to a number; past ``limit`` bytes
(the size of each message's text or JSON, plus a small overhead) the oldest
messages are dropped and remembered as ranges, so a lab resuming from before
them is told how many messages and bytes it lost (``gap``).

Consecutive console chunks are coalesced into the last buffered message while
no link has been sent that message yet (``sent_up_to``): its number stays, the
numbers stay monotonic, and a message a lab has seen never changes.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Deque, Dict, List, Optional

# A message's fields besides its text, counted so that a flood of empty messages is bounded too.
_OVERHEAD = 64
# A console message grows by coalescing up to this many characters.
MAX_COALESCED_CHARS = 64 * 1024


@dataclass
class Entry:
    seq: int
    message: Dict[str, Any]
    size: int


@dataclass(frozen=True)
class Gap:
    after_seq: int
    resumed_from: int
    dropped_messages: int
    dropped_bytes: int


def _payload_size(message: Dict[str, Any]) -> int:
    for key in ("json", "text", "reason"):
        value = message.get(key)
        if isinstance(value, str):
            return len(value) + _OVERHEAD
    return _OVERHEAD


class SeqBuffer:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.last_seq = 0
        self.bytes = 0
        self._entries: Deque[Entry] = deque()
        # Dropped by the bound (not acknowledged): [first seq, last seq, bytes], oldest first.
        self._dropped: Deque[List[int]] = deque()
        self.sent_up_to = 0
        """The highest number written to any link: messages up to it never change."""

    @property
    def first_seq(self) -> int:
        """The oldest number still buffered (last_seq + 1 when none is)."""
        return self._entries[0].seq if self._entries else self.last_seq + 1

    def __len__(self) -> int:
        return len(self._entries)

    def append(self, message: Dict[str, Any]) -> Dict[str, Any]:
        """Number ``message`` (its "seq" is set here), keep it, and return it (or the message it joined)."""
        last = self._entries[-1] if self._entries else None
        if (message.get("type") == "kernel_console" and last is not None and last.seq > self.sent_up_to
                and last.message.get("type") == "kernel_console"
                and len(last.message["text"]) + len(message["text"]) <= MAX_COALESCED_CHARS):
            last.message["text"] += message["text"]
            grown = len(message["text"])
            last.size += grown
            self.bytes += grown
            self._bound()
            return last.message
        self.last_seq += 1
        message["seq"] = self.last_seq
        entry = Entry(self.last_seq, message, _payload_size(message))
        self._entries.append(entry)
        self.bytes += entry.size
        self._bound()
        return message

    def _bound(self) -> None:
        # The newest message always stays: the lab must at least see the last one (kernel_exit).
        while self.bytes > self.limit and len(self._entries) > 1:
            entry = self._entries.popleft()
            self.bytes -= entry.size
            if self._dropped and self._dropped[-1][1] == entry.seq - 1:
                self._dropped[-1][1] = entry.seq
                self._dropped[-1][2] += entry.size
            else:
                self._dropped.append([entry.seq, entry.seq, entry.size])

    def ack(self, seq: int) -> None:
        while self._entries and self._entries[0].seq <= seq:
            self.bytes -= self._entries.popleft().size
        while self._dropped and self._dropped[0][1] <= seq:
            self._dropped.popleft()

    def gap(self, after_seq: int) -> Optional[Gap]:
        """What a lab resuming after ``after_seq`` can no longer get, or None when nothing is missing."""
        first = self.first_seq
        if after_seq + 1 >= first:
            return None
        messages = 0
        dropped_bytes = 0
        for low, high, size in self._dropped:
            if high <= after_seq:
                continue
            count = high - low + 1
            lost = high - max(low, after_seq + 1) + 1
            messages += lost
            # A range the lab resumes from the middle of: its bytes in proportion (sizes are not kept per message).
            dropped_bytes += size if lost == count else size * lost // count
        return Gap(after_seq, first, messages, dropped_bytes)

    def get(self, seq: int) -> Optional[Entry]:
        """The buffered message numbered ``seq`` (numbers are contiguous from first_seq), or None."""
        index = seq - self.first_seq
        return self._entries[index] if 0 <= index < len(self._entries) else None
