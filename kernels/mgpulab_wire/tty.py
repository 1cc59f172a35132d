"""The terminal settings of a kernel's tty, in one place.

A kernel's tty is raw-ish: no line editing, no echo, no CR/LF translation in
either direction (frames and base64 request lines cross it byte for byte), but
ISIG on so Ctrl-C (0x03) and Ctrl-\\ (0x1c) reach every process on the tty as
SIGINT and SIGQUIT, and NOFLSH so such a signal never flushes a frame in
flight. The host agent applies it to each kernel's PTY.

``mgpulab_kernel/bootstrap.py`` and ``mgpulab_agent/bootstrap.py`` keep their
own copy of these lines: they travel as ``python3 -c <text>`` and run before
any package is unpacked, so they cannot import this module.
"""
from __future__ import annotations

import fcntl
import struct
import termios
from typing import List, Union

# The window size a kernel's tty reports, as the server's own PTYs (server/kernel/pty-process.ts):
# without one a PTY is 0×0, and progress bars (tqdm) that size themselves to it draw no bar.
KERNEL_TTY_ROWS = 40
KERNEL_TTY_COLS = 120

_Attrs = List[Union[int, List[Union[bytes, int]]]]


def raw_attrs(attrs: _Attrs, *, signals: bool) -> _Attrs:
    """``attrs`` (from ``termios.tcgetattr``) made raw-ish; ISIG and NOFLSH on when ``signals``."""
    iflag, oflag, cflag, lflag, ispeed, ospeed, cc = attrs
    assert isinstance(iflag, int) and isinstance(oflag, int) and isinstance(lflag, int) and isinstance(cc, list)
    iflag &= ~(termios.ICRNL | termios.INLCR | termios.IGNCR | termios.IXON | termios.IXOFF | termios.ISTRIP)
    oflag &= ~termios.OPOST
    lflag &= ~(termios.ICANON | termios.ECHO | termios.ECHONL | termios.IEXTEN)
    if signals:
        lflag |= termios.ISIG | termios.NOFLSH
    else:
        lflag &= ~termios.ISIG
    cc = list(cc)
    cc[termios.VMIN] = 1
    cc[termios.VTIME] = 0
    return [iflag, oflag, cflag, lflag, ispeed, ospeed, cc]


def set_raw(fd: int, *, signals: bool) -> None:
    """Apply :func:`raw_attrs` to the tty ``fd`` now."""
    termios.tcsetattr(fd, termios.TCSANOW, raw_attrs(termios.tcgetattr(fd), signals=signals))


def set_kernel_tty(fd: int) -> None:
    """A kernel's tty: raw-ish, with ISIG (Ctrl-C, Ctrl-\\ are signals) and NOFLSH, and a window size."""
    set_raw(fd, signals=True)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", KERNEL_TTY_ROWS, KERNEL_TTY_COLS, 0, 0))
