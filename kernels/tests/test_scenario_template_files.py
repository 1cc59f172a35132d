"""Scenario templates are real Python files (kernels/mgpulab_scenarios/templates/), so the
linter and the type checker read them; what they render is what the string templates rendered."""
from __future__ import annotations

import ast
import os
import re
import typing

import pytest

import mgpulab_scenarios as sc
from mgpulab_scenarios import ParameterError, core
from mgpulab_scenarios.templates import placeholders

TEMPLATE_FILES = sorted(name[:-3] for name in os.listdir(core.TEMPLATES_DIR)
                        if name.endswith(".py") and name not in ("__init__.py", "placeholders.py"))
HOSTILE = "1); import os; os.system('x')"


def _cells():
    """(scenario, cell, template file name) for every templated cell; the file is named after both."""
    for scenario_id in sc.IDS:
        scenario = sc.get(scenario_id)
        module = sc._MODULES[scenario_id]
        for step in scenario.steps:
            for cell in step.cells:
                yield scenario, cell, f"{module}_{cell.id.replace('-', '_')}"


def test_every_templated_cell_comes_from_its_file_and_every_file_is_used():
    used = []
    for scenario, cell, name in _cells():
        assert cell.template == core.load_template(name), f"{scenario.id}/{cell.id}"
        used.append(name)
    assert sorted(used) == TEMPLATE_FILES


@pytest.mark.parametrize("name", TEMPLATE_FILES)
def test_placeholders_in_a_file_are_the_scenarios_parameters_and_only_code(name):
    path = os.path.join(core.TEMPLATES_DIR, f"{name}.py")
    text = open(path, encoding="utf-8").read()
    scenario = next(s for s, _, n in _cells() if n == name)
    tree = ast.parse(text, filename=path)
    in_code = [node.attr for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "PARAM"]
    # every textual PARAM.x is a real attribute access (none hides in a string or a comment)
    assert len(in_code) == len(re.findall(r"\bPARAM\.", text)) and in_code
    assert set(in_code) <= {p.name for p in scenario.parameters}


def test_placeholder_types_are_the_parameters_types():
    hints = typing.get_type_hints(placeholders.PARAM)
    seen = {}
    for scenario_id in sc.IDS:
        for p in sc.get(scenario_id).parameters:
            expected = {"int": int, "float": float, "bool": bool}.get(p.type) or typing.Literal[p.choices]
            assert hints[p.name] == expected, p.name
            seen[p.name] = expected
    assert set(hints) == set(seen), "no placeholder without a parameter"


def test_a_hostile_value_never_becomes_code_in_a_file_template():
    with pytest.raises(ParameterError, match="'placement' must be one of"):
        sc.render("dp-basics/split", {"placement": HOSTILE})
    with pytest.raises(ParameterError, match=r"'devices' must be an int"):
        sc.render("dp-basics/split", {"devices": HOSTILE})
    source = sc.render("dp-basics/split", {"placement": "cpu", "devices": 2})
    assert "PARAM" not in source and "placeholders" not in source
    assert "batch_size, devices = 64, 2" in source and "placement='cpu'" in source
    compile(source, "<split>", "exec")


@pytest.mark.parametrize("text, words", [
    ("x = PARAM.batch_size\n", "a template starts with the line"),
    (core.TEMPLATE_HEADER + "x = {{batch_size}}\n", "write a placeholder as PARAM"),
    (core.TEMPLATE_HEADER + "p = PARAM\n", "write a placeholder as PARAM"),
])
def test_load_template_refuses_a_malformed_file(tmp_path, monkeypatch, text, words):
    (tmp_path / "bad.py").write_text(text, encoding="utf-8")
    monkeypatch.setattr(core, "TEMPLATES_DIR", str(tmp_path))
    with pytest.raises(ValueError, match=words):
        core.load_template("bad")


def test_load_template_reads_placeholders_as_template_text(tmp_path, monkeypatch):
    (tmp_path / "ok.py").write_text(core.TEMPLATE_HEADER + "PARAMETERS = PARAM.seed + PARAM.lr\n", encoding="utf-8")
    monkeypatch.setattr(core, "TEMPLATES_DIR", str(tmp_path))
    assert core.load_template("ok") == "PARAMETERS = {{seed}} + {{lr}}\n"
