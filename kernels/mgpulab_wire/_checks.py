"""The checks the generated protocol module (``protocol_generated.py``) is made of.

Each check takes the value and ``where`` (``"metric message: run_id"``), and
returns the value with its wire type or raises :class:`ProtocolError` naming
the field and the limit. They mean what zod means on the server's side: a
string's length counts code points (Python's ``len``; zod 4 measures strings
in code points too), an integer is a JSON number without a fraction within
its bounds, a number is finite (JSON has no NaN).
"""
from __future__ import annotations

import math
import re
from typing import AbstractSet, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar

T = TypeVar("T")
L = TypeVar("L", bound=str)


class ProtocolError(ValueError):
    """A message the server would refuse: the text names the field and the limit."""


def _shown(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 12] + f"… ({len(text)} chars)"


def _kind(value: object) -> str:
    return "None" if value is None else type(value).__name__


def check_str(value: object, where: str, *, min_length: Optional[int] = None, max_length: Optional[int] = None,
              pattern: Optional["re.Pattern[str]"] = None) -> str:
    if not isinstance(value, str):
        raise ProtocolError(f"{where} must be a string, got {_kind(value)}")
    if max_length is not None or min_length is not None:
        length = len(value)
        if max_length is not None and length > max_length:
            raise ProtocolError(f"{where} must be at most {max_length} characters, got {length}")
        if min_length is not None and length < min_length:
            raise ProtocolError(f"{where} must be at least {min_length} characters, got {length}")
    if pattern is not None and pattern.search(value) is None:
        raise ProtocolError(f"{where} must match {pattern.pattern}, got {_shown(value)}")
    return value


def check_enum(value: object, where: str, choices: Tuple[L, ...]) -> L:
    for choice in choices:
        if value == choice and isinstance(value, str):
            return choice
    raise ProtocolError(f"{where} must be one of {', '.join(repr(c) for c in choices)}, got {_shown(value)}")


def check_int(value: object, where: str, minimum: Optional[int] = None, maximum: Optional[int] = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProtocolError(f"{where} must be an integer, got {_kind(value)}")
    if minimum is not None and value < minimum:
        raise ProtocolError(f"{where} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ProtocolError(f"{where} must be <= {maximum}, got {value}")
    return int(value)


def check_number(value: object, where: str, minimum: Optional[float] = None, maximum: Optional[float] = None, *,
                 exclusive_minimum: Optional[float] = None, exclusive_maximum: Optional[float] = None) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ProtocolError(f"{where} must be a number, got {_kind(value)}")
    if not math.isfinite(value):
        raise ProtocolError(f"{where} must be a finite number (JSON has no {value!r}), got {value!r}")
    if minimum is not None and value < minimum:
        raise ProtocolError(f"{where} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ProtocolError(f"{where} must be <= {maximum}, got {value}")
    if exclusive_minimum is not None and value <= exclusive_minimum:
        raise ProtocolError(f"{where} must be > {exclusive_minimum}, got {value}")
    if exclusive_maximum is not None and value >= exclusive_maximum:
        raise ProtocolError(f"{where} must be < {exclusive_maximum}, got {value}")
    return value


def check_bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise ProtocolError(f"{where} must be true or false, got {_kind(value)}")
    return value


def check_list(value: object, where: str, item: Callable[[object, str], T], *, min_items: Optional[int] = None,
               max_items: Optional[int] = None) -> List[T]:
    """A new list of the checked items (a list or a tuple: both are JSON arrays)."""
    if not isinstance(value, (list, tuple)):
        raise ProtocolError(f"{where} must be a list, got {_kind(value)}")
    if max_items is not None and len(value) > max_items:
        raise ProtocolError(f"{where} must have at most {max_items} items, got {len(value)}")
    if min_items is not None and len(value) < min_items:
        raise ProtocolError(f"{where} must have at least {min_items} items, got {len(value)}")
    out = []
    for index, element in enumerate(value):
        try:
            out.append(item(element, where))
        except ProtocolError:
            # Checked again with its index in the text: no string is built for a good item.
            item(element, f"{where}[{index}]")
            raise
    return out


def check_record(value: object, where: str, key: Callable[[object, str], str],
                 item: Callable[[object, str], T]) -> Dict[str, T]:
    """A new dict of the checked keys and values."""
    if not isinstance(value, Mapping):
        raise ProtocolError(f"{where} must be a dict, got {_kind(value)}")
    out = {}
    for name, element in value.items():
        try:
            out[key(name, where)] = item(element, where)
        except ProtocolError:
            key(name, f"{where} key")
            item(element, f"{where}[{_shown(name)}]")
            raise
    return out


def check_fields(value: object, where: str, required: Sequence[str], known: Optional[AbstractSet[str]]) -> Mapping[str, object]:
    """The object as a mapping with every required key; ``known`` (None: any) refuses other keys,
    as the server's schema would (it ignores them, so they would be lost without a word)."""
    if not isinstance(value, Mapping):
        raise ProtocolError(f"{where} must be a dict, got {_kind(value)}")
    missing = [name for name in required if name not in value]
    if missing:
        raise ProtocolError(f"{where} is missing {', '.join(repr(name) for name in missing)}")
    if known is not None and len(value) > len(required):
        unknown = [name for name in value if name not in known]
        if unknown:
            raise ProtocolError(f"{where} has unknown field(s) {', '.join(_shown(name) for name in unknown[:5])}")
    return value
