"""Templated cells: fields, questions, the verdicts cell, and the metrics the cells log for charts."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from mgpulab import gpu_monitor

import mgpulab_scenarios as sc
from mgpulab_scenarios import ParameterError
from mgpulab_scenarios.core import VERDICTS_CELL

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
NONCE = "0123456789abcdef0123456789abcdef"


def _code_cells(scenario_id, params=None):
    return [cell for cell in sc.notebook(scenario_id, params) if cell["kind"] == "code"]


@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_every_code_cell_carries_its_template(scenario_id):
    scenario = sc.get(scenario_id)
    order = [p.name for p in scenario.parameters]
    values = scenario.validate({})
    cells = _code_cells(scenario_id)
    assert [c["template"]["id"] for c in cells] == [f"{scenario_id}/{cid}" for cid in scenario.cell_ids()]
    for cell in cells:
        template = cell["template"]
        assert set(template) == {"id", "parameters", "fields", "question"}
        assert template["parameters"] == values  # all values: any change re-renders every cell
        cell_id = template["id"].split("/", 1)[1]
        used = set(PLACEHOLDER.findall(scenario.cell_source(cell_id)))
        names = [f["name"] for f in template["fields"]]
        assert set(names) == used and names == [n for n in order if n in used]  # scenario order
        for field in template["fields"]:
            assert field == scenario.effective(scenario.parameter(field["name"])).to_dict()
        assert cell["source"] == sc.render(template["id"], values)
        json.dumps(cell)


@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_questions_sit_on_the_first_cell_of_their_step_only(scenario_id):
    scenario = sc.get(scenario_id)
    values = scenario.validate({})
    by_cell = {c["template"]["id"]: c["template"]["question"] for c in _code_cells(scenario_id)}
    for step in scenario.steps:
        for i, cell in enumerate(step.cells):
            question = by_cell[f"{scenario_id}/{cell.id}"]
            if i == 0 and step.question is not None:
                text, choices = scenario.question(step, values)
                assert question == scenario.question_dict(step, values)
                assert {k: question[k] for k in ("id", "text", "choices")} == {
                    "id": f"{scenario_id}/{step.id}", "text": text, "choices": choices}
                assert set(question["claims"]) <= set(step.claims)  # the claims that decide it, of this step
                assert "{" not in question["text"]
            else:
                assert question is None
    assert by_cell[f"{scenario_id}/{VERDICTS_CELL}"] is None


def test_markdown_points_at_the_form_instead_of_listing_checkboxes():
    cells = sc.notebook("dp-basics")
    markdown = "\n".join(c["source"] for c in cells if c["kind"] == "markdown")
    assert "- [ ]" not in markdown
    assert "**Predict first:** With batch_size=64 on 4 devices" in markdown
    assert "form on the code cell below" in markdown


def test_questions_and_fields_follow_the_values():
    rendered = sc.render_template("dp-basics/scaling", {"devices": 2, "timing_repeats": 3})
    assert rendered["template"]["question"]["text"] == "With 2 devices, what speed-up over one device do you expect?"
    assert rendered["template"]["question"]["choices"][0] == "about 2x"
    assert "devices, steps = 2, 3 + 1" in rendered["source"]
    assert [f["name"] for f in rendered["template"]["fields"]] == [
        "batch_size", "devices", "placement", "hidden", "d_in", "lr", "seed", "timing_repeats", "compare_ddp"]


def test_the_verdicts_cell_is_templated_with_every_parameter():
    params = {"steps": 2, "manual_target": "replicas"}
    rendered = sc.render_template("params-not-updated/verdicts", params)
    scenario = sc.get("params-not-updated")
    values = scenario.validate(params)
    assert rendered["template"] == {"id": "params-not-updated/verdicts", "parameters": values,
                                    "fields": [p.to_dict() for p in scenario.parameters_here()], "question": None}
    assert rendered["source"] == (
        "import mgpulab_scenarios\n"
        "mgpulab_scenarios.show_verdicts(mgpulab_scenarios.run('params-not-updated', {'devices': 2, "
        "'placement': 'auto', 'batch_size': 64, 'input_size': 10, 'output_size': 5, 'steps': 2, 'lr': 0.05, "
        "'manual_target': 'replicas', 'seed': 0}))\n")
    assert sc.render("params-not-updated/verdicts", params) == rendered["source"]
    for scenario_id in sc.IDS:
        compile(sc.render(f"{scenario_id}/verdicts", {}), "<verdicts>", "exec")
    with pytest.raises(ParameterError, match="'manual_target' must be one of"):
        sc.render("params-not-updated/verdicts", {"manual_target": "x'); import os; ('"})


def test_unknown_templates_are_refused():
    with pytest.raises(sc.UnknownTemplate, match="has no cell 'nope'"):
        sc.render("dp-basics/nope")
    with pytest.raises(sc.UnknownTemplate, match="'<scenario>/<cell>'"):
        sc.render("dp-basics")
    with pytest.raises(sc.UnknownTemplate):
        sc.render("dp-basics/split/x")
    with pytest.raises(sc.UnknownScenario):
        sc.render("nope/split")


def test_device_defaults_and_maxima_follow_this_host(monkeypatch):
    from mgpulab_scenarios import core
    monkeypatch.setattr(core, "this_host", lambda: core.Host(gpus=0, cores=2))  # a 2-core host, no GPU
    fields = {f["name"]: f for f in sc.render_template("dp-basics/split")["template"]["fields"]}
    assert fields["devices"]["max"] == 4 and fields["devices"]["default"] == 4
    assert fields["placement"]["choices"] == ["auto", "cpu"] and fields["placement"]["default"] == "auto"
    assert sc.validate("dp-basics")["devices"] == 4  # the default is valid there
    with pytest.raises(ParameterError, match=r"exceeds the devices available here: .*the largest value that works "
                                             r"here is 4; allowed range \[1, 4\]"):
        sc.validate("dp-basics", {"devices": 8})
    monkeypatch.setattr(core, "this_host", lambda: core.Host(gpus=1, cores=2))  # one GPU: devices share it
    fields = {f["name"]: f for f in sc.render_template("dp-basics/split")["template"]["fields"]}
    assert fields["devices"]["max"] == 8 and fields["devices"]["default"] == 4
    assert sc.validate("dp-basics", {"devices": 8})["devices"] == 8
    assert sc.validate("hangs")["world_size"] == 2  # the default that a 1-GPU host refused before
    with pytest.raises(ParameterError, match="emulates at most 4 CPU devices"):
        sc.validate("dp-basics", {"devices": 8, "placement": "cpu"})  # the CPU emulation has its own bound


def test_cli_notebook_uses_the_same_cells():
    env = dict(os.environ, PYTHONPATH=KERNELS)
    done = subprocess.run([sys.executable, "-m", "mgpulab_scenarios.cli", "hangs", "--notebook", "--param",
                           "world_size=2"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(json.dumps(sc.notebook("hangs", {"world_size": 2})))


# -- metrics the cells log for the charts ----------------------------------------------------------

CELL_RUNNER = r'''
import json, sys
from mgpulab_wire import frames
import mgpulab_scenarios as sc
if __name__ == "__main__":
    frames.configure(sys.argv[1])  # frames on fd 1, as in the kernel; rank processes inherit it
    source = sc.render(sys.argv[2], json.loads(sys.argv[3]))
    exec(compile(source, "<cell>", "exec"), {"__name__": "__cell__"})
'''


def _run_cell(template_id, params):
    env = dict(os.environ, PYTHONPATH=KERNELS)
    done = subprocess.run([sys.executable, "-c", CELL_RUNNER, NONCE, template_id, json.dumps(params)],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    pattern = re.compile(rb"\x1b\]mgl;" + NONCE.encode() + rb";(.*?)\x07")
    frames = [json.loads(m.group(1)) for m in pattern.finditer(done.stdout)]
    return [f for f in frames if f["type"] == "metric" and "heartbeat" not in f["values"]]


def _cuda_host() -> bool:
    import torch
    return torch.cuda.is_available()


def test_scaling_cell_logs_variant_tagged_per_device_and_per_rank_metrics():
    metrics = _run_cell("dp-basics/scaling", {"devices": 2, "batch_size": 8, "timing_repeats": 2,
                                              "compare_ddp": True})
    by_tag = {}
    for m in metrics:
        by_tag.setdefault(m.get("runId"), []).append(m)
    gpus = by_tag.pop(gpu_monitor.TAG, [])  # a CUDA host's GPU samples, under their own tag
    assert all(set(m["values"]) == {"gpu_util_pct", "gpu_mem_mib"} for m in gpus)
    assert set(by_tag) == {"1 device", "DataParallel x2", "DDP x2"}
    steps = 3  # timing_repeats + the warm-up step
    phases = {"data_ms", "forward_ms", "backward_ms", "optimizer_ms", "step_ms", "samples"}
    for tag, ranks in (("1 device", [0]), ("DataParallel x2", [0, 1]), ("DDP x2", [0, 1])):
        rows = [m for m in by_tag[tag] if "step_ms" in m["values"]]  # the step timer's frames
        assert sorted({m["rank"] for m in rows}) == ranks, tag
        for rank in ranks:
            mine = [m for m in rows if m["rank"] == rank]
            assert sorted(m["step"] for m in mine) == list(range(steps)), (tag, rank)
            for m in mine:
                assert phases <= set(m["values"]), (tag, rank, m["values"])
                assert m["values"]["samples"] == (8.0 if tag == "1 device" else 4.0)
            # memory: every step on CPU; on a GPU the allocator is sampled at most every 0.1 s (the first
            # step's frame and the timer's last sample carry it), so not every step's frame has it
            memory = [m["values"]["memory_mib"] for m in by_tag[tag] if m["rank"] == rank and "memory_mib" in m["values"]]
            assert memory and all(v > 0 for v in memory), (tag, rank)
            if not _cuda_host():
                assert all("memory_mib" in m["values"] for m in mine), (tag, rank)
        # loss is the mean over the global batch in every variant, one line each: DDP's from rank 0
        loss_rows = [m for m in by_tag[tag] if "loss" in m["values"]]
        assert {m["rank"] for m in loss_rows} == {0} and sorted(m["step"] for m in loss_rows) == list(range(steps))
        assert all(m["values"]["loss"] is not None for m in loss_rows)
    ddp_ranks = {m["rank"] for m in by_tag["DDP x2"] if "rank_loss" in m["values"]}
    assert ddp_ranks == {0, 1}  # each rank's own shard loss, under its own name
    losses = {tag: [m["values"]["loss"] for m in sorted(by_tag[tag], key=lambda m: m["step"]) if "loss" in m["values"]]
              for tag in by_tag}
    assert losses["DDP x2"][0] == pytest.approx(losses["1 device"][0], rel=1e-5)  # same batch, same start
    assert all("comm_ms" in m["values"] for m in by_tag["DDP x2"] if "step_ms" in m["values"])  # all-reduced
    dp1 = [m["values"] for m in by_tag["DataParallel x2"] if m["rank"] == 1]
    assert all(v["optimizer_ms"] == 0.0 and v["forward_ms"] == v["apply_ms"] for v in dp1)
    dp0 = [m["values"] for m in by_tag["DataParallel x2"] if m["rank"] == 0]
    assert all({"scatter_ms", "replicate_ms", "gather_ms", "loss"} <= set(v) for v in dp0)


def test_step_timer_gives_every_data_parallel_device_its_phases():
    import torch
    from torch import nn

    import mgpulab as lab
    from mgpulab_wire import frames
    sent = []
    # Metric frames only (the timer also names its devices once, in a device_plan message).
    frames.set_sink(lambda message: sent.append(message) if message["type"] == "metric" else None)
    try:
        model = lab.DataParallel(nn.Linear(4, 2), device_ids=[0, 1, 2], placement="cpu")  # the CPU emulation anywhere
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        timer = lab.StepTimer(model, run_id="DataParallel x3")
        for step, x in enumerate(timer.data([torch.randn(9, 4)] * 2)):
            with timer.phase("forward"):
                loss = model(x).pow(2).mean()
            with timer.phase("backward"):
                loss.backward()
            with timer.phase("optimizer"):
                opt.step()
                opt.zero_grad()
            timer.step(step, loss=loss)
        timer.close()
    finally:
        frames.set_sink(None)
    assert [(m["step"], m["rank"]) for m in sent] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert {m["runId"] for m in sent} == {"DataParallel x3"}
    for m in sent:
        v = m["values"]
        for name in ("data_ms", "forward_ms", "backward_ms", "optimizer_ms", "step_ms", "samples", "memory_mib"):
            assert v[name] is not None, (m["rank"], name)
        assert v["samples"] == 3.0
        if m["rank"] > 0:
            assert v["forward_ms"] == v["apply_ms"] and v["optimizer_ms"] == 0.0 and "loss" not in v
            device0 = next(d["values"] for d in sent if d["step"] == m["step"] and d["rank"] == 0)
            assert v["step_ms"] == device0["step_ms"] and v["backward_ms"] == device0["backward_ms"]


@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_cells_tag_what_they_log(scenario_id):
    for cell_id in sc.get(scenario_id).cell_ids():
        source = sc.render(f"{scenario_id}/{cell_id}", {})
        for call in ("lab.StepTimer(", "lab.log(", "lab.launch("):
            for start in [m.start() for m in re.finditer(re.escape(call), source)]:
                chunk = source[start:source.find("\n", source.find(")", start))]
                if call == "lab.launch(" and "emit=True" not in source[start:start + 600]:
                    continue  # a launch whose ranks log nothing
                if call == "lab.launch(" and "ddp_comm" in chunk:
                    continue  # tags its frames "baseline" / "delayed" itself
                assert "run_id=" in source[start:start + 200], (cell_id, chunk)


# -- every cell a participant can run works as rendered --------------------------------------------

CELLS = [(sid, cid) for sid in sc.IDS for cid in sc.get(sid).cell_ids() if cid != "verdicts"]


@pytest.mark.parametrize("scenario_id,cell_id", CELLS, ids=[f"{s}/{c}" for s, c in CELLS])
def test_every_experiment_cell_runs_as_rendered_with_the_defaults(scenario_id, cell_id):
    """The verdicts run the experiments headless (tested elsewhere); these are the cells people run by hand."""
    _run_cell(f"{scenario_id}/{cell_id}", {})


# -- markdown cells: templated, explanations apart, tables that survive "|" ---------------------------

def _markdown_cells(scenario_id, params=None):
    return [cell for cell in sc.notebook(scenario_id, params) if cell["kind"] == "markdown"]


@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_every_markdown_cell_is_templated_and_re_renders_with_the_form(scenario_id):
    scenario = sc.get(scenario_id)
    values = scenario.validate({})
    cells = _markdown_cells(scenario_id)
    assert [c["template"]["id"] for c in cells] == [f"{scenario_id}/{m}" for m in scenario.markdown_ids()]
    claims = {claim.id for claim in scenario.claims}
    for cell in cells:
        template = cell["template"]
        assert template["parameters"] == values and template["fields"] == [] and template["question"] is None
        assert sc.render_template(template["id"], values) == {"source": cell["source"], "template": template}
        assert "{{" not in cell["source"]
        if template["id"].split("/", 1)[1].startswith("explain-"):
            step = next(s for s in scenario.steps if template["id"].endswith(f"/explain-{s.id}"))
            assert template["revealAfter"] == list(step.claims) and set(step.claims) <= claims
        else:
            assert set(template) == {"id", "parameters", "fields", "question"}


def test_text_that_quotes_values_follows_the_form():
    values = {"batch_size": 10, "devices": 3}
    about = sc.render("dp-basics/about-split", values)
    assert "With batch_size=10 on 3 devices" in about and "a batch of 10 rows over 3 devices" in about
    assert "64" not in about.split("**Claims tested here:**")[0]  # nothing stale from the defaults
    intro = sc.render("dp-basics/intro", values)
    assert "| `batch_size` | `10` |" in intro and "| `devices` | `3` |" in intro


def test_explanations_that_give_the_answer_away_are_their_own_cells():
    cells = {c["template"]["id"]: c["source"] for c in sc.notebook("dp-basics")}
    assert "torch.chunk" not in cells["dp-basics/about-split"] and "ceil" not in cells["dp-basics/about-split"]
    assert "ceil(B/n)" in cells["dp-basics/explain-split"]
    order = list(cells)
    assert order.index("dp-basics/split") < order.index("dp-basics/explain-split")  # after the experiment
    with pytest.raises(sc.UnknownTemplate, match="runs no experiment"):
        sc.experiment_of("dp-basics/explain-split")


def test_parameter_tables_escape_pipes_in_help_and_values():
    intro = sc.render("hangs/intro")
    rows = [line for line in intro.splitlines() if line.startswith("| `")]
    assert rows and any("\\|" in row for row in rows)  # the fault's help lists choices with "|"
    for row in rows:
        assert len(re.findall(r"(?<!\\)\|", row)) == 4, row  # three cells, whatever the help says


def test_every_question_says_which_verdicts_make_each_choice_the_measured_one():
    """A prediction is judged right or wrong beside the claims that decide it, and only those."""
    import mgpulab_scenarios as ms
    from mgpulab_scenarios.core import VERDICTS
    for summary in ms.catalog():
        sc = ms.get(summary["id"])
        claim_ids = {c.id for c in sc.claims}
        for step in sc.steps:
            if step.question is None:
                continue
            q = sc.question_dict(step, sc.validate({}))
            assert q is not None and len(q["outcomes"]) == len(q["choices"]), (sc.id, step.id)
            deciding = [claim for outcome in q["outcomes"] for claim in outcome]
            assert deciding and set(q["claims"]) == set(deciding) <= claim_ids, (sc.id, step.id)
            assert all(set(v) <= set(VERDICTS) for outcome in q["outcomes"] for v in outcome.values())
            # No verdict makes two choices the measured one.
            for claim in set(deciding):
                for verdict in VERDICTS:
                    matching = [i for i, o in enumerate(q["outcomes"]) if len(o) == 1 and verdict in o.get(claim, ())]
                    assert len(matching) <= 1, (sc.id, step.id, claim, verdict)
