"""Runs one cell's code in the kernel's persistent namespace, like IPython:
the value of a final expression is shown, tracebacks point at the cell's own
lines, and the kernel's own frames are hidden from them."""
from __future__ import annotations

import ast
import linecache
import os
import traceback
from dataclasses import dataclass
from typing import Any, Dict, Optional

from . import magic_syntax
from .magics import MagicError


@dataclass
class CellError:
    ename: str
    evalue: str
    traceback: list[str]


def cell_filename(count: int) -> str:
    return f"<cell [{count}]>"


def register_source(filename: str, code: str) -> None:
    # linecache lets tracebacks (and pdb, inspect) show the cell's lines.
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)


def run_code(code: str, namespace: Dict[str, Any], filename: str) -> tuple[bool, Any]:
    """Executes a cell (IPython syntax allowed); returns (has_value, value) for a trailing expression."""
    return run_python(magic_syntax.to_python(code), namespace, filename)


def run_python(code: str, namespace: Dict[str, Any], filename: str) -> tuple[bool, Any]:
    """Executes Python `code`; returns (has_value, value) for a trailing expression."""
    tree = ast.parse(code, filename=filename, mode="exec")
    trailing: Optional[ast.Expression] = None
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        tree.body.pop()
        trailing = ast.Expression(last.value)
    # dont_inherit: the cell must not get this module's `from __future__ import annotations`.
    exec(compile(tree, filename, "exec", dont_inherit=True), namespace)  # noqa: S102 - running user code is the point
    if trailing is None:
        return False, None
    return True, eval(compile(trailing, filename, "eval", dont_inherit=True), namespace)  # noqa: S307


KERNEL_DIR = os.path.dirname(os.path.abspath(__file__))


def describe_error(exc: BaseException) -> CellError:
    """The traceback a user needs: their frames only. A syntax error in the
    cell shows just the offending line, and a magic used wrongly just its
    message, as IPython does."""
    if isinstance(exc, MagicError):
        lines = [f"{type(exc).__name__}: {exc}"]
    elif isinstance(exc, SyntaxError) and (exc.filename or "").startswith("<cell ["):
        lines = traceback.format_exception_only(type(exc), exc)
    else:
        report = traceback.TracebackException.from_exception(exc)
        seen: set[int] = set()
        pending = [report]
        while pending:  # chained exceptions ("During handling of…") keep their own, filtered, stacks
            current = pending.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            current.stack = traceback.StackSummary.from_list(
                [frame for frame in current.stack if os.path.dirname(os.path.abspath(frame.filename)) != KERNEL_DIR]
            )
            pending.extend(chained for chained in (current.__cause__, current.__context__) if chained is not None)
        lines = list(report.format())
    text_lines = "".join(lines).rstrip("\n").split("\n")
    return CellError(ename=type(exc).__name__, evalue=str(exc), traceback=text_lines)
