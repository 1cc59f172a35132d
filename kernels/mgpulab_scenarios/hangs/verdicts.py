"""Scenario 5 — why DataParallel and DDP "hang": each claim's verdict, a pure function of its experiment's evidence dict.

Separate from the measurement (:mod:`.evidence`) so a verdict can be read, and tested, on evidence alone:
it never measures, it reads the numbers of the run the participant watched.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .. import stats
from ..stats import as_spread
from ..vocabulary import Verdict
from ..wording import clip, fmt


def v_oom_hang(e: Dict[str, Any]) -> Verdict:
    text = (f"batch {e['batch_size']} on {e['devices']} devices needs {[fmt(v) for v in e['need_mib_per_device']]} "
            f"MiB each vs an emulated budget of {fmt(e['budget_mib'])} MiB; outcome after "
            f"{fmt(e['seconds_to_outcome'])} s")
    if not e["oom"]:
        return "does-not-hold", text + f": it fit (up to {e['max_batch_that_fits']} rows fit) — no error, no hang"
    if e["seconds_to_outcome"] >= e["hang_timeout_s"]:
        return "holds", text + ": the error took longer than the hang threshold"
    return "partly", text + ": an out-of-memory error, raised at once — a crash, not a hang"


def v_oom_silent(e: Dict[str, Any]) -> Verdict:
    text = f"budget {fmt(e['budget_mib'])} MiB, need {[fmt(v) for v in e['need_mib_per_device']]} MiB per device"
    if not e["oom"]:
        return "partly", text + ": memory was not exhausted in this run, so the claim was not exercised"
    if e["seconds_to_outcome"] < e["hang_timeout_s"] and "MiB" in (e["error"] or ""):
        return "does-not-hold", (text + f": failed in {fmt(e['seconds_to_outcome'])} s with a clear message: "
                                 + clip(e["error"], 160))
    return "holds", text + f": took {fmt(e['seconds_to_outcome'])} s"


def _where(ranks: List[Dict[str, Any]]) -> str:
    return "; ".join(f"rank {r['rank']} {r['state']}"
                     + (f" in {r['where']}" if r["where"] else f": {clip(r['error'] or 'no stack', 120)}")
                     + f" (last step {r['last_step']})" for r in ranks)


def v_oom_aggregation(e: Dict[str, Any]) -> Verdict:
    raised, skipped = e.get("raise"), e.get("skip_batch")
    if not raised or not skipped:
        return "inconclusive", "the two runs did not both finish; run the cell again"
    text = (f"rank 1 out of (emulated) memory at step 1 — raised: {raised['status']} after {fmt(raised['seconds'])} s "
            f"({_where(raised['ranks'])}); caught and its batch skipped: {skipped['status']} after "
            f"{fmt(skipped['seconds'])} s ({_where(skipped['ranks'])})")
    waiting = any("backward" in (r["where"] or "") or "all_reduce" in (r["where"] or "") for r in skipped["ranks"])
    if skipped["status"] == "hang" and waiting:
        return "holds", (text + " — the rank that skipped ran one gradient all-reduce fewer, and the other waited in "
                         "its gradient aggregation until the watchdog stopped it; an OOM that is raised instead "
                         "ends the run with the error")
    if raised["status"] == "hang":
        return "holds", text
    return "does-not-hold", text + " — neither run hung"


def v_collectives(e: Dict[str, Any]) -> Verdict:
    ddp = [fmt(v) for v in e["ddp_allreduces_per_step"]]
    text = (f"DDP x{e['world_size']} ({e['ddp_backend']}, {e['ddp_status']}): {ddp} gradient all-reduce(s) per step "
            f"and rank; DataParallel: a process group in its process: {e['dp_process_group']}, its backward graph "
            f"{e['dp_backward_nodes']}")
    if not e["dp_process_group"] and all(float(v) > 0 for v in e["ddp_allreduces_per_step"]):
        return "partly", (text + " — DDP aggregates gradients with all_reduce; DataParallel runs no collective at "
                          "all: the replicas' gradients are summed back into the one model by autograd, through the "
                          "backward of the replication")
    return "holds", text


def _growth(per: List[Dict[str, Any]]) -> Optional[float]:
    ratios = [r["delayed"]["step_ms"]["median"] / r["baseline"]["step_ms"]["median"] for r in per
              if r["baseline"]["step_ms"] and r["delayed"]["step_ms"] and r["baseline"]["step_ms"]["median"]]
    return min(ratios) if ratios else None


def _link_table(e: Dict[str, Any]) -> str:
    return "; ".join(f"rank {r['rank']}: comm {fmt(r['baseline']['comm_ms']['median'] if r['baseline']['comm_ms'] else 0)}"
                     f" -> {fmt(r['delayed']['comm_ms']['median'] if r['delayed']['comm_ms'] else 0)} ms, share "
                     f"{fmt(100 * r['baseline']['comm_share'])}% -> {fmt(100 * r['delayed']['comm_share'])}%"
                     for r in e["per_rank"])


def _link_noise(e: Dict[str, Any]) -> Optional[stats.Comparison]:
    worst: Optional[stats.Comparison] = None
    for r in e["per_rank"]:
        a, b = as_spread(r["delayed"]["step_ms"]), as_spread(r["baseline"]["step_ms"])
        if a is None or b is None:
            return None
        comparison = stats.compare(a, b)
        if not comparison.conclusive:
            return comparison
        worst = comparison
    return worst


def v_slow_link(e: Dict[str, Any]) -> Verdict:
    if e["status"] == "hang":
        return "holds", f"the run was stopped as a hang: {e['summary']}"
    growth = _growth(e["per_rank"])
    text = (f"{e.get('backend', 'gloo')}, {fmt(e['comm_delay_ms'])} ms injected per allreduce: {_link_table(e)}; "
            f"step time x{fmt(growth)}; finished in {fmt(e['seconds'])} s")
    comparison = _link_noise(e)
    if comparison is None or not comparison.conclusive:
        return "inconclusive", text + f" — {comparison.reason if comparison else 'no timing'}; {stats.ADVICE}"
    if growth is not None and growth >= 1.3:
        return "partly", text + " — significantly delayed, but every step completed: slow, not hung"
    return "does-not-hold", text + " — the steps were barely delayed"


def v_waiting(e: Dict[str, Any]) -> Verdict:
    if e["status"] == "hang":
        return "inconclusive", (f"the run was stopped as a hang, so no step time measures the waiting: "
                                f"{e['summary']}")
    shares = [r["delayed"]["comm_share"] for r in e["per_rank"]]
    text = (f"with {fmt(e['comm_delay_ms'])} ms of delay on each gradient all-reduce: {_link_table(e)}; every step "
            f"finished, in {fmt(e['seconds'])} s")
    if shares and min(shares) > 0.5:
        return "holds", text + " — most of each step was spent waiting on the link, and it still finished: slow, not hung"
    return "does-not-hold", text + " — waiting was not most of the step"


def v_stall(e: Dict[str, Any]) -> Verdict:
    if e["status"] == "hang":
        return "holds", f"the run stalled and was stopped: {e['summary']}"
    growth = _growth(e["per_rank"])
    text = (f"{fmt(e['comm_delay_ms'])} ms of delay on every gradient all-reduce: status {e['status']} after "
            f"{fmt(e['seconds'])} s, step time x{fmt(growth)}")
    return "does-not-hold", text + " — a delayed link lengthens each step by the delay; nothing stalls indefinitely"


def v_uneven(e: Dict[str, Any]) -> Verdict:
    text = f"rows per rank {e['batches']}: status {e['status']} in {fmt(e['seconds'])} s"
    if e["status"] == "hang":
        return "holds", text + f" — {e['summary']}"
    if e["status"] != "ok":
        return "partly", text + f" — failed (not a hang): {e['summary']}"
    if e["diverged"]:
        return "partly", text + f"; parameters diverged across ranks: {e['diverged']}"
    return "does-not-hold", (text + f"; all {e['rows_compared']} parameter/buffer checksums identical on every rank "
                             f"(final loss over the global batch {fmt(e['final_loss'])}): DDP all-reduces gradients, "
                             "whose shapes do not depend on the batch size")


def v_identical(e: Dict[str, Any]) -> Verdict:
    verdict, text = v_uneven(e)
    if verdict == "does-not-hold":
        return verdict, text + " — identical batch shapes were not needed; identical numbers of collectives are"
    return verdict, text


def v_dtype(e: Dict[str, Any]) -> Verdict:
    text = (f"{e['world_size']} ranks, the last one in float64, the others in float32: status {e['status']} after "
            f"{fmt(e['seconds'])} s (hang_timeout_s {fmt(e['hang_timeout_s'])}): {_where(e['ranks'])}")
    if len(set(e["dtypes"])) < 2 and e["status"] == "ok":
        return "inconclusive", text + f" — the ranks ran in {e['dtypes']}: no mismatch was exercised"
    if e["status"] == "hang":
        return "holds", text + " — the collectives between tensors of different dtypes never completed: a hang"
    if e["status"] == "ok":
        if e["diverged"]:
            return "does-not-hold", (text + f" — no error and no hang, but the ranks' parameters diverged silently: "
                                     f"{e['diverged']}")
        return "does-not-hold", text + " — no error and no hang: the mismatch went through"
    return "partly", (text + " — the collectives between tensors of different dtypes failed with an error, which "
                      "ended the run: a crash, not a hang")


def v_deadlock(e: Dict[str, Any]) -> Verdict:
    where = _where(e["ranks"])
    if e["status"] == "hang" and e["fault"] == "slow_rank":
        return "partly", (f"fault slow_rank: rank 1 only slept {fmt(e['sleep_s'])} s, longer than hang_timeout_s "
                          f"{fmt(e['hang_timeout_s'])}, and the watchdog stopped the run after {fmt(e['seconds'])} s: "
                          f"{where} — a slow rank looks like a deadlock from outside, but nothing was deadlocked")
    if e["status"] == "hang":
        return "holds", (f"fault {e['fault']}: watchdog stopped the run after {fmt(e['seconds'])} s "
                         f"(hang_timeout_s {fmt(e['hang_timeout_s'])}): {where}")
    if e["status"] == "ok":
        return "does-not-hold", f"fault {e['fault']}: no process blocked, finished in {fmt(e['seconds'])} s"
    return "partly", (f"fault {e['fault']}: {e['status']} after {fmt(e['seconds'])} s — an error, not a deadlock (gloo "
                      f"here aborts on mismatched collectives): {e['summary']}")


# What ranks out of step may do, each a measured answer: wait forever (the watchdog calls it a hang), or
# have their process group fail them (gloo's error, a collective timeout, or an abort: gloo on mismatched
# tensors, NCCL's watchdog on a timeout). Anything else (an error in the code, a start-up that never ends,
# the time limit) is the experiment failing.
