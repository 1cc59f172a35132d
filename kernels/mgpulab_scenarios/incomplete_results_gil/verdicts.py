"""Scenario 4 — "DataParallel returns incomplete results" / the GIL: each claim's verdict, a pure function of its experiment's evidence dict.

Separate from the measurement (:mod:`.evidence`) so a verdict can be read, and tested, on evidence alone:
it never measures, it reads the numbers of the run the participant watched.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from .. import stats
from ..stats import compare_spreads as _compare, spread_text as _spread_text
from ..vocabulary import Verdict
from ..wording import fmt


def _noise(comparison: Optional[stats.Comparison]) -> str:
    return f"{comparison.reason if comparison else 'no timing'}; {stats.ADVICE}"


def _timing(e: Dict[str, Any], tag: str) -> Optional[Dict[str, Any]]:
    return next((v["forward_ms"] for v in e["variants"] if v["tag"] == tag), None)


def v_incomplete(e: Dict[str, Any]) -> Verdict:
    text = (f"{e['rows_out']} of {e['rows_in']} output rows returned ({fmt(e['completeness_pct'])}%), "
            f"{e['nonfinite_outputs']} non-finite, over {e['steps']} steps on {e['devices']} devices")
    if e["rows_out"] < e["rows_in"] or e["nonfinite_outputs"]:
        return "holds", text
    return "does-not-hold", text + " — complete"


def v_loss(e: Dict[str, Any]) -> Verdict:
    d = e["max_loss_diff_vs_single"]
    final = e["loss_single"]["last"]
    text = (f"max |loss(DataParallel) - loss(1 device)| over {e['steps']} steps = {fmt(d)}; final loss "
            f"{fmt(e['loss_dp']['last'], 6)} vs {fmt(final, 6)}; weights differ by "
            f"{fmt(e['max_param_diff_vs_single'])}")
    if d <= 1e-4 * max(1.0, abs(final)):
        return "does-not-hold", text + " — same training curve as one device"
    if d <= 1e-2 * max(1.0, abs(final)):
        return "partly", text
    return "holds", text


def _ratio(a: Optional[Dict[str, Any]], b: Optional[Dict[str, Any]]) -> Optional[float]:
    return a["median"] / b["median"] if a and b and b["median"] else None


def v_gil(e: Dict[str, Any]) -> Verdict:
    n = e["devices"]
    one, dp, ddp = _timing(e, "1 device"), _timing(e, f"DataParallel x{n}"), _timing(e, f"DDP x{n}")
    ratio = _ratio(dp, one)
    text = (f"{e['forward_kind']} forward: 1 device {_spread_text(one)}, DataParallel x{n} {_spread_text(dp)} "
            f"(x{fmt(ratio)}) on threads {e['threads']}")
    if ddp:
        text += f"; DDP x{n} processes {_spread_text(ddp)} (x{fmt(_ratio(ddp, one))})"
    if n == 1:
        return "inconclusive", text + " (1 device: no threads to contend; set devices to 2 or more)"
    comparison = _compare(dp, one)
    if comparison is None or not comparison.conclusive:
        return "inconclusive", text + f" — {_noise(comparison)}"
    if ratio is not None and ratio >= 1.5:
        return "holds", text + " — the replicas' Python ran one at a time"
    if ratio is not None and ratio >= 1.15:
        return "partly", text
    return "does-not-hold", text + " — no serialization visible"


def v_ddp_gil(e: Dict[str, Any]) -> Verdict:
    n = e["devices"]
    one, dp, ddp = _timing(e, "1 device"), _timing(e, f"DataParallel x{n}"), _timing(e, f"DDP x{n}")
    if not ddp:
        return "inconclusive", f"no DDP comparison in this run (devices={n}); set devices to 2 or more"
    per_rank = [fmt(v) for v in next(v["per_rank_ms"] for v in e["variants"] if v["tag"] == f"DDP x{n}")]
    text = (f"DDP x{n} forward {_spread_text(ddp)} (x{fmt(_ratio(ddp, one))} of one device; per rank {per_rank} "
            f"ms) vs DataParallel x{n} {_spread_text(dp)} (x{fmt(_ratio(dp, one))}), {e['host_cores']} host cores; "
            "note it is separate processes, not the backend, that removes the shared GIL")
    comparison = _compare(ddp, dp)
    if dp is None or comparison is None or not comparison.conclusive:
        return "inconclusive", text + f" — {_noise(comparison)}"
    if ddp["median"] <= 0.77 * dp["median"]:
        return "holds", text
    if ddp["median"] < dp["median"]:
        return "partly", text
    return "does-not-hold", text


def v_no_improvement(e: Dict[str, Any]) -> Verdict:
    n = e["devices"]
    one, dp = _timing(e, "1 device"), _timing(e, f"DataParallel x{n}")
    ratio = _ratio(one, dp)  # a speed-up: > 1 when DataParallel is faster
    text = (f"{e['forward_kind']} forward: DataParallel x{n} {_spread_text(dp)} vs 1 device {_spread_text(one)}: "
            f"speed-up x{fmt(ratio)}")
    if n == 1:
        return "inconclusive", text + " (1 device: nothing to speed up; set devices to 2 or more)"
    comparison = _compare(dp, one)
    if comparison is None or not comparison.conclusive:
        return "inconclusive", text + f" — {_noise(comparison)}"
    if ratio is not None and ratio < 1.0:
        return "holds", (text + " — degraded; the extra time here is the replicas' threads and Python (nothing is "
                         "communicated between processes)")
    if ratio is not None and ratio < 1.2:
        return "holds", text + " — minimal improvement"
    return "does-not-hold", text + f" — a real speed-up on {n} devices"


def v_python_grows(e: Dict[str, Any]) -> Verdict:
    n, b = e["devices"], e["batch_size"]
    one, dp = _timing(e, "1 device"), _timing(e, f"DataParallel x{n}")
    one8, dp8 = _timing(e, "1 device, 8× batch"), _timing(e, f"DataParallel x{n}, 8× batch")
    if n == 1 or one is None or dp is None or one8 is None or dp8 is None:
        return "inconclusive", f"no DataParallel comparison (devices={n}); set devices to 2 or more"
    extra, extra8 = dp["median"] - one["median"], dp8["median"] - one8["median"]
    text = (f"DataParallel's extra forward time over one device: {fmt(extra)} ms at batch {b}, {fmt(extra8)} ms at "
            f"batch {8 * b} (1 device {_spread_text(one)} -> {_spread_text(one8)}; DataParallel {_spread_text(dp)} -> "
            f"{_spread_text(dp8)})")
    for a, c in ((dp, one), (dp8, one8)):
        comparison = _compare(a, c)
        if comparison is None or not comparison.conclusive:
            return "inconclusive", text + f" — {_noise(comparison)}"
    if extra <= 0:
        return "does-not-hold", text + " — at the smaller batch DataParallel costs no extra time to grow from"
    growth = extra8 / extra
    if growth >= 8.0:
        return "holds", text + f" — the overhead grew x{fmt(growth)} for 8 times the rows: faster than the batch"
    return "does-not-hold", (text + f" — 8 times the rows made it x{fmt(growth)}: the Python and thread overhead is "
                             "paid per step, not per row, so it shrinks as a share of larger batches")


def v_large_batches(e: Dict[str, Any]) -> Verdict:
    n, sweep = e["devices"], [r for r in e["batch_sweep"] if r["ratio"] is not None]
    if n == 1 or len(sweep) < 2:
        return "inconclusive", f"no DataParallel comparison (devices={n}); set devices to 2 or more"
    text = (f"the batch-size half of the claim ({e['forward_kind']} forward, depth {e['depth']}), DataParallel x{n} "
            "over 1 device: "
            + "; ".join(f"batch {r['rows']}: x{fmt(r['ratio'])} ({_spread_text(r['dp_ms'])} vs "
                        f"{_spread_text(r['one_ms'])}; per repeat x{fmt(r['ratio_spread']['min'])} to "
                        f"x{fmt(r['ratio_spread']['max'])})" for r in sweep))
    small, large = sweep[0], sweep[-1]
    comparison = _compare(large["ratio_spread"], small["ratio_spread"], unit="(ratio)")
    if comparison is None or not comparison.conclusive:
        return "inconclusive", text + f" — batch {small['rows']} vs {large['rows']}: {_noise(comparison)}"
    ratios = [r["ratio"] for r in sweep]
    if large["ratio"] > small["ratio"]:
        if all(b >= a for a, b in zip(ratios, ratios[1:])):
            return "holds", text + " — DataParallel's relative overhead grows with the batch size"
        return "partly", text + " — larger at the largest batch than at the smallest, but not steadily"
    return "does-not-hold", (text + " — DataParallel's relative overhead shrinks as the batch grows: its threads "
                             "and Python cost per forward, not per row, so a larger batch hides them")


def _backward_text(e: Dict[str, Any]) -> str:
    return (f"{e['replicas']} replicas' backward ran on thread(s) {e['backward_threads']} (thread concurrency "
            f"{fmt(e['backward_thread_concurrency'])}, 1 = one at a time; the replicas' gradient spans overlap "
            f"x{fmt(e['backward_replica_overlap'])}), their forward on {e['forward_threads']} (concurrency "
            f"{fmt(e['forward_concurrency'])}); backward {_spread_text(e['backward_ms'])}, optimizer.step "
            f"{_spread_text(e['optimizer_ms'])} updating {e['optimizer_tensors']} tensors on "
            f"{e['optimizer_devices']}; {e['plan']['label']}")


def _shared(e: Dict[str, Any]) -> bool:
    return e["plan"]["kind"] != "cuda"


def v_backward_sequential(e: Dict[str, Any]) -> Verdict:
    text = _backward_text(e)
    if e["replicas"] < 2:
        return "inconclusive", text + " — one replica: nothing can run in parallel; set devices to 2 or more"
    if len(e["backward_threads"]) > 1 and e["backward_thread_concurrency"] >= 1.3:
        return "does-not-hold", text + " — the replicas' backward passes ran side by side on their own threads"
    if len(e["backward_threads"]) == 1 and _shared(e):
        return "partly", (text + " — sequential here (one thread, the replicas' steps interleaved), because these "
                          "devices share one autograd worker (the calling thread on the CPU, one thread per GPU); "
                          "separate GPUs get a worker each. optimizer.step runs once, on the one model's parameters "
                          "on the first device: it is not executed across the devices at all")
    return "holds", text + " — the replicas' backward passes ran one at a time"


def v_gil_concurrency(e: Dict[str, Any]) -> Verdict:
    text = _backward_text(e)
    if e["replicas"] < 2:
        return "inconclusive", text + " — one replica: nothing to contend; set devices to 2 or more"
    if len(e["backward_threads"]) == 1:
        return "does-not-hold", (text + " — the whole backward ran on one thread: one thread never waits for the "
                                 "GIL, so the GIL is not what orders these steps (autograd's worker per device is)")
    if e["backward_thread_concurrency"] >= 1.3:
        return "does-not-hold", text + " — the backward threads ran concurrently despite the GIL"
    return "partly", text + " — several threads, one at a time: consistent with GIL contention"


def v_aggregation(e: Dict[str, Any]) -> Verdict:
    text = _backward_text(e)
    share = (e["optimizer_ms"]["median"] / e["step_ms"]["median"]) if e["optimizer_ms"] and e["step_ms"] and \
        e["step_ms"]["median"] else None
    text += f"; optimizer.step is {fmt(100 * share) if share is not None else '-'}% of the step"
    if e["replicas"] < 2:
        return "inconclusive", text + " — one replica: nothing is aggregated; set devices to 2 or more"
    parallel = e["forward_concurrency"] >= 1.3
    if len(e["backward_threads"]) == 1:
        return "partly", (text + (" — the forward compute did overlap, " if parallel else " — ")
                          + "but gradient aggregation happens inside autograd's backward and the update is one "
                          "optimizer.step, each on a single thread: serial work, not GIL contention")
    return "partly", text + " — aggregation ran on several threads; whether they waited for the GIL is not visible here"


def v_data(e: Dict[str, Any]) -> Verdict:
    w0 = e["workers"]["num_workers=0"]
    complete = all(w["rows_out"] == w["rows_in"] for w in e["workers"].values())
    text = (f"num_workers=0: data wait {_spread_text(w0['data_ms'])} of a {_spread_text(w0['step_ms'])} step "
            f"({fmt(100 * w0['data_share'])}%), rows out {w0['rows_out']}/{w0['rows_in']}")
    if not complete:
        return "holds", text + " — rows were lost"
    if w0["data_share"] >= 0.3:
        return "partly", text + " — loading is the bottleneck, but every result is complete"
    return "does-not-hold", text + " — loading is not the bottleneck and every result is complete"


def v_workers(e: Dict[str, Any]) -> Verdict:
    a = e["workers"]["num_workers=0"]
    if e["num_workers"] == 0:
        return "inconclusive", (f"data wait {_spread_text(a['data_ms'])} with 0 workers — set num_workers above 0 "
                                "to compare")
    b = e["workers"][f"num_workers={e['num_workers']}"]
    text = (f"data wait {_spread_text(a['data_ms'])} ({fmt(100 * a['data_share'])}% of the step) with 0 workers vs "
            f"{_spread_text(b['data_ms'])} ({fmt(100 * b['data_share'])}%) with {e['num_workers']}")
    comparison = _compare(a["data_ms"], b["data_ms"])
    if comparison is None or not comparison.conclusive:
        return "inconclusive", text + f" — {_noise(comparison)}"
    if b["data_ms"]["median"] < 0.8 * a["data_ms"]["median"]:
        return "holds", text
    return "does-not-hold", text
