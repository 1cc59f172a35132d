"""Runs one cell's code in the kernel's persistent namespace, like IPython:
the value of a final expression is shown, tracebacks point at the cell's own
lines, and the kernel's own frames are hidden from them."""
from __future__ import annotations

import ast
import base64
import linecache
import os
import traceback
from dataclasses import dataclass
from typing import Any, Dict, Optional

MAX_REPR_CHARS = 1_000_000


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
    """Executes `code`; returns (has_value, value) for a trailing expression."""
    tree = ast.parse(code, filename=filename, mode="exec")
    trailing: Optional[ast.Expression] = None
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        tree.body.pop()
        trailing = ast.Expression(last.value)
    exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 - running user code is the point
    if trailing is None:
        return False, None
    return True, eval(compile(trailing, filename, "eval"), namespace)  # noqa: S307


def mime_bundle(value: Any) -> dict[str, str]:
    """text/plain always; image/png and text/html when the object offers them.

    An object's ``_repr_mimebundle_()`` (Jupyter's protocol; a dict, or a
    ``(data, metadata)`` pair) adds or overrides entries, for an allow-list
    of MIME types: text/plain, text/html, image/png, image/svg+xml,
    application/json and ``application/vnd.mgpulab.<name>+json``. Values must
    be strings (image/png: base64 text or bytes; JSON types: a JSON text, or
    a dict/list that is serialised here). Text is truncated like a repr; a
    JSON or PNG value over the size cap is dropped rather than cut invalid.
    Other types and values are ignored.
    """
    import json
    import re

    bundle = {"text/plain": _truncated(_safe_repr(value))}
    for method, mime, encode in (("_repr_png_", "image/png", True), ("_repr_html_", "text/html", False)):
        render = getattr(value, method, None)
        if not callable(render) or isinstance(value, type):
            continue
        try:
            rendered = render()
        except Exception:  # a broken optional repr must not hide the plain one
            continue
        if rendered is None:
            continue
        if encode and isinstance(rendered, (bytes, bytearray)):
            bundle[mime] = base64.b64encode(rendered).decode("ascii")
        elif isinstance(rendered, str):
            bundle[mime] = _truncated(rendered)

    render = getattr(value, "_repr_mimebundle_", None)
    if not callable(render) or isinstance(value, type):
        return bundle
    try:
        data = render()
    except Exception:  # a broken optional repr must not hide the plain one
        return bundle
    if isinstance(data, tuple) and len(data) == 2:
        data = data[0]  # (data, metadata)
    if not isinstance(data, dict):
        return bundle
    allowed = re.compile(r"text/plain|text/html|image/png|image/svg\+xml|application/json"
                         r"|application/vnd\.mgpulab\.[a-z0-9][a-z0-9.-]*\+json")
    for mime, item in data.items():
        if not isinstance(mime, str) or not allowed.fullmatch(mime):
            continue
        if mime == "image/png" and isinstance(item, (bytes, bytearray)):
            item = base64.b64encode(item).decode("ascii")
        elif mime.endswith("json") and isinstance(item, (dict, list)):
            try:
                item = json.dumps(item, allow_nan=False, default=str)
            except (TypeError, ValueError):
                continue
        if not isinstance(item, str):
            continue
        if mime == "image/png" or mime.endswith("json"):
            if len(item) <= MAX_REPR_CHARS:  # cutting would make it invalid
                bundle[mime] = item
        else:
            bundle[mime] = _truncated(item)
    return bundle


KERNEL_DIR = os.path.dirname(os.path.abspath(__file__))


def describe_error(exc: BaseException) -> CellError:
    """The traceback a user needs: their frames only. A syntax error in the
    cell shows just the offending line, as IPython does."""
    if isinstance(exc, SyntaxError) and (exc.filename or "").startswith("<cell ["):
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


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:  # the repr of a user object can raise anything
        return f"<repr of {type(value).__name__} failed: {exc!r}>"


def _truncated(text: str) -> str:
    if len(text) <= MAX_REPR_CHARS:
        return text
    return text[:MAX_REPR_CHARS] + f"\n… ({len(text) - MAX_REPR_CHARS} more characters not shown)"
