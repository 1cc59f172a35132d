"""A rank process's tie to the process that started it (stdlib only: the torchrun keeper uses it too)."""
from __future__ import annotations

import os
import signal
import sys


def die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent (launcher, keeper or torchrun agent) dies."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before prctl
        os._exit(1)
