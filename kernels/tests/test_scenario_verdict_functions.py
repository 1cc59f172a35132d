"""Verdict functions are functions of the evidence: on synthetic evidence each scenario's claims reach
more than one verdict."""
from __future__ import annotations

from scenario_helpers import claim as _claim, scaling as _scaling, timing as _timing


def test_verdict_functions_are_not_constant_on_synthetic_evidence():
    split = {"samples_per_device": [16, 16, 16, 16], "batch_size": 64, "devices": 4, "rows_scattered": 64}
    assert _claim("dp-basics", "splits-evenly").verdict(split)[0] == "holds"
    assert _claim("dp-basics", "splits-evenly").verdict(
        dict(split, samples_per_device=[2, 2, 2], batch_size=6, rows_scattered=6))[0] == "partly"

    # scaling: verdicts from the speed-up and the step-time spreads of the charts
    clear = _scaling(_timing(4.0, 4.1, 3.9, 4.05), _timing(1.6, 1.7, 1.5, 1.65), 2.5)
    assert _claim("dp-basics", "not-linear").verdict(clear)[0] == "holds"
    assert _claim("dp-basics", "myth-linear").verdict(clear)[0] == "does-not-hold"
    linear = _scaling(_timing(4.0, 4.1, 3.9), _timing(1.0, 1.05, 0.95), 4.0)
    assert _claim("dp-basics", "not-linear").verdict(linear)[0] == "does-not-hold"
    assert _claim("dp-basics", "myth-linear").verdict(linear)[0] == "holds"

    complete = {"rows_in": 100, "rows_out": 100, "completeness_pct": 100.0, "nonfinite_outputs": 0, "steps": 4,
                "devices": 2}
    assert _claim("incomplete-results-gil", "incomplete").verdict(complete)[0] == "does-not-hold"
    assert _claim("incomplete-results-gil", "incomplete").verdict(
        dict(complete, rows_out=90, completeness_pct=90.0))[0] == "holds"

    def overhead(single, dp, ddp):
        return {"devices": 2, "forward_kind": "python", "depth": 4, "batch_size": 10, "threads": ["a", "b"],
                "host_cores": 2, "variants": [{"tag": "1 device", "forward_ms": single, "per_rank_ms": [1.0]},
                                              {"tag": "DataParallel x2", "forward_ms": dp, "per_rank_ms": [2.5]},
                                              {"tag": "DDP x2", "forward_ms": ddp, "per_rank_ms": [1.0, 1.0]}]}

    gil = overhead(_timing(1.0, 1.05, 0.95), _timing(2.5, 2.6, 2.4), _timing(1.0, 1.1, 0.9))
    assert _claim("incomplete-results-gil", "gil-restricts").verdict(gil)[0] == "holds"
    same = overhead(_timing(1.0, 1.05, 0.95), _timing(1.0, 1.02, 0.98), _timing(1.0, 1.1, 0.9))
    assert _claim("incomplete-results-gil", "gil-restricts").verdict(same)[0] == "inconclusive"  # within the noise
    faster = overhead(_timing(1.0, 1.05, 0.95), _timing(0.5, 0.52, 0.48), _timing(1.0, 1.1, 0.9))
    assert _claim("incomplete-results-gil", "gil-restricts").verdict(faster)[0] == "does-not-hold"
    assert _claim("incomplete-results-gil", "ddp-avoids-gil").verdict(gil)[0] == "holds"
    slow_ddp = overhead(_timing(1.0, 1.05, 0.95), _timing(2.5, 2.6, 2.4), _timing(3.0, 3.1, 2.9))
    assert _claim("incomplete-results-gil", "ddp-avoids-gil").verdict(slow_ddp)[0] == "does-not-hold"

    backward = {"devices": 2, "replicas": 2, "backward_thread_concurrency": 1.0, "backward_replica_overlap": 1.8,
                "forward_concurrency": 1.6, "backward_threads": ["MainThread"], "forward_threads": ["r0", "r1"],
                "main_thread": "MainThread", "backward_ms": _timing(5, 5, 5), "optimizer_ms": _timing(1, 1, 1),
                "step_ms": _timing(9, 9, 9), "optimizer_devices": ["cpu"], "optimizer_tensors": 8,
                "plan": {"kind": "cpu-emulated", "label": "2x cpu", "gpus_used": 0}}
    assert _claim("incomplete-results-gil", "backward-sequential").verdict(backward)[0] == "partly"
    assert _claim("incomplete-results-gil", "gil-prevents-concurrency").verdict(backward)[0] == "does-not-hold"
    gpus = dict(backward, backward_threads=["dev0", "dev1"], backward_thread_concurrency=1.9,
                plan={"kind": "cuda", "label": "2x GPU", "gpus_used": 2})
    assert _claim("incomplete-results-gil", "backward-sequential").verdict(gpus)[0] == "does-not-hold"
    serial = dict(gpus, backward_thread_concurrency=1.0)
    assert _claim("incomplete-results-gil", "backward-sequential").verdict(serial)[0] == "holds"
    assert _claim("incomplete-results-gil", "gil-prevents-concurrency").verdict(serial)[0] == "partly"

    uneven = {"world_size": 2, "batches": [10, 20], "status": "ok", "summary": "", "seconds": 1.0, "diverged": [],
              "rows_compared": 4, "final_loss": 1.5, "final_rank_loss": [1.0, 2.0]}
    assert _claim("hangs", "uneven-batches").verdict(uneven)[0] == "does-not-hold"
    assert _claim("hangs", "uneven-batches").verdict(dict(uneven, status="hang", summary="stuck"))[0] == "holds"

    def link(baseline, delayed, comm0=2.0, comm1=52.0):
        return {"world_size": 2, "comm_delay_ms": 50.0, "status": "ok", "summary": "", "seconds": 1.0,
                "backend": "gloo", "per_rank": [{"rank": 0, "baseline": {"step_ms": baseline, "comm_ms": _timing(comm0, comm0, comm0),
                                                                         "comm_share": comm0 / baseline["mean"]},
                                                 "delayed": {"step_ms": delayed, "comm_ms": _timing(comm1, comm1, comm1),
                                                             "comm_share": comm1 / delayed["mean"]}}]}

    slow = link(_timing(10.0, 10.5, 9.5), _timing(60.0, 61.0, 59.0))
    assert _claim("hangs", "slow-link").verdict(slow)[0] == "partly"
    assert _claim("hangs", "waiting-dominates").verdict(slow)[0] == "holds"
    assert _claim("hangs", "stall-indefinitely").verdict(slow)[0] == "does-not-hold"
    flat = link(_timing(10.0, 10.5, 9.5), _timing(10.2, 10.4, 10.6), comm1=2.1)
    assert _claim("hangs", "slow-link").verdict(flat)[0] == "does-not-hold"
    noisy = link(_timing(10.0, 20.0, 30.0), _timing(12.0, 22.0, 31.0))
    assert _claim("hangs", "slow-link").verdict(noisy)[0] == "inconclusive"
    assert _claim("hangs", "slow-link").verdict(dict(slow, status="hang", summary="x"))[0] == "holds"

    state = {"devices": 2, "forwards": 3, "rows_per_device": [4, 4], "single": {"calls": 3, "rows_seen": 24.0},
             "dp": {"calls": 0, "rows_seen": 12.0}}
    assert _claim("params-not-updated", "updates-discarded").verdict(state)[0] == "partly"
    assert _claim("params-not-updated", "updates-discarded").verdict(
        dict(state, dp={"calls": 3, "rows_seen": 24.0}))[0] == "does-not-hold"

    fault = {"fault": "skip_collective", "sleep_s": 1.0, "hang_timeout_s": 3.0, "status": "hang", "seconds": 4.0,
             "summary": "", "ranks": [{"rank": 0, "state": "killed", "where": "all_reduce", "last_step": 3,
                                       "error": None}]}
    assert _claim("hangs", "deadlock").verdict(fault)[0] == "holds"
    assert _claim("hangs", "deadlock").verdict(dict(fault, fault="slow_rank"))[0] == "partly"  # slow, not deadlocked
    assert _claim("hangs", "deadlock").verdict(dict(fault, status="ok"))[0] == "does-not-hold"

    copied = {"devices": 2, "model_params": 10, "params_per_replica": [10, 10], "rows_per_replica": [2, 2], "rows": 4}
    assert _claim("dp-not-starting", "model-parallelism").verdict(copied)[0] == "does-not-hold"
    assert _claim("dp-not-starting", "model-parallelism").verdict(
        dict(copied, params_per_replica=[5, 5]))[0] == "holds"
