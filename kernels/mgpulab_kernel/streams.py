"""What `sys.stdout` and `sys.stderr` become inside the kernel.

stdout is written raw to the tty, line-buffered, so `print` output and the
bytes of child processes (which write to the same tty directly) arrive in the
order they were produced, and throughput is that of the tty. stderr is framed
so the notebook can tell it apart; before any frame is written, pending
stdout is flushed so the two never swap places.
"""
from __future__ import annotations

import io
import threading
from typing import Callable, Literal, Optional

from mgpulab_wire import frames
from mgpulab_wire import protocol_generated as wire

_STDERR_FLUSH_CHARS = 8192


def make_raw_stdout() -> io.TextIOWrapper:
    raw = io.FileIO(1, "w", closefd=False)
    # line_buffering flushes on "\n" and on "\r" (progress bars).
    return io.TextIOWrapper(
        io.BufferedWriter(raw, buffer_size=65536),
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
    )


class FramedStream(io.TextIOBase):
    """A text stream that sends what is written as `stream` frames."""

    def __init__(self, name: Literal["stdout", "stderr"], current_id: Callable[[], str], before_emit: Callable[[], None]):
        super().__init__()
        self._name = name
        self._current_id = current_id
        self._before_emit = before_emit
        self._pending: list[str] = []
        self._pending_chars = 0
        self._lock = threading.RLock()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        # C-level writers and subprocess(stderr=sys.stderr) get the raw tty.
        return 2

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self._lock:
            self._pending.append(text)
            self._pending_chars += len(text)
            if "\n" in text or "\r" in text or self._pending_chars >= _STDERR_FLUSH_CHARS:
                self.flush()
        return len(text)

    def flush(self) -> None:
        with self._lock:
            if not self._pending:
                return
            text = "".join(self._pending)
            self._pending.clear()
            self._pending_chars = 0
            self._before_emit()
            frames.emit(wire.stream_message(id=self._current_id(), name=self._name, text=text))


class NoStdin(io.TextIOBase):
    """`input()` in a cell gets a clear error instead of reading protocol bytes."""

    def readable(self) -> bool:
        return True

    def read(self, size: Optional[int] = -1) -> str:  # noqa: ARG002
        raise OSError("stdin is not available in a Multi-GPU Lab kernel; pass values as cell parameters")

    def readline(self, size: int = -1) -> str:  # type: ignore[override]  # noqa: ARG002
        return self.read()
