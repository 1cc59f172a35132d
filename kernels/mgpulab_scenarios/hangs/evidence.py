"""Scenario 5 — why DataParallel and DDP "hang": what each experiment cell recorded, turned into its evidence dict.

Separate from the scenario's definition (``__init__``) and its verdicts (:mod:`.verdicts`): these
functions run when a cell finishes its recording (``Experiment.evidence``, see
:mod:`mgpulab_scenarios.evidence`), on that cell's own series and facts; the verdicts read only their result.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..observed import Observed
from ..wording import clip


def e_oom(o: Observed) -> Dict[str, Any]:
    p, f = o.params, o.facts
    n = p["world_size"]
    max_rows = max(0, int((p["device_memory_mib"] * 2 ** 20 - f["fixed_bytes"]) // f["bytes_per_row"]))
    return {"emulated": True, "devices": n, "batch_size": p["oom_batch_size"], "rows_per_device": f["rows_per_device"],
            "need_mib_per_device": f["need_mib_per_device"], "budget_mib": p["device_memory_mib"],
            "oom": f["error"] is not None, "error": f["error"], "seconds_to_outcome": f["seconds_to_outcome"],
            "hang_timeout_s": p["hang_timeout_s"], "max_batch_that_fits": max_rows * n}


def _stacks(ranks: List[Dict[str, Any]]) -> Optional[str]:
    parts = [f"rank {r['rank']} ({r['state']}):\n{r['stack'].rstrip()}" for r in ranks if r.get("stack")]
    return "\n\n".join(parts) if parts else None


def _rank_rows(ranks: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [{"rank": r["rank"], "state": r["state"], "last_step": r.get("last_step"), "where": r.get("where"),
             "error": clip(r["error"], 300) if r.get("error") else None} for r in ranks]


def e_oom_ddp(o: Observed) -> Dict[str, Any]:
    p = o.params
    out: Dict[str, Any] = {"world_size": p["world_size"], "hang_timeout_s": p["hang_timeout_s"]}
    stacks = []
    for action, outcome in o.facts["outcomes"].items():
        out[action] = {"status": outcome["status"], "summary": clip(outcome["summary"], 400),
                       "seconds": outcome["seconds"], "ranks": _rank_rows(outcome["ranks"])}
    for action in ("raise", "skip_batch"):
        if out.get(action, {}).get("status") == "hang":
            stacks.append(f"{action}: {out[action]['summary']}")
    out["expected_stacks"] = "\n".join(stacks) or None
    return out


def e_slow_link(o: Observed) -> Dict[str, Any]:
    p, f = o.params, o.facts
    per_rank = []
    for rank in o.ranks("baseline", "step_ms"):
        row: Dict[str, Any] = {"rank": rank}
        for phase in ("baseline", "delayed"):
            step, comm = o.spread(phase, "step_ms", [rank]), o.spread(phase, "comm_ms", [rank])
            row[phase] = {"step_ms": step, "comm_ms": comm,
                          "comm_share": comm["median"] / step["median"] if step and comm and step["median"] else 0.0}
        per_rank.append(row)
    return {"world_size": p["world_size"], "comm_delay_ms": p["comm_delay_ms"], "status": f["status"],
            "summary": clip(f["summary"], 400), "seconds": f["seconds"], "backend": f["backend"], "per_rank": per_rank,
            "loss_last": {phase: o.last(phase, "loss") for phase in ("baseline", "delayed")}}


def e_uneven(o: Observed) -> Dict[str, Any]:
    p, f = o.params, o.facts
    tag = f"DDP x{p['world_size']}"
    return {"world_size": p["world_size"], "batches": [[10, 20][r % 2] for r in range(p["world_size"])],
            "status": f["status"], "summary": clip(f["summary"], 400), "seconds": f["seconds"],
            "diverged": f["diverged"], "rows_compared": f["rows_compared"],
            "final_loss": o.last(tag, "loss"),
            "final_rank_loss": [o.last(tag, "rank_loss", [r]) for r in o.ranks(tag, "rank_loss")]}


def e_dtype(o: Observed) -> Dict[str, Any]:
    p, f = o.params, o.facts
    return {"world_size": p["world_size"], "hang_timeout_s": p["hang_timeout_s"], "dtypes": f["dtypes"],
            "status": f["status"], "summary": clip(f["summary"], 400), "seconds": f["seconds"],
            "ranks": _rank_rows(f["ranks"]), "diverged": f["diverged"],
            "expected_stacks": _stacks(f["ranks"]) if f["status"] == "hang" else None}


def e_fault(o: Observed) -> Dict[str, Any]:
    p, f = o.params, o.facts
    return {"world_size": p["world_size"], "fault": p["fault"], "hang_timeout_s": p["hang_timeout_s"],
            "sleep_s": p["sleep_s"], "status": f["status"], "summary": clip(f["summary"], 400), "seconds": f["seconds"],
            "ranks": _rank_rows(f["ranks"]),
            "expected_stacks": _stacks(f["ranks"]) if f["status"] == "hang" else None}


def e_fix(o: Observed) -> Dict[str, Any]:
    p, f = o.params, o.facts
    return {"world_size": p["world_size"], "fault": p["fault"], "fix": p["fix"], "status": f["status"],
            "summary": clip(f["summary"], 400), "seconds": f["seconds"], "steps_per_rank": f["steps_per_rank"]}


def e_collectives(o: Observed) -> Dict[str, Any]:
    p, f = o.params, o.facts
    tag = f"DDP x{p['world_size']}"
    return {"world_size": p["world_size"], "dp_process_group": f["dp_process_group"],
            "dp_backward_nodes": f["dp_backward_nodes"], "ddp_status": f["ddp_status"],
            "ddp_backend": f["ddp_backend"],
            "ddp_allreduces_per_step": [o.mean(tag, "allreduce_buckets", [r]) for r in o.ranks(tag, "allreduce_buckets")]}
