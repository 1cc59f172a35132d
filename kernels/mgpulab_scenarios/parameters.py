"""A scenario's typed parameter: its range or choices, how a value from the form or the command line is
checked (:meth:`Parameter.check`, :meth:`Parameter.parse`), and its JSON description for the form.

Separate from the scenario model (:mod:`.core`): a value is checked the same way wherever it comes from,
before any template sees it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from .wording import short_repr


class ParameterError(ValueError):
    """A parameter value is missing, of the wrong type, or out of range."""



@dataclass(frozen=True)
class Parameter:
    name: str
    type: str  # int | float | bool | choice
    default: Any
    help: str
    min: Optional[float] = None
    max: Optional[float] = None
    choices: Tuple[str, ...] = ()

    def allowed(self) -> str:
        if self.type == "bool":
            return "true or false"
        if self.type == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return f"a{'n' if self.type == 'int' else ''} {self.type} in [{self.min}, {self.max}]"

    def check(self, value: Any) -> Any:
        """The value as its Python type, or ParameterError naming the parameter and the allowed range."""
        bad = ParameterError(f"parameter {self.name!r} must be {self.allowed()}, got {short_repr(value)}")
        if self.type == "bool":
            if not isinstance(value, bool):
                raise bad
            return value
        if self.type == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise bad
            return value
        if self.type == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                else:
                    raise bad
            value = int(value)
        elif self.type == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise bad
            value = float(value)
            if not math.isfinite(value):
                raise bad
        else:  # pragma: no cover - definitions are checked at import
            raise bad
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            raise bad
        return value

    def parse(self, text: str) -> Any:
        """Parse command-line text (``name=value``) strictly, then :meth:`check` it."""
        text = text.strip()
        try:
            if self.type == "bool":
                lowered = text.lower()
                if lowered not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                value: Any = lowered in ("true", "1", "yes")
            elif self.type == "int":
                if not re.fullmatch(r"[+-]?\d+", text):
                    raise ValueError
                value = int(text)
            elif self.type == "float":
                if not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", text):
                    raise ValueError
                value = float(text)
            else:
                value = text
        except ValueError:
            raise ParameterError(f"parameter {self.name!r} must be {self.allowed()}, got {short_repr(text)}") from None
        return self.check(value)

    def to_dict(self) -> dict:
        out: Dict[str, Any] = {"name": self.name, "type": self.type, "default": self.default, "help": self.help}
        if self.type in ("int", "float"):
            out.update(min=self.min, max=self.max)
        if self.type == "choice":
            out["choices"] = list(self.choices)
        return out
