"""The catalog as a whole: one scenario per seed, claims quoted verbatim, templates that render to inert
Python, parameters that refuse hostile values, the command line, and every rendered cell run once."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

import mgpulab_scenarios as sc
from mgpulab_scenarios import ParameterError, VERDICTS
from mgpulab_scenarios.rendering import render_text
from scenario_helpers import HOSTILE, KERNELS, SEEDS


def test_catalog_has_one_scenario_per_seed():
    ids = [s["id"] for s in sc.catalog()]
    assert ids == ["dp-basics", "dp-not-starting", "params-not-updated", "incomplete-results-gil", "hangs"]
    sources = {s["source"] for s in sc.catalog()}
    assert len(sources) == 5
    for s in sc.catalog():
        assert s["claims"] and s["steps"] and s["parameters"] and s["experiments"]
        json.dumps(s)  # JSON-able for the server


@pytest.mark.skipif(not os.path.isdir(SEEDS), reason="seed articles not present")
@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_every_claim_is_quoted_verbatim(scenario_id):
    scenario = sc.get(scenario_id)
    with open(os.path.join(SEEDS, scenario.source), encoding="utf-8") as handle:
        article = handle.read()
    for claim in scenario.claims:
        assert claim.quote in article, f"{scenario_id}/{claim.id} is not verbatim"


@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_templates_render_to_valid_python_with_literals(scenario_id):
    scenario = sc.get(scenario_id)
    cells = [cell for step in scenario.steps for cell in step.cells]
    assert cells
    for cell in cells:
        source = sc.render(f"{scenario_id}/{cell.id}", {})
        assert "{{" not in source
        compile(source, f"<{scenario_id}/{cell.id}>", "exec")
    for step in scenario.steps:
        question, choices = scenario.question(step, {})
        assert question is None or "{" not in question and all("{" not in ch for ch in choices)


@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_every_parameter_rejects_hostile_and_out_of_range_values(scenario_id):
    scenario = sc.get(scenario_id)
    for p in scenario.parameters:
        with pytest.raises(ParameterError, match=re.escape(repr(p.name))):
            sc.validate(scenario_id, {p.name: HOSTILE})
        with pytest.raises(ParameterError, match=re.escape(repr(p.name))):
            sc.validate(scenario_id, {p.name: [1]})
        if p.type in ("int", "float"):
            with pytest.raises(ParameterError, match=r"in \["):
                sc.validate(scenario_id, {p.name: p.max + 1})
            with pytest.raises(ParameterError, match=re.escape(repr(p.name))):
                sc.validate(scenario_id, {p.name: p.min - 1})
            with pytest.raises(ParameterError):
                sc.validate(scenario_id, {p.name: True})  # a bool is not a number here
        if p.type == "float":
            with pytest.raises(ParameterError):
                sc.validate(scenario_id, {p.name: float("nan")})
        if p.type == "bool":
            with pytest.raises(ParameterError):
                sc.validate(scenario_id, {p.name: "True"})
        with pytest.raises(ParameterError):  # command-line text is parsed strictly too
            p.parse(HOSTILE)
    with pytest.raises(ParameterError, match="unknown parameter"):
        sc.validate(scenario_id, {"__import__('os')": 1})


def test_render_inserts_inert_literals_and_refuses_bad_values_before_rendering():
    src = sc.render("hangs/fault", {"fault": "none", "hang_timeout_s": 2.5})
    assert "fault='none'" in src and "hang_timeout_s=2.5" in src
    with pytest.raises(ParameterError, match=r"'fault' must be one of"):
        sc.render("hangs/fault", {"fault": HOSTILE})
    with pytest.raises(ParameterError, match=r"'devices' must be an int in \[1, 8\]"):
        sc.render("dp-basics/split", {"devices": "2); import os"})
    # even if a string reached the renderer it would be a quoted literal, never code
    rendered = render_text("x = {{v}}", {"v": HOSTILE})
    namespace: dict = {}
    exec(compile(rendered, "<t>", "exec"), namespace)
    assert namespace["x"] == HOSTILE
    with pytest.raises(ParameterError):
        render_text("x = {{v}}", {"v": object()})
    with pytest.raises(ParameterError, match="no parameter"):
        render_text("x = {{missing}}", {})


def test_cross_parameter_limit_devices_available():
    from mgpulab_scenarios.core import device_limit
    limit = device_limit()  # what the device plan serves on this host (more GPUs or cores: more devices)
    if limit < 8:  # the parameter's own maximum: only a host that serves fewer has a limit to refuse at
        with pytest.raises(ParameterError, match="exceeds the devices available here"):
            sc.validate("dp-basics", {"devices": limit + 1})
    assert sc.validate("dp-basics", {"devices": min(limit, 8)})["devices"] == min(limit, 8)
    assert sc.validate("dp-basics", {"devices": 1})["devices"] == 1
    with pytest.raises(sc.UnknownScenario):
        sc.validate("nope")


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=KERNELS)
    return subprocess.run([sys.executable, "-m", "mgpulab_scenarios.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_cli_refuses_bad_ids_and_params_before_running():
    bad = _cli("no-such-scenario")
    assert bad.returncode == 2 and "unknown scenario 'no-such-scenario'" in bad.stderr
    bad = _cli("dp-basics", "--param", f"devices={HOSTILE}")
    assert bad.returncode == 2 and "'devices' must be an int in [1, 8]" in bad.stderr
    bad = _cli("dp-basics", "--param", "devices=0")
    assert bad.returncode == 2 and "'devices'" in bad.stderr
    bad = _cli("dp-basics", "--param", "nope=1")
    assert bad.returncode == 2 and "unknown parameter 'nope'" in bad.stderr


def test_cli_json_is_one_clean_document():
    done = _cli("params-not-updated", "--json", "--param", "steps=2")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["scenario"] == "params-not-updated" and doc["deviceMode"]
    assert {c["verdict"] for c in doc["claims"]} <= set(VERDICTS)
    assert all({"id", "quote", "verdict", "evidence"} <= set(c) for c in doc["claims"])


CELL_DRIVER = r'''
import contextlib, io, json, sys, traceback
import mgpulab_scenarios as sc
params = json.loads(sys.argv[1])
failures = []
if __name__ == "__main__":
    for sid in sc.IDS:
        for step in sc.get(sid).steps:
            for cell in step.cells:
                source = sc.render(f"{sid}/{cell.id}", params[sid])
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        exec(compile(source, f"<{sid}/{cell.id}>", "exec"), {"__name__": "__cell__"})
                except Exception:
                    failures.append(f"{sid}/{cell.id}: {traceback.format_exc()[-400:]}")
    print(json.dumps(failures))
'''


def test_every_rendered_cell_executes():
    params = {
        "dp-basics": {"devices": 2, "batch_size": 8, "timing_repeats": 2},
        "dp-not-starting": {"devices": 2, "input_size": 16, "hidden_size": 16, "num_steps": 2},
        "params-not-updated": {"steps": 2},
        "incomplete-results-gil": {"samples": 40, "batch_size": 10, "repeats": 2, "sample_cost_ms": 0.0},
        "hangs": {"hang_timeout_s": 2.0, "pg_timeout_s": 2.0},
    }
    env = dict(os.environ, PYTHONPATH=KERNELS)
    done = subprocess.run([sys.executable, "-c", CELL_DRIVER, json.dumps(params)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_scenario_notebook_cells_compile_and_the_verdict_cell_prints_measured_verdicts(capsys):
    import ast

    import mgpulab_scenarios as sc
    from mgpulab_scenarios import evidence

    evidence.clear()  # a fresh kernel
    cells = sc.notebook("params-not-updated")
    code = [cell for cell in cells if cell["kind"] == "code"]
    for cell in code:
        ast.parse(cell["source"])
    assert all(cell["template"]["id"].startswith("params-not-updated/") for cell in code[:-1])
    namespace: dict = {}
    exec(compile(code[-1]["source"], "<verdict cell>", "exec"), namespace)  # noqa: S102 - the notebook's own cell
    printed = capsys.readouterr().out
    # nothing ran yet: no verdict is made up, each claim says which cell to run
    assert "verdict: NEEDS-RUN" in printed and "HOLDS" not in printed
    assert "Run the cell 'State mutated inside forward" in printed
    for cell in code:  # the participant runs every cell in order, the verdicts last
        exec(compile(cell["source"], f"<{cell['template']['id']}>", "exec"), namespace)  # noqa: S102
    printed = capsys.readouterr().out
    report = printed[printed.index("== params-not-updated"):]
    assert "NEEDS-RUN" not in report
    assert any(word in report for word in ("HOLDS", "DOES-NOT-HOLD", "PARTLY"))
