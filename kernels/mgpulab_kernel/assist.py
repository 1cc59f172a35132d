"""Completion and inspection from the live namespace (Tab and Shift+Tab in
the editor, ``obj?`` in a cell).

Completion uses jedi where it is importable (it knows signatures and reads
the objects in the namespace), else the standard library's rlcompleter.
Inspection resolves the dotted name at (or the call around) the cursor by
attribute access only, never by evaluating an expression — still, attribute
access runs user code (properties), which is why asking needs "run" access.
Positions are in code points, as Python counts them.
"""
from __future__ import annotations

import builtins
import inspect
import re
import rlcompleter
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from mgpulab_wire import protocol_generated as wire

from . import optional

MAX_MATCHES = wire.MAX_COMPLETIONS
MAX_DOC_CHARS = 20_000

# A dotted name ending at the cursor. Identifiers start with any letter or "_" (`[^\W\d]`), not only ASCII ones:
# Python 3 names may be "émoji_ß".
_NAME_BEFORE = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*\.?$|\.$")
_MAGIC_BEFORE = re.compile(r"^[ \t]*(%%?)(\w*)$")
MAGIC_NAMES = ("time", "timeit", "env", "pwd", "who", "matplotlib")
CELL_MAGIC_NAMES = ("time", "timeit", "ranks")


@dataclass
class Match:
    text: str
    type: str


@dataclass
class Completion:
    matches: List[Match]
    cursor_start: int
    cursor_end: int


def imported_by(code: str) -> Dict[str, Any]:
    """The names the cell's own import statements bind, for modules this process has loaded already.

    Tab in a cell that has not run yet (``import torch`` on its first line,
    ``torch.`` on the next) completes from the module the line names, if it is
    in ``sys.modules`` (a guided scenario's kernel preloads torch and the
    toolkit): a live object, which jedi reads at once instead of analysing the
    module's source (seconds for torch). Nothing is imported here: a module
    not loaded yet is left to the static analysis, as before.
    """
    import ast
    import sys
    try:
        tree = ast.parse(code)
    except SyntaxError:  # the cell is being typed: read the complete import lines only
        lines = [line for line in code.splitlines() if re.match(r"\s*(import|from)\s", line)]
        try:
            tree = ast.parse("\n".join(line.strip() for line in lines))
        except SyntaxError:
            return {}
    bound: Dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in sys.modules:
                    bound[alias.asname] = sys.modules[alias.name]
                elif not alias.asname and alias.name.split(".")[0] in sys.modules:
                    bound[alias.name.split(".")[0]] = sys.modules[alias.name.split(".")[0]]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module in sys.modules:
            module = sys.modules[node.module]
            for alias in node.names:
                if alias.name != "*" and hasattr(module, alias.name):
                    bound[alias.asname or alias.name] = getattr(module, alias.name)
    return bound


def complete(code: str, cursor: int, namespace: Dict[str, Any]) -> Completion:
    cursor = max(0, min(cursor, len(code)))
    # What the cell imports (and this process has loaded) counts before the cell runs; the namespace wins.
    namespace = {**imported_by(code), **namespace}
    line_before = code[code.rfind("\n", 0, cursor) + 1:cursor]
    magic = _MAGIC_BEFORE.match(line_before)
    if magic:
        names = CELL_MAGIC_NAMES if magic.group(1) == "%%" else MAGIC_NAMES
        typed = magic.group(2)
        matches = [Match(magic.group(1) + name, "magic") for name in names if name.startswith(typed)]
        return Completion(matches, cursor - len(typed) - len(magic.group(1)), cursor)
    if optional.available("jedi"):
        try:
            return _jedi_complete(code, cursor, namespace)
        except Exception:  # noqa: BLE001 - jedi fails on odd code in odd ways; the plain completer still answers
            pass
    return _plain_complete(line_before, cursor, namespace)


def _jedi_complete(code: str, cursor: int, namespace: Dict[str, Any]) -> Completion:
    import jedi

    before = code[:cursor]
    line = before.count("\n") + 1
    column = cursor - (before.rfind("\n") + 1)
    found = jedi.Interpreter(code, [namespace]).complete(line, column)
    prefix = found[0].get_completion_prefix_length() if found else 0
    matches = [Match(item.name, item.type) for item in found
               if (not item.name.startswith("__") or before.endswith("_")) and len(item.name) <= wire.MAX_COMPLETION_CHARS]
    del matches[MAX_MATCHES:]
    return Completion(matches, cursor - prefix, cursor)


def _plain_complete(line_before: str, cursor: int, namespace: Dict[str, Any]) -> Completion:
    match = _NAME_BEFORE.search(line_before)
    text = match.group(0) if match else ""
    if text == "" or text == ".":
        return Completion([], cursor, cursor)
    completer = rlcompleter.Completer(namespace)
    found: List[Match] = []
    seen = set()
    state = 0
    while len(found) < MAX_MATCHES:
        candidate = completer.complete(text, state)
        state += 1
        if candidate is None:
            break
        candidate = candidate.rstrip("(")
        if candidate in seen or len(candidate) > wire.MAX_COMPLETION_CHARS or candidate.rsplit(".", 1)[-1].startswith("__") and not text.endswith("_"):
            continue
        seen.add(candidate)
        found.append(Match(candidate.rsplit(".", 1)[-1], "name"))
    # Matches replace the last dotted part only, as jedi's do.
    typed = text.rsplit(".", 1)[-1] if "." in text else text
    return Completion(found, cursor - len(typed), cursor)


# --- inspection ---------------------------------------------------------------

_IDENT_AFTER = re.compile(r"\w*")


def name_at(code: str, cursor: int) -> Optional[str]:
    """The dotted name under the cursor, or the callee of the call the cursor is in."""
    cursor = max(0, min(cursor, len(code)))
    end = cursor + len(_IDENT_AFTER.match(code, cursor).group(0))  # type: ignore[union-attr]
    match = _NAME_BEFORE.search(code[:end])
    if match and match.group(0).strip(".") and not code[:end].endswith("."):
        return match.group(0)
    depth = 0
    for i in range(cursor - 1, -1, -1):
        ch = code[i]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                if ch != "(":
                    return None
                callee = _NAME_BEFORE.search(code[:i].rstrip())
                return callee.group(0) if callee and not callee.group(0).endswith(".") else None
            depth -= 1
        elif ch == "\n" and depth == 0 and i > 0 and code[i - 1] != "\\" and not _inside_brackets(code, i):
            return None
    return None


def _inside_brackets(code: str, index: int) -> bool:
    return code.count("(", 0, index) > code.count(")", 0, index)


_MISSING = object()


def resolve(name: str, namespace: Dict[str, Any]) -> Any:
    """The object a dotted name stands for (attribute access only), or _MISSING."""
    first, *rest = name.split(".")
    obj = namespace.get(first, getattr(builtins, first, _MISSING))
    for part in rest:
        if obj is _MISSING:
            break
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - any attribute can raise
            return _MISSING
    return obj


def inspect_at(code: str, cursor: int, namespace: Dict[str, Any], detail: bool = False) -> Optional[str]:
    """What Shift+Tab shows: signature, type and docstring of the name at the cursor; None when there is nothing."""
    name = name_at(code, cursor)
    if name is None:
        return None
    obj = resolve(name, namespace)
    return None if obj is _MISSING else _describe(name, obj, detail)


def describe(name: str, namespace: Dict[str, Any], detail: bool = False) -> str:
    """``obj?`` (and ``obj??`` with `detail`: the source too)."""
    obj = resolve(name, namespace)
    if obj is _MISSING:
        return f"Object `{name}` not found."
    return _describe(name, obj, detail)


def _describe(name: str, obj: Any, detail: bool) -> str:
    lines = []
    signature = _signature(obj)
    if signature is not None:
        lines.append(f"Signature: {name}{signature}")
    lines.append(f"Type:      {type(obj).__name__}")
    if not inspect.isroutine(obj) and not inspect.isclass(obj):
        try:
            form = repr(obj)
        except Exception as exc:  # noqa: BLE001
            form = f"<repr failed: {exc!r}>"
        lines.append(f"String form: {form if len(form) <= 200 else form[:200] + '…'}")
    if detail:
        try:
            lines.append(f"File:      {inspect.getsourcefile(obj)}")
            lines.append("Source:\n" + inspect.getsource(obj))
        except (TypeError, OSError):
            pass
    doc = inspect.getdoc(obj)
    if doc and not (detail and "Source:\n" in lines[-1]):
        lines.append("Docstring:\n" + (doc if len(doc) <= MAX_DOC_CHARS else doc[:MAX_DOC_CHARS] + "\n…"))
    return "\n".join(lines)


def _signature(obj: Any) -> Optional[str]:
    if not callable(obj):
        return None
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return None
