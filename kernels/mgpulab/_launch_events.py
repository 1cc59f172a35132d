"""Who wants to hear of every finished launch in this process (stdlib only).

The scenario catalog's evidence recorder listens while an experiment cell
runs, so an experiment knows how each of its launches ended without the
cell's code having to pass them on.
"""
from __future__ import annotations

from typing import Any, Callable, List

Listener = Callable[[Any], None]
_listeners: List[Listener] = []


def listen(listener: Listener) -> Callable[[], None]:
    """Call ``listener(result)`` after each launch ends; returns what stops it."""
    _listeners.append(listener)

    def stop() -> None:
        if listener in _listeners:
            _listeners.remove(listener)
    return stop


def finished(result: Any) -> None:
    for listener in list(_listeners):
        listener(result)
