"""Scenario 5 — why DataParallel and DDP "hang" (seed 003)."""
from __future__ import annotations

import time
from typing import Any, Dict, Optional

import torch
from torch import nn

from . import common as c
from . import rank_fns
from .core import (PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, Verdict, at_most_devices, fmt,
                   load_template)

SOURCE = "003_5eac2459042e419e.txt"

PARAMETERS = (
    Parameter("world_size", "int", 2, "DDP ranks / DataParallel devices: one GPU per rank over NCCL when the host "
              "has enough, ranks sharing the GPUs over gloo when it has fewer, CPU processes over gloo without "
              "one", 2, 8),
    PLACEMENT,
    Parameter("fault", "choice", "skip_collective",
              "injected fault: none | uneven_steps (rank r gets r extra batches) | skip_collective (rank 1 never "
              "reaches the final all_reduce) | slow_rank (rank 1 sleeps sleep_s before training)",
              choices=("none", "uneven_steps", "skip_collective", "slow_rank")),
    Parameter("fix", "choice", "pg_timeout", "fix tried on the faulty run: Join context manager, DistributedSampler, "
              "or a short process-group timeout (turns the hang into an error)",
              choices=("join", "distributed_sampler", "pg_timeout")),
    Parameter("hang_timeout_s", "float", 3.0, "watchdog: a rank silent this long is a hang (stacks, then kill)",
              1.0, 30.0),
    Parameter("pg_timeout_s", "float", 3.0, "process-group timeout used by the pg_timeout fix", 1.0, 60.0),
    Parameter("sleep_s", "float", 1.0, "how long rank 1 sleeps with fault=slow_rank", 0.0, 20.0),
    Parameter("comm_delay_ms", "float", 40.0, "injected delay on each gradient allreduce (slow link)", 0.0, 500.0),
    Parameter("steps", "int", 3, "timed steps per phase of the slow-link run", 1, 20),
    Parameter("oom_batch_size", "int", 8192, "batch for the OOM check (article: 1024 * 8)", 1, 1_000_000),
    Parameter("device_memory_mib", "float", 1.0, "EMULATED device memory budget in MiB (CPU has no device "
              "memory limit; this is a declared budget checked before the forward)", 0.01, 1_000_000.0),
    Parameter("seed", "int", 0, "seed for data and weights", 0, 2 ** 31 - 1),
)

OOM_CELL = load_template("hangs_oom")

FAULT_CELL = load_template("hangs_fault")

FIX_CELL = load_template("hangs_fix")

SLOW_CELL = load_template("hangs_slow_link")

UNEVEN_CELL = load_template("hangs_uneven_batches")

STEPS = (
    Step("oom", "**Batch too large (Example 1).** On a GPU an oversized batch raises `CUDA out of memory`; on CPU "
         "there is no device memory limit, so the lab checks a declared, **emulated** per-device budget "
         "(`device_memory_mib`) before the forward. Does it hang, or fail with an error?",
         (Cell("oom", OOM_CELL),), "An oversized batch on DataParallel…", ("hangs", "fails fast with an error"),
         ("oom-hang", "oom-silent")),
    Step("slow-link", "**Slow link (Example 2).** DDP with a delay injected on every gradient allreduce "
         "(`comm_delay_ms`). Measure each rank's communication share of the step.",
         (Cell("slow-link", SLOW_CELL),), "With a slow link, does DDP hang?", ("hangs", "slows down"),
         ("slow-link",)),
    Step("uneven-batches", "**Different batch sizes per rank (Example 3).** Rank 0 gets 10 rows, rank 1 gets 20, as "
         "in the article. DDP all-reduces *gradients*, whose shapes depend on the model, not on the batch.",
         (Cell("uneven-batches", UNEVEN_CELL),), "Does DDP hang with different batch sizes per rank?",
         ("yes", "no"), ("uneven-batches", "identical-shapes-essential")),
    Step("collective-fault", "**Different numbers of collectives.** What does hang DDP: ranks that run different "
         "numbers of steps, or a rank that skips a collective. The watchdog detects the silent ranks and shows "
         "each rank's stack; then try a fix.",
         (Cell("fault", FAULT_CELL), Cell("fix", FIX_CELL)), "With fault={fault}, what happens?",
         ("hang", "error", "runs fine"), ("deadlock",)),
)


# -- experiments ------------------------------------------------------------------------------------

def run_oom(p: Dict[str, Any]) -> Dict[str, Any]:
    n = p["world_size"]
    torch.manual_seed(p["seed"])
    model = c.dp(nn.Linear(100, 10), n, p)
    rows = [len(ch) for ch in torch.empty(p["oom_batch_size"]).chunk(n)]
    need = [c.mlp_bytes_per_device(model.module, r)["total"] / 2 ** 20 for r in rows]
    t0 = time.perf_counter()
    error: Optional[str] = None
    try:
        c.check_budget(model.module, rows, p["device_memory_mib"])
        with torch.no_grad():
            model(torch.randn(p["oom_batch_size"], 100).to(c.device(p)))
    except c.EmulatedOOM as err:
        error = str(err)
    seconds = time.perf_counter() - t0
    per_row = c.mlp_bytes_per_device(model.module, 1)["activations"]
    fixed = c.mlp_bytes_per_device(model.module, 0)["total"]
    max_rows = max(0, int((p["device_memory_mib"] * 2 ** 20 - fixed) // per_row))
    return {"emulated": True, "devices": n, "batch_size": p["oom_batch_size"], "rows_per_device": rows,
            "need_mib_per_device": [c.r(v) for v in need], "budget_mib": p["device_memory_mib"],
            "oom": error is not None, "error": error, "seconds_to_outcome": c.r(seconds),
            "hang_timeout_s": p["hang_timeout_s"], "max_batch_that_fits": max_rows * n}


def _ranks(res: Any) -> list:
    out = []
    for r in res.ranks:
        stack = (r.stack or "").strip().splitlines()
        out.append({"rank": r.rank, "state": r.state, "last_step": r.last_step, "where": r.where,
                    "error": (r.error or "")[:300] or None, "stack_head": stack[:8] if stack else None,
                    "result": r.result})
    return out


def run_slow_link(p: Dict[str, Any]) -> Dict[str, Any]:
    res = c.launch(rank_fns.ddp_comm, p["world_size"], p,
                   kwargs=dict(seed=p["seed"], batch=64, d_in=16, hidden=64, steps=p["steps"],
                               comm_delay_ms=p["comm_delay_ms"]),
                   echo=False, timeout_s=30, hang_timeout_s=30, time_limit_s=120)
    out: Dict[str, Any] = {"world_size": p["world_size"], "comm_delay_ms": p["comm_delay_ms"], "status": res.status,
                           "summary": res.summary, "seconds": c.r(res.duration_s), "backend": res.backend}
    if res.ok:
        out["per_rank"] = [{"rank": r["rank"],
                            "baseline": {k: c.r(v) for k, v in r["baseline"].items()},
                            "delayed": {k: c.r(v) for k, v in r["delayed"].items()}} for r in res.results]
    return out


def run_uneven_batches(p: Dict[str, Any]) -> Dict[str, Any]:
    res = c.launch(rank_fns.ddp_uneven_batches, p["world_size"], p,
                   kwargs=dict(seed=p["seed"], d_in=100, steps=3, batches=[10, 20]),
                   echo=False, timeout_s=30, hang_timeout_s=p["hang_timeout_s"] + 5, time_limit_s=60)
    out = {"world_size": p["world_size"], "batches": [[10, 20][r % 2] for r in range(p["world_size"])],
           "status": res.status, "summary": res.summary, "seconds": c.r(res.duration_s)}
    if res.ok:
        out["diverged"] = sorted({name for r in res.results for name in r["diverged"]})
        out["rows_compared"] = res.results[0]["rows_compared"]
        out["final_loss_per_rank"] = [c.r(r["losses"][-1]) for r in res.results]
    return out


def _fault_run(p: Dict[str, Any], fix: str) -> Dict[str, Any]:
    pg = fix == "pg_timeout"
    res = c.launch(rank_fns.ddp_collective_fault, p["world_size"], p,
                   kwargs=dict(seed=p["seed"], d_in=8, rows=32, batch=8, fault=p["fault"],
                               fix="none" if pg else fix, sleep_s=p["sleep_s"]),
                   echo=False, timeout_s=p["pg_timeout_s"] if pg else 60,
                   hang_timeout_s=max(p["hang_timeout_s"], p["pg_timeout_s"] + 5) if pg else p["hang_timeout_s"],
                   time_limit_s=60)
    return {"fix": fix, "status": res.status, "summary": res.summary, "seconds": c.r(res.duration_s),
            "ranks": _ranks(res)}


def run_collective_fault(p: Dict[str, Any]) -> Dict[str, Any]:
    faulty = _fault_run(p, "none")
    out = {"world_size": p["world_size"], "fault": p["fault"], "hang_timeout_s": p["hang_timeout_s"],
           "sleep_s": p["sleep_s"], "faulty": faulty}
    if p["fault"] != "none":
        out["fixed"] = _fault_run(p, p["fix"])
    return out


# -- verdicts ------------------------------------------------------------------------------------

def v_oom_hang(e: Dict[str, Any]) -> Verdict:
    text = (f"batch {e['batch_size']} on {e['devices']} devices needs {e['need_mib_per_device']} MiB each vs "
            f"an emulated budget of {e['budget_mib']} MiB; outcome after {e['seconds_to_outcome']} s")
    if not e["oom"]:
        return "does-not-hold", text + f": it fit (up to {e['max_batch_that_fits']} rows fit) — no error, no hang"
    if e["seconds_to_outcome"] >= e["hang_timeout_s"]:
        return "holds", text + ": the error took longer than the hang threshold"
    return "partly", text + ": an out-of-memory error, raised at once — a crash, not a hang"


def v_oom_silent(e: Dict[str, Any]) -> Verdict:
    text = f"budget {e['budget_mib']} MiB, need {e['need_mib_per_device']} MiB per device"
    if not e["oom"]:
        return "partly", text + ": memory was not exhausted in this run, so the claim was not exercised"
    if e["seconds_to_outcome"] < e["hang_timeout_s"] and "MiB" in (e["error"] or ""):
        return "does-not-hold", text + f": failed in {e['seconds_to_outcome']} s with a clear message: {e['error'][:160]}"
    return "holds", text + f": took {e['seconds_to_outcome']} s"


def v_slow_link(e: Dict[str, Any]) -> Verdict:
    if e["status"] == "hang":
        return "holds", f"the run was stopped as a hang: {e['summary']}"
    if e["status"] != "ok":
        return "partly", f"run {e['status']}: {e['summary']}"
    per = e["per_rank"]
    growth = min(r["delayed"]["step_ms"] / r["baseline"]["step_ms"] for r in per if r["baseline"]["step_ms"])
    table = "; ".join(f"rank {r['rank']}: comm {r['baseline']['comm_ms']} -> {r['delayed']['comm_ms']} ms, share "
                      f"{fmt(100 * r['baseline']['comm_share'])}% -> {fmt(100 * r['delayed']['comm_share'])}%"
                      for r in per)
    text = (f"{e.get('backend', 'gloo')}, {e['comm_delay_ms']} ms injected per allreduce: {table}; step time "
            f"x{fmt(growth)}; finished in {e['seconds']} s")
    if growth >= 1.3:
        return "partly", text + " — significantly delayed, but every step completed: slow, not hung"
    return "does-not-hold", text + " — the steps were barely delayed"


def v_uneven(e: Dict[str, Any]) -> Verdict:
    text = f"rows per rank {e['batches']}: status {e['status']} in {e['seconds']} s"
    if e["status"] == "hang":
        return "holds", text + f" — {e['summary']}"
    if e["status"] != "ok":
        return "partly", text + f" — failed (not a hang): {e['summary']}"
    if e["diverged"]:
        return "partly", text + f"; parameters diverged across ranks: {e['diverged']}"
    return "does-not-hold", (text + f"; all {e['rows_compared']} parameter/buffer checksums identical on every rank "
                             f"(final losses {e['final_loss_per_rank']}): DDP all-reduces gradients, whose shapes do "
                             "not depend on the batch size")


def v_identical(e: Dict[str, Any]) -> Verdict:
    verdict, text = v_uneven(e)
    if verdict == "does-not-hold":
        return verdict, text + " — identical batch shapes were not needed; identical numbers of collectives are"
    return verdict, text


def v_deadlock(e: Dict[str, Any]) -> Verdict:
    f = e["faulty"]
    where = "; ".join(f"rank {r['rank']} {r['state']} in {r['where']} (last step {r['last_step']})"
                      for r in f["ranks"])
    fixed = e.get("fixed")
    fix_text = f"; with fix {fixed['fix']}: {fixed['status']} in {fixed['seconds']} s" if fixed else ""
    if f["status"] == "hang" and e["fault"] == "slow_rank":
        return "partly", (f"fault slow_rank: rank 1 only slept {e['sleep_s']} s, longer than hang_timeout_s "
                          f"{e['hang_timeout_s']}, and the watchdog stopped the run after {f['seconds']} s: {where} — "
                          f"a slow rank looks like a deadlock from outside, but nothing was deadlocked{fix_text}")
    if f["status"] == "hang":
        return "holds", (f"fault {e['fault']}: watchdog stopped the run after {f['seconds']} s "
                         f"(hang_timeout_s {e['hang_timeout_s']}): {where}{fix_text}")
    if f["status"] == "ok":
        return "does-not-hold", f"fault {e['fault']}: no process blocked, finished in {f['seconds']} s{fix_text}"
    return "partly", (f"fault {e['fault']}: {f['status']} after {f['seconds']} s — an error, not a deadlock (gloo here "
                      f"aborts on mismatched collectives): {f['summary']}{fix_text}")


EXPERIMENTS = (
    Experiment("oom", "Oversized batch vs an EMULATED device memory budget", ("DataParallel xN",), run_oom,
               ("need_mib_per_device",), "bar: needed vs budget per device"),
    Experiment("slow-link", "DDP: no delay vs injected comm delay, per rank", ("baseline", "delayed"),
               run_slow_link, ("comm_ms", "step_ms"), "stacked bar: comm share per rank, both phases"),
    Experiment("uneven-batches", "DDP with different batch sizes per rank (10 vs 20 rows)", ("DDP xN",),
               run_uneven_batches, ("status",), "table: per-rank checksums"),
    Experiment("collective-fault", "Injected fault vs the same run with a fix", ("faulty", "fixed"),
               run_collective_fault, ("status",), "table: per-rank state and stack"),
)

CLAIMS = (
    Claim("oom-hang", "A batch size that's too large for the available GPU memory on one or more devices will cause "
          "an out-of-memory error, which may manifest as an apparent hang.", "oom", v_oom_hang),
    Claim("oom-silent", "Running out of GPU memory (especially with large batch sizes or models) on one or more "
          "devices can cause processes to hang, often without clear error messages.", "oom", v_oom_silent),
    Claim("slow-link", "If the network connecting the processes is slow or unreliable (e.g., using `gloo` over a "
          "congested network), the `all_reduce` operation used to aggregate gradients will be significantly "
          "delayed, potentially appearing as a hang.", "slow-link", v_slow_link),
    Claim("uneven-batches", "If different processes receive input tensors of varying shapes, the `all_reduce` "
          "operation will fail silently or produce incorrect results, leading to a hang.", "uneven-batches",
          v_uneven),
    Claim("identical-shapes-essential", "Employing consistent data loaders and ensuring all processes receive tensors "
          "of identical shapes and data types is essential.", "uneven-batches", v_identical),
    Claim("deadlock", "Improperly designed synchronization primitives can result in deadlocks, where multiple "
          "processes block each other, preventing any progress.", "collective-fault", v_deadlock),
)

SCENARIO = Scenario(
    id="hangs", title="Why DataParallel and DDP hang (and when they do not)", source=SOURCE,
    summary="Oversized batch (emulated OOM, diagnosed, not hung); slow link (communication share per rank); "
            "different batch sizes per rank (works) vs different numbers of steps or a skipped collective "
            "(hangs, detected by the watchdog with per-rank stacks), and the fixes.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("world_size"),),
)
