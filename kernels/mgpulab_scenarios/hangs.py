"""Scenario 5 — why DataParallel and DDP "hang" (seed 003)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from . import stats
from .core import (PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, Verdict, at_most_devices, clip,
                   fmt, load_template)
from .evidence import Observed
from .stats import as_spread

SOURCE = "003_5eac2459042e419e.txt"
SOURCE_TITLE = "Why do PyTorch's DataParallel and DistributedDataParallel implementations hang indefinitely?"  # the article's own title, shown with the file name as a detail

PARAMETERS = (
    Parameter("world_size", "int", 2, "DDP ranks / DataParallel devices: one GPU per rank over NCCL when the host "
              "has enough, ranks sharing the GPUs over gloo when it has fewer, CPU processes over gloo without "
              "one", 2, 8),
    PLACEMENT,
    Parameter("fault", "choice", "skip_collective",
              "injected fault: none | uneven_steps (rank r gets r extra batches) | skip_collective (rank 1 never "
              "reaches the final all_reduce) | slow_rank (rank 1 sleeps sleep_s after its first step)",
              choices=("none", "uneven_steps", "skip_collective", "slow_rank")),
    Parameter("fix", "choice", "pg_timeout", "fix tried on the faulty run: Join context manager, DistributedSampler, "
              "or a short process-group timeout (pg_timeout_s)",
              choices=("join", "distributed_sampler", "pg_timeout")),
    Parameter("hang_timeout_s", "float", 3.0, "watchdog: how long a rank may send nothing before the lab shows "
              "every rank's stack and stops the run",
              1.0, 30.0),
    Parameter("pg_timeout_s", "float", 3.0, "process-group timeout used by the pg_timeout fix", 1.0, 60.0),
    Parameter("sleep_s", "float", 1.0, "how long rank 1 sleeps after its first step with fault=slow_rank", 0.0, 20.0),
    Parameter("comm_delay_ms", "float", 40.0, "injected delay on each gradient allreduce (slow link)", 0.0, 500.0),
    Parameter("steps", "int", 3, "timed steps per phase of the slow-link run, after a warm-up step; timing "
              "verdicts need 3 or more to see their spread", 2, 20),
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

OOM_DDP_CELL = load_template("hangs_oom_ddp")

COLLECTIVES_CELL = load_template("hangs_collectives")

DTYPE_CELL = load_template("hangs_dtype_mismatch")

STEPS = (
    Step("oom", "**Batch too large (Example 1).** What does an oversized batch do to training? "
         "The cell runs a batch of {{oom_batch_size}} rows on DataParallel, then in DDP where one rank's share "
         "does not fit, against a per-device memory budget: the GPU's own memory, or on the CPU (which has no "
         "device memory limit) a declared, **emulated** budget of {{device_memory_mib}} MiB per device.",
         (Cell("oom", OOM_CELL), Cell("oom-ddp", OOM_DDP_CELL)), "An oversized batch on DataParallel…",
         ("hangs", "fails fast with an error"), ("oom-hang", "oom-silent", "oom-aggregation-hang"),
         tells=(("stuck", "never returns", "silent"), ("raises", "out of memory error", "diagnosed")),
         explanation="**Why.** Running out of memory is an error raised in the process that asked for the "
                     "memory (`CUDA out of memory` on a GPU, the emulated budget's error here), at once. In DDP "
                     "the rank that failed exits; the others then wait in their next collective for a rank that "
                     "is gone, and *that* wait is what can look like a hang until the launcher (or a "
                     "process-group timeout) stops them."),
    Step("collectives", "**What aggregates the gradients.** One DataParallel step in this process, and DDP steps "
         "that count their gradient all-reduces.",
         (Cell("collectives", COLLECTIVES_CELL),), "Does DataParallel use all_reduce to aggregate gradients?",
         ("yes, like DDP", "no"), ("collectives",),
         tells=(("process group", "same collective"), ("reduce_add", "autograd sums")),
         explanation="**Why.** DataParallel has no process group: its replicas live in one process, and their "
                     "gradients flow back through autograd into the one model on device 0, summed there "
                     "(`reduce_add`). `all_reduce` is DDP's: every rank holds its own model and the ranks "
                     "exchange gradients."),
    Step("slow-link", "**Slow link (Example 2).** DDP with a delay injected on every gradient allreduce "
         "(`comm_delay_ms`). Measure each rank's communication share of the step.",
         (Cell("slow-link", SLOW_CELL),), "With a slow link, does DDP hang?", ("hangs", "slows down"),
         ("slow-link", "waiting-dominates", "stall-indefinitely"),
         tells=(("stuck", "never finishes", "stalls"), ("longer steps", "completes", "finishes")),
         explanation="**Why.** A delay on every all-reduce makes each step wait longer for communication, but "
                     "every collective still completes: the ranks progress, more slowly, and the communication "
                     "share of the step grows. A hang needs a collective that some rank never joins."),
    Step("uneven-batches", "**Different batch sizes per rank (Example 3).** Rank 0 gets 10 rows, rank 1 gets 20, as "
         "in the article. Then the other half of the article's mismatch: the same shapes, but the last rank's model "
         "and batch in float64 while the others' are float32.",
         (Cell("uneven-batches", UNEVEN_CELL), Cell("dtype-mismatch", DTYPE_CELL)),
         "Does DDP hang with different batch sizes per rank?",
         ("yes", "no"), ("uneven-batches", "identical-shapes-essential", "dtype-mismatch"),
         tells=(("hang", "stuck"), ("works", "runs fine", "completes")),
         explanation="**Why.** DDP all-reduces *gradients*, whose shapes depend on the model, not on the batch."),
    Step("collective-fault", "**Different numbers of collectives.** Run DDP with the fault {{fault}}, watched by "
         "the lab's watchdog (it shows every rank's stack when the ranks stop making progress). Then try the fix "
         "{{fix}}.",
         (Cell("fault", FAULT_CELL), Cell("fix", FIX_CELL)), "With fault={fault}, what happens?",
         ("hang", "error", "runs fine"), ("deadlock",),
         tells=(("silent", "detected", "deadlock"), ("raises", "exception"), ("completes", "finishes")),
         explanation="**Why.** What hangs DDP is ranks that run different numbers of collectives: more steps on "
                     "one rank, or a rank that skips one. The others wait in the collective until a timeout."),
)


# -- evidence: what each cell recorded ------------------------------------------------------------

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


# -- verdicts ------------------------------------------------------------------------------------

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
COLLECTIVE_TROUBLE = ("hang", "failed:collective", "failed:abort")

EXPERIMENTS = (
    Experiment("oom", "Oversized batch vs an EMULATED device memory budget", ("DataParallel xN",),
               metrics=(), chart="bar: needed vs budget per device", evidence=e_oom),
    Experiment("oom-ddp", "DDP with one rank out of memory: raised, or its batch skipped", ("raise", "skip_batch"),
               metrics=("rank_loss",), chart="table: per-rank state", evidence=e_oom_ddp,
               provokes=("failed:oom", "hang", "failed:collective")),
    Experiment("collectives", "What aggregates the gradients: DataParallel's backward vs DDP's all-reduces",
               ("DataParallel xN", "DDP xN"), metrics=("allreduce_buckets",), chart="table", evidence=e_collectives),
    Experiment("slow-link", "DDP: no delay vs injected comm delay, per rank", ("baseline", "delayed"),
               metrics=("comm_ms", "step_ms"), chart="stacked bar: comm share per rank, both phases",
               evidence=e_slow_link, provokes=("hang",)),
    Experiment("uneven-batches", "DDP with different batch sizes per rank (10 vs 20 rows)", ("DDP xN",),
               metrics=("loss", "rank_loss"), chart="table: per-rank checksums", evidence=e_uneven,
               provokes=COLLECTIVE_TROUBLE),
    Experiment("dtype-mismatch", "DDP with one rank's model and batch in another dtype (float64 vs float32)",
               ("mixed dtypes",), metrics=("rank_loss",), chart="table: per-rank state and error",
               evidence=e_dtype, provokes=COLLECTIVE_TROUBLE),
    Experiment("fault", "An injected fault: different numbers of collectives per rank", ("faulty",),
               metrics=("rank_loss",), chart="table: per-rank state and stack", evidence=e_fault,
               provokes=COLLECTIVE_TROUBLE),
    Experiment("fix", "The same fault with a fix", ("fixed",), metrics=("rank_loss",), chart="table", evidence=e_fix,
               provokes=COLLECTIVE_TROUBLE),
)

CLAIMS = (
    Claim("oom-hang", "A batch size that's too large for the available GPU memory on one or more devices will cause "
          "an out-of-memory error, which may manifest as an apparent hang.", "oom", v_oom_hang),
    Claim("oom-silent", "Running out of GPU memory (especially with large batch sizes or models) on one or more "
          "devices can cause processes to hang, often without clear error messages.", "oom", v_oom_silent),
    Claim("oom-aggregation-hang", "This can manifest indirectly as a hang during gradient aggregation.", "oom-ddp",
          v_oom_aggregation),
    Claim("collectives", "Both mechanisms rely on collective operations (e.g., `all_reduce`, `all_gather`) to "
          "aggregate gradients computed independently on different devices.", "collectives", v_collectives),
    Claim("slow-link", "If the network connecting the processes is slow or unreliable (e.g., using `gloo` over a "
          "congested network), the `all_reduce` operation used to aggregate gradients will be significantly "
          "delayed, potentially appearing as a hang.", "slow-link", v_slow_link),
    Claim("waiting-dominates", "If the transfer speed is significantly slower than the computation speed, processes "
          "will spend most of their time waiting, creating the illusion of a hang.", "slow-link", v_waiting),
    Claim("stall-indefinitely", "Packets might be dropped or delayed, causing processes to stall indefinitely while "
          "waiting for others.", "slow-link", v_stall),
    Claim("uneven-batches", "If different processes receive input tensors of varying shapes, the `all_reduce` "
          "operation will fail silently or produce incorrect results, leading to a hang.", "uneven-batches",
          v_uneven),
    Claim("identical-shapes-essential", "Employing consistent data loaders and ensuring all processes receive tensors "
          "of identical shapes and data types is essential.", "uneven-batches", v_identical),
    Claim("dtype-mismatch", "mismatched tensor dimensions or data types, can lead to errors in the collective "
          "operations, resulting in the hang", "dtype-mismatch", v_dtype),
    Claim("deadlock", "Improperly designed synchronization primitives can result in deadlocks, where multiple "
          "processes block each other, preventing any progress.", "fault", v_deadlock),
)

SCENARIO = Scenario(
    id="hangs", title="Hangs in DataParallel and DDP: which failures really hang?", source=SOURCE,
    source_title=SOURCE_TITLE,
    summary="Five suspects from the article, each run under a watchdog: an oversized batch (on DataParallel, and "
            "one rank's share in DDP); what aggregates the gradients; a slow link (each rank's communication "
            "share); different batch sizes per rank; different numbers of steps or a skipped collective; and the "
            "fixes the article suggests.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("world_size"),),
    # What each choice of a step's question is, in verdicts (see Scenario.outcomes).
    outcomes={
        "oom": ({"oom-hang": ("holds",)}, {"oom-hang": ("partly",)}),
        "collectives": ({"collectives": ("holds",)}, {"collectives": ("partly",)}),
        "slow-link": ({"slow-link": ("holds",)}, {"slow-link": ("partly",)}),
        "uneven-batches": ({"uneven-batches": ("holds",)}, {"uneven-batches": ("does-not-hold",)}),
        # An error (partly) is not told apart from a slow rank stopped as a hang (also partly): not judged.
        "collective-fault": ({"deadlock": ("holds",)}, {}, {"deadlock": ("does-not-hold",)}),
    },
)
