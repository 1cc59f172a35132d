"""An experiment cell's claims are judged as it ends, in a real kernel, by the verdicts cell's own function.

The step report is one display output of the experiment cell (``scope``
"step"): the claims of that experiment only, their verdicts from its
evidence — the same as ``mgpulab_scenarios.run`` gives for that experiment —
and a cell that broke off gives its claims no verdict but the reason.
"""
from __future__ import annotations

import json

import mgpulab_scenarios as sc
from mgpulab_scenarios.report import VERDICTS_MIME

from kernel_run import run_kernel

SMALL = {"batch_size": 6, "devices": 4, "timing_repeats": 2}


def _step_reports(cell):
    return [json.loads(m["data"][VERDICTS_MIME]) for m in cell.of("display_data") if VERDICTS_MIME in m["data"]]


def test_an_experiment_cell_shows_the_verdicts_of_its_own_claims_as_it_ends():
    source = sc.render("dp-basics/split", SMALL)
    ran, verdicts = run_kernel([source, "import mgpulab_scenarios\nmgpulab_scenarios.run('dp-basics', "
                                f"{SMALL!r}, experiments=['split'])['claims']"])
    assert ran.status == "ok", ran.text
    [report] = _step_reports(ran)
    assert report["scope"] == "step" and report["scenario"] == "dp-basics"
    split_claims = [c.id for c in sc.get("dp-basics").claims if c.experiment == "split"]
    assert [c["id"] for c in report["claims"]] == split_claims
    assert [e["id"] for e in report["experiments"]] == ["split"]
    # 6 rows on 4 devices: uneven chunks, measured as the verdicts cell would say it.
    assert next(c for c in report["claims"] if c["id"] == "splits-evenly")["verdict"] == "partly"
    assert report["sourceTitle"] == sc.get("dp-basics").source_title
    # The verdicts cell's function, called afterwards in the same kernel, says the same of every claim.
    later = verdicts.of("execute_result")[0]["data"]["text/plain"]
    for claim in report["claims"]:
        assert f"'id': '{claim['id']}'" in later and f"'verdict': {claim['verdict']!r}" in later


def test_a_cell_that_breaks_off_gives_its_claims_no_verdict_but_why():
    source = sc.render("dp-basics/split", SMALL).replace("recorded = run.finish(", "raise RuntimeError('broke')\nrecorded = run.finish(", 1)
    [broke] = run_kernel([source])
    assert broke.status == "error"
    [report] = _step_reports(broke)
    assert report["claims"] and all(c["verdict"] is None and c["status"] in ("needs-run", "failed") for c in report["claims"])
    assert all(c["explanation"] for c in report["claims"])


def test_a_cell_that_records_nothing_shows_no_step_report():
    [plain] = run_kernel(["import mgpulab_scenarios\n1 + 1"])
    assert _step_reports(plain) == []
