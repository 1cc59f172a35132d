"""Where display data goes: the running kernel registers its publisher here,
so library-facing modules (the matplotlib backend, IPython's display
functions) can show things without importing the kernel. Outside a kernel
(a rank process, a script) nothing is registered and nothing is shown."""
from __future__ import annotations

from typing import Callable, Optional

# The largest text a rich value may have: images and JSON over it are dropped, text is cut.
MAX_REPR_CHARS = 1_000_000

_publisher: Optional[Callable[[dict[str, str]], None]] = None


def set_publisher(publisher: Optional[Callable[[dict[str, str]], None]]) -> None:
    global _publisher
    _publisher = publisher


def publish(bundle: dict[str, str]) -> bool:
    """Shows `bundle` as display data of the running cell; False outside a kernel."""
    if _publisher is None:
        return False
    _publisher(bundle)
    return True
