"""Verdict reports: the structured form of a headless run, and how the lab shows it.

:func:`verdict_report` turns :func:`mgpulab_scenarios.run`'s document into the
JSON the lab's verdict view reads (``VERDICTS_MIME``): per claim its verdict,
explanation and ``numbers`` — the experiment's evidence flattened to labelled
scalars, the ones the verdict function read first. :class:`VerdictsDisplay`
offers it with a ``text/plain`` rendering through ``_repr_mimebundle_``;
:func:`display` hands such an object to the lab kernel's ``display`` when
running inside it (one display output), and returns False elsewhere.

Which evidence a verdict read is recorded while it runs: the evidence is
passed as :class:`_TrackedDict` / :class:`_TrackedList` (subclasses of dict
and list that note each item read), see :func:`call_tracked`.
"""
from __future__ import annotations

import json
import math
import sys
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

VERDICTS_MIME = "application/vnd.mgpulab.verdicts+json"
MAX_NUMBERS = 40

Path = Tuple[Any, ...]  # dict keys (str) and list indices (int)


# -- which evidence a verdict reads -------------------------------------------------------------

class _TrackedDict(dict):
    """A dict that records the path of every item read (values wrapped on the way out)."""

    __slots__ = ("_path", "_reads")

    def __init__(self, data: dict, path: Path, reads: List[Path]) -> None:
        super().__init__(data)
        self._path, self._reads = path, reads

    def __getitem__(self, key: Any) -> Any:
        value = super().__getitem__(key)
        return _track(value, self._path + (key,), self._reads)

    def get(self, key: Any, default: Any = None) -> Any:
        if key in self:
            return self[key]
        return default


class _TrackedList(list):
    __slots__ = ("_path", "_reads")

    def __init__(self, data: list, path: Path, reads: List[Path]) -> None:
        super().__init__(data)
        self._path, self._reads = path, reads

    def __getitem__(self, index: Any) -> Any:
        value = super().__getitem__(index)
        if isinstance(index, slice):  # a slice reads those items as a whole
            start, stop, step = index.indices(len(self))
            for i in range(start, stop, step):
                self._reads.append(self._path + (i,))
            return value
        position = index if index >= 0 else len(self) + index
        return _track(value, self._path + (position,), self._reads)

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]


def _track(value: Any, path: Path, reads: List[Path]) -> Any:
    reads.append(path)
    if isinstance(value, dict):
        return _TrackedDict(value, path, reads)
    if isinstance(value, list):
        return _TrackedList(value, path, reads)
    return value


def call_tracked(fn: Callable[[Any], Any], evidence: dict) -> Tuple[Any, List[Path]]:
    """``fn(evidence)`` with reads recorded: (result, paths read, in order)."""
    reads: List[Path] = []
    return fn(_TrackedDict(evidence, (), reads)), reads


# -- evidence as labelled scalars ------------------------------------------------------------

def _label(path: Path) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value if not isinstance(value, str) or len(value) <= 300 else value[:297] + "…"
    if isinstance(value, int):
        return value if abs(value) < 2 ** 53 else float(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if value == 0 or value.is_integer() and abs(value) < 1e15:
            return value
        return float(f"{value:.4g}")
    return str(value)[:300]


def _leaves(obj: Any, path: Path = (), depth: int = 0) -> Iterator[Tuple[Path, Any]]:
    if isinstance(obj, dict) and depth < 8:
        for key, value in obj.items():
            yield from _leaves(value, path + (key,), depth + 1)
    elif isinstance(obj, (list, tuple)) and depth < 8:
        for i, value in enumerate(obj):
            yield from _leaves(value, path + (i,), depth + 1)
    elif isinstance(obj, (dict, list, tuple)):
        yield path, json.dumps(obj, default=str)[:300]
    else:
        yield path, obj


def numbers(evidence: Any, reads: Sequence[Path] = (), limit: int = MAX_NUMBERS) -> List[dict]:
    """``[{label, value}]``: evidence leaves as scalars, at most ``limit``.

    The leaves the verdict read (``reads``, from :func:`call_tracked`) come
    first, then the others, each group in evidence order. A path read without
    any of its items read counts for every leaf under it (e.g. a list used
    whole). Labels join dict keys with ``.`` and write list items as ``name[i]``.
    """
    leaves = list(_leaves(evidence))
    read_first: List[int] = []
    if reads:
        read = set(reads)
        prefixes = {p[:i] for p in read for i in range(len(p))}
        terminal = read - prefixes  # read, and none of its items read
        read_first = [index for index, (path, _) in enumerate(leaves)
                      if any(path[:i] in terminal for i in range(1, len(path) + 1))]
    chosen = set(read_first)
    order = read_first + [index for index in range(len(leaves)) if index not in chosen]
    return [{"label": _label(leaves[index][0]) or "value", "value": _scalar(leaves[index][1])}
            for index in order[:limit]]


# -- the report ----------------------------------------------------------------------------------

def verdict_report(result: dict) -> dict:
    """The JSON of ``VERDICTS_MIME`` from a :func:`mgpulab_scenarios.run` document."""
    claims = []
    for claim in result.get("claims", []):
        nums = claim.get("numbers")
        if nums is None:
            nums = numbers(claim.get("evidence") or {})
        claims.append({"id": str(claim["id"]), "quote": str(claim["quote"]), "experiment": str(claim["experiment"]),
                       "verdict": claim.get("verdict"), "explanation": str(claim.get("explanation", "")),
                       "numbers": nums})
    return {
        "scenario": str(result["scenario"]), "title": str(result["title"]), "source": str(result["source"]),
        "deviceMode": str(result["deviceMode"]),
        "params": {str(k): v for k, v in result.get("params", {}).items()},
        "experiments": [{"id": str(e["id"]), "title": str(e["title"]), "variants": [str(v) for v in e["variants"]],
                         "seconds": float(e["seconds"]), "error": None if e.get("error") is None else str(e["error"])}
                        for e in result.get("experiments", [])],
        "claims": claims,
    }


def format_text(doc: dict) -> str:
    """A run's verdicts as the headless runner prints them (and a display's ``text/plain``)."""
    lines = [f"== {doc['scenario']}: {doc['title']}  [{doc['source']}]", f"   devices: {doc['deviceMode']}"]
    for exp in doc["experiments"]:
        status = f"error: {exp['error']}" if exp["error"] else "ok"
        lines.append(f"   experiment {exp['id']} ({exp['seconds']} s): {status}")
    for claim in doc["claims"]:
        lines.append("")
        lines.append(f"  > \"{claim['quote']}\"")
        lines.append(f"    verdict: {str(claim['verdict']).upper()}")
        lines.append(f"    because: {claim['explanation']}")
        lines.append("    evidence: " + json.dumps(claim["evidence"], sort_keys=True)[:600])
    return "\n".join(lines)


class VerdictsDisplay:
    """A run's verdicts as a display object: ``text/plain`` and ``VERDICTS_MIME`` (JSON text)."""

    def __init__(self, result: dict) -> None:
        self.text = format_text(result)
        self.report = verdict_report(result)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Dict[str, str]:
        return {"text/plain": self.text,
                VERDICTS_MIME: json.dumps(self.report, ensure_ascii=False, allow_nan=False, default=str)}

    def __repr__(self) -> str:
        return self.text


def kernel_display() -> Optional[Callable[..., None]]:
    """The lab kernel's ``display`` when this code runs in it, else None (imported only if the kernel is)."""
    module = sys.modules.get("mgpulab_kernel.kernel")
    return module.current_display() if module is not None else None


def display(obj: Any) -> bool:
    """Show ``obj`` as one display output of the current cell; False outside the lab kernel."""
    show = kernel_display()
    if show is None:
        return False
    show(obj)
    return True
