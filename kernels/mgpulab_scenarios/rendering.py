"""Template text with validated values: ``{{name}}`` placeholders become Python literals in code
(:func:`render_text`) and escaped text in markdown (:func:`render_markdown`); the verdicts cell's source.

Separate from the scenario model (:mod:`.core`): this is the one place a value becomes source text, so a
parameter can never inject code or markdown syntax (only bool, int, finite float or an allowed string get
through :func:`literal`).
"""
from __future__ import annotations

import math
import re
from typing import Any, Dict, Sequence

from .parameters import ParameterError

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def literal(value: Any) -> str:
    """A validated value as Python source: only bool, int, finite float, or str."""
    if isinstance(value, bool) or isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ParameterError(f"non-finite float {value!r}")
        return repr(value)
    if isinstance(value, str):
        return repr(value)
    raise ParameterError(f"cannot render a {type(value).__name__} as a literal")


def dict_literal(values: Dict[str, Any]) -> str:
    """A flat dict of validated values as Python source."""
    return "{" + ", ".join(f"{literal(name)}: {literal(value)}" for name, value in values.items()) + "}"


def verdicts_template(scenario_id: str, parameter_names: Sequence[str]) -> str:
    """The verdicts cell: reads the evidence the experiment cells recorded with the cell's values (it never
    re-measures) and shows each claim's verdict, or which cell to run."""
    params = "{" + ", ".join(f"{literal(name)}: {{{{{name}}}}}" for name in parameter_names) + "}"
    return (f"import mgpulab_scenarios\n"
            f"mgpulab_scenarios.show_verdicts(mgpulab_scenarios.run({literal(scenario_id)}, {params}))\n")


def render_text(template: str, values: Dict[str, Any]) -> str:
    def sub(match: "re.Match[str]") -> str:
        name = match.group(1)
        if name not in values:
            raise ParameterError(f"template placeholder {name!r} has no parameter")
        return literal(values[name])
    return PLACEHOLDER.sub(sub, template)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>~])")


def markdown_escape(text: str) -> str:
    """``text`` as literal markdown text: every character markdown could read as syntax backslash-escaped
    (``|`` too, so a table cell survives it), line breaks as spaces."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def table_cell(markdown: str) -> str:
    """Authored markdown as one table cell: ``|`` escaped (GFM splits cells on it, even inside a code span;
    ``\\|`` is kept as a literal ``|`` there too), line breaks as spaces. Other markdown stays markdown."""
    return re.sub(r"(?<!\\)\|", r"\\|", " ".join(str(markdown).split()))


def markdown_value(value: Any) -> str:
    """A validated value as markdown text (``True``, ``64``, ``0.05``, ``cpu``): escaped, never syntax."""
    return markdown_escape(str(value))


def render_markdown(template: str, values: Dict[str, Any]) -> str:
    """Markdown with its ``{{name}}`` placeholders replaced by the values, as escaped text."""
    def sub(match: "re.Match[str]") -> str:
        name = match.group(1)
        if name not in values:
            raise ParameterError(f"template placeholder {name!r} has no parameter")
        return markdown_value(values[name])
    return PLACEHOLDER.sub(sub, template)
