"""Values into template text as inert code and escaped markdown (mgpulab_scenarios.rendering)."""
from __future__ import annotations

import pytest

from mgpulab_scenarios.parameters import ParameterError
from mgpulab_scenarios.rendering import (PLACEHOLDER, dict_literal, literal, markdown_escape, render_markdown,
                                         render_text, table_cell, verdicts_template)


def test_literals_are_only_bools_ints_finite_floats_and_strings():
    assert [literal(v) for v in (True, 3, 0.5, "a'b")] == ["True", "3", "0.5", '"a\'b"']
    for bad in (float("nan"), [1], None):
        with pytest.raises(ParameterError):
            literal(bad)
    assert dict_literal({"a": 1, "b": "x"}) == "{'a': 1, 'b': 'x'}"


def test_render_text_fills_every_placeholder_and_refuses_one_without_a_value():
    assert render_text("n = {{ n }}; s = {{s}}", {"n": 2, "s": "cpu"}) == "n = 2; s = 'cpu'"
    with pytest.raises(ParameterError, match="'missing' has no parameter"):
        render_text("{{missing}}", {})
    assert PLACEHOLDER.findall("{{a}} {{ b }} {c}") == ["a", "b"]


def test_markdown_values_are_escaped_text_never_syntax():
    assert markdown_escape("*a* | [b](c)\nd") == r"\*a\* \| \[b\]\(c\) d"
    assert render_markdown("batch **{{b}}** on `{{p}}`", {"b": 64, "p": "<cpu>"}) == r"batch **64** on `\<cpu\>`"
    with pytest.raises(ParameterError):
        render_markdown("{{nope}}", {})
    assert table_cell("a | `b \\| c`\nd") == r"a \| `b \| c` d"


def test_the_verdicts_cell_reads_every_parameter_of_its_scenario():
    source = verdicts_template("hangs", ["world_size", "fault"])
    assert source == ("import mgpulab_scenarios\nmgpulab_scenarios.show_verdicts(mgpulab_scenarios.run('hangs', "
                      "{'world_size': {{world_size}}, 'fault': {{fault}}}))\n")
    assert render_text(source, {"world_size": 2, "fault": "none"}).endswith("{'world_size': 2, 'fault': 'none'}))\n")
