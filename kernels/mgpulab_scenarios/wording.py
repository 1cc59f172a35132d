"""How values and numbers are written into sentences: a verdict's numbers (:func:`fmt`), an error message's
value (:func:`short_repr`), a text cut to fit (:func:`clip`).

Separate from the scenario model (:mod:`.core`): the verdict functions, the report and the service all use
these, and none of them needs the model.
"""
from __future__ import annotations

from typing import Any


def clip(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, cut at a word boundary with an ellipsis, never mid-word."""
    text = str(text)
    if len(text) <= limit:
        return text
    cut = text[:max(0, limit - 1)]
    space = cut.rfind(" ")
    if space >= limit // 2:  # a boundary not too far back; else a very long "word" (a path) is cut
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"



def short_repr(value: Any, limit: int = 80) -> str:
    """``repr`` for error messages: one line, at most ``limit`` characters."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a value's repr must not break the error
        text = f"<{type(value).__name__}>"
    if len(text) > limit:
        text = text[:limit - 12] + f"… ({len(text)} chars)"
    return text



def fmt(value: Any, digits: int = 3) -> str:
    if isinstance(value, float):
        if value == 0 or 1e-3 <= abs(value) < 1e6:
            return f"{value:.{digits}g}"
        return f"{value:.2e}"
    return str(value)
