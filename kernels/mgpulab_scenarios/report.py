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

from .core import clip

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
        return value if not isinstance(value, str) else clip(value, 300)
    if isinstance(value, int):
        return value if abs(value) < 2 ** 53 else float(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        # Full precision: the number must equal the charts' statistic of the same series (the UI rounds it for display).
        return value
    return clip(str(value), 300)


def _leaves(obj: Any, path: Path = (), depth: int = 0) -> Iterator[Tuple[Path, Any]]:
    if isinstance(obj, dict) and depth < 8:
        for key, value in obj.items():
            yield from _leaves(value, path + (key,), depth + 1)
    elif isinstance(obj, (list, tuple)) and depth < 8:
        for i, value in enumerate(obj):
            yield from _leaves(value, path + (i,), depth + 1)
    elif isinstance(obj, (dict, list, tuple)):
        yield path, clip(json.dumps(obj, default=str), 300)
    else:
        yield path, obj


def numbers(evidence: Any, reads: Sequence[Path] = (), limit: int = MAX_NUMBERS,
            sources: Optional[Dict[str, Dict[str, Any]]] = None) -> List[dict]:
    """``[{label, value, source?}]``: evidence leaves as scalars, at most ``limit``.

    The leaves the verdict read (``reads``, from :func:`call_tracked`) come
    first, then the others, each group in evidence order. A path read without
    any of its items read counts for every leaf under it (e.g. a list used
    whole). Labels join dict keys with ``.`` and write list items as ``name[i]``.
    A number read from the cell's metric series has its ``source`` (from the
    evidence record: variant tag, metric, ranks, steps, statistic); ``value``
    keeps full precision, so it equals that statistic (displays round it).
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
    out = []
    for index in order[:limit]:
        label = _label(leaves[index][0]) or "value"
        item: Dict[str, Any] = {"label": label, "value": _scalar(leaves[index][1])}
        source = (sources or {}).get(label)
        if source is not None:
            item["source"] = {k: v for k, v in source.items() if k != "value"}
        out.append(item)
    return out


SPREAD_KEYS = ("n", "min", "median", "max", "mean")


def _spread_label(evidence: Any, path: Path) -> str:
    """A spread's label as people read it: the variant's tag when the spread sits in a variant's record
    (``variants[1].step_ms`` -> ``DataParallel x2 · step_ms``), else its evidence path."""
    if len(path) >= 2:
        parent: Any = evidence
        for part in path[:-1]:
            try:
                parent = parent[part]
            except (KeyError, IndexError, TypeError):
                return _label(path)
        if isinstance(parent, dict) and isinstance(parent.get("tag"), str) and parent["tag"]:
            return f"{parent['tag']} · {path[-1]}"
    return _label(path)


def spreads(evidence: Any, reads: Sequence[Path] = ()) -> List[dict]:
    """``[{label, n, min, median, max, mean}]``: the timing spreads (``Observed.spread`` dicts) in the
    evidence that the verdict read (all of them when ``reads`` is empty), in evidence order."""
    read = set(reads)
    prefixes = {p[:i] for p in read for i in range(len(p) + 1)}
    out = []

    def walk(obj: Any, path: Path) -> None:
        if isinstance(obj, dict):
            if set(SPREAD_KEYS) <= set(obj) and all(isinstance(obj[k], (int, float)) for k in SPREAD_KEYS):
                if not reads or path in prefixes or any(path[:i] in read for i in range(len(path) + 1)):
                    out.append({"label": _spread_label(evidence, path), **{k: _scalar(float(obj[k])) if k != "n" else int(obj[k])
                                                          for k in SPREAD_KEYS}})
                return
            for key, value in obj.items():
                walk(value, path + (key,))
        elif isinstance(obj, list):
            for i, value in enumerate(obj):
                walk(value, path + (i,))

    walk(evidence, ())
    return out


# -- the report ----------------------------------------------------------------------------------

def _run_ref(run: Any) -> Optional[dict]:
    """Which cell and execution a claim's numbers came from, and the values they ran with."""
    if not isinstance(run, dict):
        return None
    return {"templateId": str(run["templateId"]), "cellId": _opt_str(run.get("cellId")),
            "executionId": _opt_str(run.get("executionId")),
            "count": run["count"] if isinstance(run.get("count"), int) else None,
            "recordedAt": str(run["recordedAt"]), "params": {str(k): v for k, v in run.get("params", {}).items()}}


def _opt_str(value: Any) -> Optional[str]:
    return None if value is None else str(value)


def verdict_report(result: dict) -> dict:
    """The JSON of ``VERDICTS_MIME`` from a :func:`mgpulab_scenarios.run` document (see
    ``server/protocol/verdict-model.ts``, which validates it)."""
    claims = []
    for claim in result.get("claims", []):
        nums = claim.get("numbers")
        if nums is None:
            nums = numbers(claim.get("evidence") or {})
        status = claim.get("status") or ("measured" if claim.get("verdict") is not None else "failed")
        claims.append({"id": str(claim["id"]), "quote": str(claim["quote"]), "experiment": str(claim["experiment"]),
                       "verdict": claim.get("verdict"), "status": str(status),
                       "explanation": str(claim.get("explanation", "")), "numbers": nums,
                       "spreads": list(claim.get("spreads") or []), "run": _run_ref(claim.get("run"))})
    experiments = []
    for e in result.get("experiments", []):
        status = e.get("status") or ("failed" if e.get("error") else "measured")
        experiments.append({"id": str(e["id"]), "title": str(e["title"]), "variants": [str(v) for v in e["variants"]],
                            "seconds": float(e.get("seconds") or 0.0),
                            "error": None if e.get("error") is None else str(e["error"]),
                            "status": str(status), "needed": bool(e.get("needed", True)),
                            "run": _run_ref(e.get("run")),
                            "expectedStacks": _opt_str((e.get("evidence") or {}).get("expected_stacks"))})
    return {
        "scenario": str(result["scenario"]), "title": str(result["title"]), "source": str(result["source"]),
        "deviceMode": str(result["deviceMode"]),
        "params": {str(k): v for k, v in result.get("params", {}).items()},
        "experiments": experiments,
        "claims": claims,
    }


def format_text(doc: dict) -> str:
    """A run's verdicts as the headless runner prints them (and a display's ``text/plain``)."""
    lines = [f"== {doc['scenario']}: {doc['title']}  [{doc['source']}]", f"   devices: {doc['deviceMode']}"]
    for exp in doc["experiments"]:
        status = exp.get("status") or ("failed" if exp["error"] else "measured")
        if exp["error"]:
            status = f"error: {exp['error']}"
        elif status == "needs-run":
            status = f"needs-run: {exp.get('why') or 'run its cell'}"
        elif status == "measured" and exp.get("run"):
            status = f"measured in execution {exp['run'].get('executionId') or '(unnamed)'}"
        lines.append(f"   experiment {exp['id']} ({exp['seconds']} s): {status}")
    for claim in doc["claims"]:
        lines.append("")
        lines.append(f"  > \"{claim['quote']}\"")
        shown = claim["verdict"] if claim["verdict"] is not None else claim.get("status")
        lines.append(f"    verdict: {str(shown).upper()}")
        lines.append(f"    because: {claim['explanation']}")
        for item in claim.get("spreads") or []:
            lines.append(f"    spread {item['label']}: min {item['min']:.4g}, median {item['median']:.4g}, max {item['max']:.4g} "
                         f"(n={item['n']})")
        if claim.get("evidence"):
            lines.append("    evidence: " + clip(json.dumps(claim["evidence"], sort_keys=True), 600))
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
