"""Turns IPython syntax in a cell (``%magic``, ``%%cell_magic``, ``!cmd``,
``x = !cmd``, ``obj?``) into plain Python that calls the kernel's shell
(``get_ipython().run_line_magic(…)``), keeping every line where it was so
tracebacks point at the user's lines.

IPython's own TransformerManager does it where IPython is importable; without
it a small line-based fallback understands the same forms for whole lines.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from . import optional

# A cheap test first: most cells have no IPython syntax and skip the transformer.
_MAYBE_SPECIAL = re.compile(r"^[ \t]*[%!]|=[ \t]*[%!]|\?[ \t]*$", re.MULTILINE)

_transformer: Optional[Any] = None


def to_python(code: str) -> str:
    if not _MAYBE_SPECIAL.search(code):
        return code
    if optional.available("IPython"):
        return _ipython_transform(code)
    return fallback_transform(code)


def warm() -> None:
    """Load IPython's transformer now (if IPython is here), not on the first cell that needs it: a cell
    whose first line should print at once would otherwise wait for that import (a third of a second alone,
    seconds while a preload imports torch beside it)."""
    global _transformer
    if _transformer is None and optional.available("IPython"):
        from IPython.core.inputtransformer2 import TransformerManager

        _transformer = TransformerManager()


def _ipython_transform(code: str) -> str:
    global _transformer
    if _transformer is None:
        from IPython.core.inputtransformer2 import TransformerManager

        _transformer = TransformerManager()
    transformed: str = _transformer.transform_cell(code)
    # IPython ends the text with a newline; the line count is what matters.
    return transformed


_CELL_MAGIC = re.compile(r"%%([A-Za-z_]\w*)[ \t]*(.*)")
_LINE = re.compile(r"(?P<indent>[ \t]*)(?:(?P<target>[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)[ \t]*=[ \t]*)?"
                   r"(?P<kind>[%!])(?P<rest>.*)")
_HELP = re.compile(r"(?P<indent>[ \t]*)(?P<name>[A-Za-z_][\w.]*)(?P<marks>\?\??)[ \t]*")


def fallback_transform(code: str) -> str:
    """The fallback: the same calls as IPython's for whole-line forms outside strings and brackets."""
    first, newline, body = code.partition("\n")
    cell = _CELL_MAGIC.fullmatch(first.strip())
    if cell and first.lstrip().startswith("%%"):
        # One line stands for the whole cell; the magic runs the body with its own line numbers.
        return f"get_ipython().run_cell_magic({cell.group(1)!r}, {cell.group(2).strip()!r}, {body + newline!r})\n"
    out = []
    for line, starts_statement in zip(code.split("\n"), _statement_starts(code)):
        out.append(_transform_line(line) if starts_statement else line)
    return "\n".join(out)


def _transform_line(line: str) -> str:
    match = _LINE.fullmatch(line)
    if match:
        indent, target, kind, rest = match.group("indent", "target", "kind", "rest")
        assign = f"{target} = " if target else ""
        if kind == "!":
            call = f"get_ipython().{'getoutput' if target else 'system'}({rest.strip()!r})"
            return f"{indent}{assign}{call}"
        name, _, args = rest.partition(" ")
        if re.fullmatch(r"[A-Za-z_]\w*", name):
            return f"{indent}{assign}get_ipython().run_line_magic({name!r}, {args.strip()!r})"
        return line
    help_match = _HELP.fullmatch(line)
    if help_match:
        magic = "pinfo2" if help_match.group("marks") == "??" else "pinfo"
        return f"{help_match.group('indent')}get_ipython().run_line_magic({magic!r}, {help_match.group('name')!r})"
    return line


def _statement_starts(code: str) -> list[bool]:
    """Per line: does it start a statement (not inside a string, brackets or a backslash continuation)?"""
    starts = []
    depth = 0
    quote: Optional[str] = None
    continued = False
    for line in code.split("\n"):
        starts.append(depth == 0 and quote is None and not continued)
        continued = False
        i = 0
        while i < len(line):
            if quote is not None:
                if line.startswith("\\", i):
                    i += 2
                    continue
                if line.startswith(quote, i):
                    i += len(quote)
                    quote = None
                    continue
                i += 1
                continue
            ch = line[i]
            if ch == "#":
                break
            if ch in "\"'":
                quote = ch * 3 if line.startswith(ch * 3, i) else ch
                i += len(quote)
                continue
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth = max(0, depth - 1)
            i += 1
        if quote is not None and len(quote) == 1:
            quote = None  # a one-quote string cannot span lines (without a backslash): the line was odd, move on
        continued = line.endswith("\\") and quote is None
    return starts
