"""Scenario dp-not-starting: its small run, the padding and custom-layer verdicts flipping with their
faults, and the DDP-needs-init verdict on synthetic evidence."""
from __future__ import annotations

from mgpulab_scenarios.headless import run_scenario
from scenario_helpers import (claim as _claim, check_every_claim_has_a_verdict_from_its_numbers,
                              verdict as _verdict)

SCENARIO = "dp-not-starting"  # the small run (conftest's small_run fixture) runs this one


def test_runs_headless_and_every_claim_has_a_verdict_from_its_numbers(small_run):
    check_every_claim_has_a_verdict_from_its_numbers(SCENARIO, small_run)


def test_padding_and_custom_layer_verdicts_flip_with_their_faults():
    ok = run_scenario("dp-not-starting", {"trim_padding": False, "weight_kind": "parameter"},
                only=["padded", "custom-layer"])
    bad = run_scenario("dp-not-starting", {"trim_padding": True, "weight_kind": "plain_tensor"},
                 only=["padded", "custom-layer"])
    assert _verdict(ok, "padded-errors") == "does-not-hold"
    assert _verdict(bad, "padded-errors") == "holds"
    assert "Gather got an input of invalid size" in next(c for c in bad["claims"] if c["id"] == "padded-errors")[
        "explanation"]
    assert _verdict(ok, "custom-layer") == "does-not-hold"
    assert _verdict(bad, "custom-layer") == "holds"


def test_ddp_needs_initialization_verdict_reaches_every_value():
    needs = _claim("dp-not-starting", "ddp-needs-init").verdict
    refused = {"ok": False, "error": "RuntimeError: Default process group has not been initialized"}
    built = {"ok": True, "error": None}
    rank = {"rank": 0, "initialized_before": False, "without_init": refused, "with_init": built}
    run = {"devices": 2, "status": "ok", "summary": "", "seconds": 1.0, "ranks": [rank, dict(rank, rank=1)]}
    value, text = needs(run)
    assert value == "holds" and "Default process group" in text
    assert needs(dict(run, ranks=[dict(rank, without_init=built)]))[0] == "does-not-hold"
    assert needs(dict(run, ranks=[rank, dict(rank, rank=1, with_init=refused)]))[0] == "partly"
    assert needs(dict(run, status="failed", ranks=[]))[0] == "inconclusive"
    assert needs(dict(run, ranks=[dict(rank, initialized_before=True)]))[0] == "inconclusive"  # not without a group
