"""Scenario hangs: its small run, the OOM and deadlock verdicts flipping with their faults, a slow rank
that looks hung, the mixed-dtypes verdict, and the slow-link shares."""
from __future__ import annotations

import mgpulab_scenarios as sc
from mgpulab_scenarios.headless import run_scenario
from scenario_helpers import (claim as _claim, check_every_claim_has_a_verdict_from_its_numbers,
                              verdict as _verdict)

SCENARIO = "hangs"  # the small run (conftest's small_run fixture) runs this one


def test_runs_headless_and_every_claim_has_a_verdict_from_its_numbers(small_run):
    check_every_claim_has_a_verdict_from_its_numbers(SCENARIO, small_run)


def test_emulated_oom_verdict_flips_with_the_budget():
    fits = run_scenario("hangs", {"device_memory_mib": 64.0}, only=["oom"])
    oom = run_scenario("hangs", {"device_memory_mib": 0.5}, only=["oom"])
    assert _verdict(fits, "oom-hang") == "does-not-hold"
    assert _verdict(oom, "oom-hang") == "partly"
    assert "emulated OOM" in oom["experiments"][0]["evidence"]["error"]


def test_skipped_collective_is_detected_as_a_hang_and_the_clean_run_is_not():
    # CPU ranks on any host: the stack and timeout wording below are gloo's (an NCCL all_reduce returns
    # at once and the rank waits in the next sync instead; its timeout error reads differently)
    clean = run_scenario("hangs", {"fault": "none", "hang_timeout_s": 2.0, "placement": "cpu"}, only=["fault"])
    hung = run_scenario("hangs", {"fault": "skip_collective", "fix": "pg_timeout", "hang_timeout_s": 2.0,
                                  "pg_timeout_s": 2.0, "placement": "cpu"}, only=["fault", "fix"])
    assert _verdict(clean, "deadlock") == "does-not-hold"
    assert _verdict(hung, "deadlock") == "holds"
    fault, fix = (e["evidence"] for e in hung["experiments"])
    assert fault["status"] == "hang"
    wheres = [r["where"] or "" for r in fault["ranks"]]
    assert any("all_reduce" in w for w in wheres), wheres  # per-rank stacks say where each rank waited
    assert "all_reduce" in fault["expected_stacks"]  # the report can fold them: this experiment hangs on purpose
    assert fix["status"] == "failed" and "Timed out" in fix["summary"]
    assert [e["needed"] for e in hung["experiments"]] == [True, False]  # no claim reads the fix


def test_a_rank_slow_in_the_middle_of_training_looks_hung_but_a_slow_start_does_not():
    """slow_rank sleeps after rank 1's first step: past start-up, longer than hang_timeout_s, so the watchdog
    stops it as a hang although nothing is deadlocked (partly). The same sleep before the first step would be
    start-up, never a hang (test_toolkit_start_up.py)."""
    slow = run_scenario("hangs", {"fault": "slow_rank", "sleep_s": 5.0, "hang_timeout_s": 2.0, "placement": "cpu"},
                        only=["fault"])
    fault = slow["experiments"][0]
    assert fault["status"] == "measured" and fault["evidence"]["status"] == "hang", fault
    assert [r["last_step"] for r in fault["evidence"]["ranks"]] == [0, 0]  # both past their first step
    assert _verdict(slow, "deadlock") == "partly"


def test_mismatched_dtypes_verdict_reaches_every_value():
    dtype = _claim("hangs", "dtype-mismatch").verdict
    rank = {"rank": 0, "state": "failed", "last_step": None, "where": None, "error": "killed by SIGABRT"}
    failed = {"world_size": 2, "hang_timeout_s": 3.0, "dtypes": [None, None], "status": "failed",
              "summary": "rank 0 failed first: killed by SIGABRT", "seconds": 1.5, "diverged": [],
              "ranks": [rank, dict(rank, rank=1, error="RuntimeError: Connection reset by peer")],
              "expected_stacks": None}
    assert dtype(failed)[0] == "partly"
    stuck = [dict(rank, state="killed", where="all_reduce (distributed_c10d.py:1541)", error=None, last_step=0),
             dict(rank, rank=1, state="killed", where="wait (threading.py:324)", error=None, last_step=0)]
    assert dtype(dict(failed, status="hang", seconds=4.0, ranks=stuck))[0] == "holds"
    done = [dict(rank, state="ok", error=None, last_step=2), dict(rank, rank=1, state="ok", error=None, last_step=2)]
    ran = dict(failed, status="ok", dtypes=["float32", "float64"], ranks=done)
    assert dtype(ran)[0] == "does-not-hold"
    value, text = dtype(dict(ran, diverged=["0.weight"]))
    assert value == "does-not-hold" and "diverged" in text
    assert dtype(dict(ran, dtypes=["float32", "float32"]))[0] == "inconclusive"  # no mismatch was made
    # a run stopped by its time limit gives no verdict at all: the experiment failed (test_scenario_failures.py)
    provokes = sc.get("hangs").experiment("dtype-mismatch").provokes
    assert "time_limit" not in provokes and {"hang", "failed:collective", "failed:abort"} <= set(provokes)


def test_slow_link_shares_read_only_the_step_frames():
    """On CUDA the step timer closes with a memory sample of its own for the last step (memory is sampled at most
    every 0.1 s): a frame without step_ms, which broke slow-link on the H200 with KeyError: 'step_ms'."""
    from mgpulab_scenarios.rank_fns import comm_share
    records = [{"rank": r, "step": s, "values": {"step_ms": 10.0, "comm_ms": 4.0 + r}} for s in range(3) for r in (0, 1)]
    records.append({"rank": 0, "step": 2, "values": {"memory_mib": 1.0, "memory_peak_mib": 2.0}})
    assert comm_share(records, 0, range(1, 3)) == {"step_ms": 10.0, "comm_ms": 4.0, "comm_share": 0.4}
    assert comm_share(records, 1, range(1, 3))["comm_ms"] == 5.0
