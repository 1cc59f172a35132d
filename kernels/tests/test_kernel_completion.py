"""Completion and inspection requests answered from a real kernel's namespace (jedi, and the plain fallback)."""
from __future__ import annotations

import pytest

from kernel_run import run_kernel

BOTH = pytest.mark.parametrize("without", ["", "jedi"], ids=["jedi", "rlcompleter"])


def _complete(code: str, cursor: int | None = None) -> dict:
    return {"type": "complete", "id": f"c{abs(hash((code, cursor)))}", "code": code, "cursor": len(code) if cursor is None else cursor}


@BOTH
def test_completion_offers_names_from_the_live_namespace(without):
    _, lab, local, magic = run_kernel(["import mgpulab as lab\nmy_value = 3", _complete("lab.la"), _complete("x = my_v"),
                                       _complete("%tim")], without)
    reply = lab.of("complete_reply")[0]
    assert "launch" in [m["text"] for m in reply["matches"]]
    assert (reply["cursorStart"], reply["cursorEnd"]) == (4, 6)
    assert [m["text"] for m in local.of("complete_reply")[0]["matches"]] == ["my_value"]
    assert [m["text"] for m in magic.of("complete_reply")[0]["matches"]] == ["%time", "%timeit"]


@BOTH
def test_positions_are_code_points(without):
    _, reply = run_kernel(["émoji_ß = 1", _complete("s = '😀'; émoji_", 15)], without)
    answer = reply.of("complete_reply")[0]
    assert [m["text"] for m in answer["matches"]] == ["émoji_ß"]
    assert answer["cursorStart"] == 9


@BOTH
def test_inspection_gives_signature_and_docstring(without):
    _, call, missing = run_kernel(['def area(w: float, h: float = 2.0) -> float:\n    """The area of a w×h rectangle."""\n    return w * h',
                                   {"type": "inspect", "id": "i1", "code": "area(3, ", "cursor": 8},
                                   {"type": "inspect", "id": "i2", "code": "nothing_here", "cursor": 3}], without)
    reply = call.of("inspect_reply")[0]
    assert reply["found"] is True
    assert "Signature: area(w: float, h: float = 2.0) -> float" in reply["text"] and "w×h rectangle" in reply["text"]
    assert missing.of("inspect_reply")[0] == {"type": "inspect_reply", "id": "i2", "found": False, "text": ""}


@BOTH
def test_a_cell_completes_from_its_own_import_before_it_runs(without):
    # Tab in a cell that has not run: `torch.` after `import torch as tt` on the line above. The module is loaded
    # (a guided scenario's kernel preloads torch), not in the namespace.
    loaded, reply = run_kernel(["import sys, importlib; importlib.import_module('json'); 'json' in sys.modules",
                                _complete("import json as jj\nx = jj.lo")], without)
    assert [m["text"] for m in reply.of("complete_reply")[0]["matches"]][:2] == ["load", "loads"]
