"""IPython's display functions (``IPython.display.display``,
``publish_display_data``) print ``<IPython.core.display.HTML object>`` when no
IPython shell is running — and the kernel runs none (shell.py). Where IPython
is importable, the kernel routes them to its own display instead: the modules
that define them are patched as they are imported (an import hook, so that
``from IPython.display import display`` binds the kernel's), or at once when
already imported. IPython's display classes (HTML, Image, Markdown, Latex,
SVG, Math, JSON) need nothing: they implement the display protocol (mime.py).
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any, Callable, Mapping, Optional, Sequence

from . import mime, outputs

# display_functions is IPython 8's home of display(); 7.x defined it in core.display.
_DEFINING = ("IPython.core.display_functions", "IPython.core.display", "IPython.display")


def display(*objs: Any, raw: bool = False, **_options: Any) -> None:
    """IPython's signature; `include`, `exclude`, `metadata`, `display_id`… are accepted and ignored."""
    for obj in objs:
        if raw and isinstance(obj, Mapping):
            bundle = mime.filter_bundle(obj)
            if bundle:
                outputs.publish(bundle)
        else:
            outputs.publish(mime.mime_bundle(obj))


def publish_display_data(data: Mapping[str, Any], metadata: Any = None, source: Any = None, **_options: Any) -> None:  # noqa: ARG001
    bundle = mime.filter_bundle(data)
    if bundle:
        outputs.publish(bundle)


def clear_output(wait: bool = False) -> None:  # noqa: ARG001 - outputs of a running cell are not replaced here
    return None


_REPLACEMENTS: dict[str, Callable[..., Any]] = {
    "display": display,
    "publish_display_data": publish_display_data,
    "clear_output": clear_output,
}


def _patch(module: ModuleType) -> None:
    for name, replacement in _REPLACEMENTS.items():
        if hasattr(module, name):
            setattr(module, name, replacement)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Optional[ModuleType] = None) -> Optional[importlib.machinery.ModuleSpec]:  # noqa: ARG002
        if fullname not in _DEFINING:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            original(module)
            _patch(module)

        setattr(loader, "exec_module", exec_module)  # noqa: B010 - an instance attribute shadows the method for this spec only
        return spec


def install() -> None:
    if any(isinstance(finder, _PatchOnImport) for finder in sys.meta_path):
        return
    sys.meta_path.insert(0, _PatchOnImport())
    for name in _DEFINING:
        module = sys.modules.get(name)
        if module is not None:
            _patch(module)
