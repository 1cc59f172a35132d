"""Scenario params-not-updated: its small run and the manual-update verdict flipping with what the loop
touches."""
from __future__ import annotations

from mgpulab_scenarios.headless import run_scenario
from scenario_helpers import check_every_claim_has_a_verdict_from_its_numbers, verdict as _verdict

SCENARIO = "params-not-updated"  # the small run (conftest's small_run fixture) runs this one


def test_runs_headless_and_every_claim_has_a_verdict_from_its_numbers(small_run):
    check_every_claim_has_a_verdict_from_its_numbers(SCENARIO, small_run)


def test_manual_update_verdict_flips_with_what_the_loop_touches():
    primary = run_scenario("params-not-updated", {"manual_target": "module_children"}, only=["train"])
    replicas = run_scenario("params-not-updated", {"manual_target": "replicas"}, only=["train"])
    assert _verdict(primary, "manual-fails") == "does-not-hold"
    assert _verdict(replicas, "manual-fails") == "holds"
