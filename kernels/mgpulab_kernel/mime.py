"""What an object looks like as display data: Jupyter's display protocol.

text/plain is always there (the repr). An object's ``_repr_html_``,
``_repr_markdown_``, ``_repr_latex_``, ``_repr_svg_``, ``_repr_png_``,
``_repr_jpeg_`` and ``_repr_json_`` add their types, and its
``_repr_mimebundle_()`` (a dict, or a ``(data, metadata)`` pair) adds or
overrides entries. Only an allow-list of types travels: the ones the notebook
renders, plus ``application/vnd.mgpulab.<name>+json``. Values must be strings
(images: base64 text or bytes; JSON types: a JSON text, or a dict/list that is
serialised here). Text is truncated like a repr; an image or JSON value over
the size cap is dropped rather than cut invalid. A matplotlib figure becomes a
PNG (mpl_inline.py), as IPython's inline backend shows it.
"""
from __future__ import annotations

import base64
import json
import re
import sys
from typing import Any, Mapping

from .outputs import MAX_REPR_CHARS

# The methods IPython's formatters call, in the order their types are added.
_REPR_METHODS = (
    ("_repr_png_", "image/png"),
    ("_repr_jpeg_", "image/jpeg"),
    ("_repr_svg_", "image/svg+xml"),
    ("_repr_html_", "text/html"),
    ("_repr_markdown_", "text/markdown"),
    ("_repr_latex_", "text/latex"),
    ("_repr_json_", "application/json"),
)
_ALLOWED = re.compile(r"text/plain|text/html|text/markdown|text/latex|image/png|image/jpeg|image/svg\+xml|application/json"
                      r"|application/vnd\.mgpulab\.[a-z0-9][a-z0-9.-]*\+json")
_BINARY = ("image/png", "image/jpeg")


def mime_bundle(value: Any) -> dict[str, str]:
    bundle = {"text/plain": truncated(safe_repr(value))}
    if isinstance(value, type):
        return bundle  # a class is shown by name, never rendered through its (unbound) repr methods
    figure = _matplotlib_figure_bundle(value)
    if figure is not None:
        return figure
    for method, mime in _REPR_METHODS:
        rendered = _call(value, method)
        if isinstance(rendered, tuple) and len(rendered) == 2:
            rendered = rendered[0]  # (data, metadata)
        if rendered is not None:
            _add(bundle, mime, rendered)
    data = _call(value, "_repr_mimebundle_")
    if isinstance(data, tuple) and len(data) == 2:
        data = data[0]  # (data, metadata)
    if isinstance(data, Mapping):
        bundle.update(filter_bundle(data))
    return bundle


def filter_bundle(data: Mapping[Any, Any]) -> dict[str, str]:
    """The entries of a raw mime dict (``publish_display_data``, ``_repr_mimebundle_``) that may travel."""
    kept: dict[str, str] = {}
    for mime, item in data.items():
        if isinstance(mime, str):
            _add(kept, mime, item)
    return kept


def _add(bundle: dict[str, str], mime: str, item: Any) -> None:
    if not _ALLOWED.fullmatch(mime):
        return
    if mime in _BINARY and isinstance(item, (bytes, bytearray)):
        item = base64.b64encode(item).decode("ascii")
    elif mime.endswith("json") and isinstance(item, (dict, list)):
        try:
            item = json.dumps(item, allow_nan=False, default=str)
        except (TypeError, ValueError):
            return
    if not isinstance(item, str):
        return
    if mime in _BINARY or mime.endswith("json"):
        if len(item) <= MAX_REPR_CHARS:  # cutting would make it invalid
            bundle[mime] = item
    else:
        bundle[mime] = truncated(item)


def _call(value: Any, method: str) -> Any:
    render = getattr(value, method, None)
    if not callable(render):
        return None
    try:
        return render()
    except Exception:  # noqa: BLE001 - a broken optional repr must not hide the plain one
        return None


def _matplotlib_figure_bundle(value: Any) -> "dict[str, str] | None":
    if "matplotlib.figure" not in sys.modules or not type(value).__module__.startswith("matplotlib"):
        return None
    from . import mpl_inline

    return mpl_inline.figure_bundle(value)


def safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:  # noqa: BLE001 - the repr of a user object can raise anything
        return f"<repr of {type(value).__name__} failed: {exc!r}>"


def truncated(text: str) -> str:
    if len(text) <= MAX_REPR_CHARS:
        return text
    return text[:MAX_REPR_CHARS] + f"\n… ({len(text) - MAX_REPR_CHARS} more characters not shown)"
