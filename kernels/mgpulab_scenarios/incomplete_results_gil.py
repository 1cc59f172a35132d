"""Scenario 4 — "DataParallel returns incomplete results" / the GIL (seed 002)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from . import stats
from .core import (PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, Verdict, at_most_devices, fmt,
                   load_template)
from .evidence import Observed
from .stats import compare_spreads as _compare, spread_text as _spread_text

SOURCE = "002_e762a3f4f8bd6399.txt"
SOURCE_TITLE = "Why is DataParallel returning incomplete results?"  # the article's own title, shown with the file name as a detail

PARAMETERS = (
    Parameter("devices", "int", 2, "devices for DataParallel / DDP ranks: GPUs (shared when fewer than this), "
              "or emulated CPU devices", 1, 8),
    PLACEMENT,
    Parameter("samples", "int", 2000, "dataset rows (article: 10000)", 10, 20000),
    Parameter("batch_size", "int", 250, "DataLoader batch size (article: 1000), and the batch of the timing "
              "experiments", 1, 5000),
    Parameter("epochs", "int", 1, "epochs over the dataset (article: 10)", 1, 10),
    Parameter("lr", "float", 0.01, "SGD learning rate (article: 0.01)", 1e-5, 1.0),
    Parameter("forward_kind", "choice", "python", "python: many tiny layers (Python/dispatch-bound forward); "
              "tensor: two wide layers (arithmetic-bound forward)", choices=("python", "tensor")),
    Parameter("depth", "int", 40, "layers of the Python-heavy model", 1, 400),
    Parameter("repeats", "int", 5, "timed forwards (or steps) per variant after a warm-up; timing verdicts need "
              "3 or more to see their spread", 2, 50),
    Parameter("num_workers", "int", 2, "DataLoader workers for the data-wait comparison (vs 0)", 0, 4),
    Parameter("sample_cost_ms", "float", 0.3, "emulated per-sample loading cost (I/O wait) in the dataset", 0.0, 10.0),
    Parameter("seed", "int", 0, "seed for data and weights", 0, 2 ** 31 - 1),
)


COMPLETE_CELL = load_template("incomplete_results_gil_completeness")

OVERHEAD_CELL = load_template("incomplete_results_gil_python_overhead")

DATA_CELL = load_template("incomplete_results_gil_data_wait")

BACKWARD_CELL = load_template("incomplete_results_gil_backward")

STEPS = (
    Step("completeness", "**Are DataParallel's results incomplete?** Run the article's Example 1 on one device and "
         "on DataParallel at the same seed and count the output rows that come back, check they are finite, and "
         "compare the loss step by step.",
         (Cell("completeness", COMPLETE_CELL),),
         "What fraction of the outputs does DataParallel return?", ("100%", "less than 100%"),
         ("incomplete", "loss-irregular"),
         tells=(("rows all returned",), ("missing rows", "dropped rows", "lost rows")),
         explanation="**Why.** DataParallel's gather concatenates the outputs of every replica on device 0, in "
                     "chunk order: a replica that returned fewer rows would make the gather fail, not shrink "
                     "the result. So the place to look for the article's \"incomplete results\" is the row "
                     "count and the loss curve above, side by side with one device's."),
    Step("python-overhead", "**What the GIL really costs.** Compare the forward time of a Python-heavy model on "
         "one device, on DataParallel and on DDP, and DataParallel's against one device's at 1, 8 and 64 times "
         "the batch.",
         (Cell("python-overhead", OVERHEAD_CELL),),
         "How does DataParallel's forward time compare with one device for a Python-heavy model?",
         ("faster", "same", "slower, growing with the number of devices"),
         ("gil-restricts", "ddp-avoids-gil", "no-improvement", "python-grows", "large-batches"),
         tells=(("speeds up", "quicker"), ("no difference", "unchanged"), ("serialized", "contention")),
         explanation="**Why.** DataParallel's replicas run on Python threads of one process: their device work "
                     "can overlap, but their Python (module calls, dispatch) is serialized by the GIL. DDP ranks "
                     "are processes with their own interpreters."),
    Step("backward", "**Backward and optimizer.step across devices.** Time each replica's backward (when autograd "
         "computes the gradients of its parameters, and on which thread) and see where optimizer.step runs.",
         (Cell("backward", BACKWARD_CELL),),
         "Do the replicas' backward passes run one after another?", ("yes, in turn", "no, side by side"),
         ("backward-sequential", "gil-prevents-concurrency", "aggregation-bottleneck"),
         tells=(("sequential",), ("concurrent", "overlap", "parallel")),
         explanation="**Why.** Autograd runs a backward on one worker thread per device: separate GPUs each get "
                     "their own and can overlap, while emulated CPU devices (or virtual devices sharing one "
                     "GPU) share one worker, so their replicas' backward passes take turns. `optimizer.step()` "
                     "then runs once, on the one model's parameters on the first device: it is not spread over "
                     "the devices at all."),
    Step("data-wait", "**DataLoader workers (Example 2).** Each step first waits for its batch. Measure the share "
         "of the step spent waiting for data with `num_workers=0` and with more workers.",
         (Cell("data-wait", DATA_CELL),),
         "With num_workers=0, is the step dominated by data waiting?", ("yes", "no"),
         ("data-bottleneck", "num-workers"),
         tells=(("bottleneck", "mostly waiting"), ("mostly compute", "compute dominates")),
         explanation="**Why.** With `num_workers=0` the training loop loads every batch itself, so each step "
                     "first pays its samples' loading cost; workers load the next batches in other processes "
                     "while the step computes. Whether waiting dominates is loading cost against compute, "
                     "and either way every row arrives: a slow loader makes training slower, not incomplete."),
)


# -- evidence: what each cell recorded ------------------------------------------------------------

def e_completeness(o: Observed) -> Dict[str, Any]:
    n = o.params["devices"]
    dp = f"DataParallel x{n}"
    rows = o.facts["rows"][dp]
    single, parallel = dict(o.values("1 device", "loss")), dict(o.values(dp, "loss"))
    common = sorted(set(single) & set(parallel))
    return {"devices": n, "rows_in": rows["rows_in"], "rows_out": rows["rows_out"],
            "completeness_pct": 100.0 * rows["rows_out"] / rows["rows_in"] if rows["rows_in"] else 0.0,
            "nonfinite_outputs": rows["nonfinite_outputs"], "steps": len(parallel),
            "max_loss_diff_vs_single": max((abs(single[s] - parallel[s]) for s in common), default=0.0),
            "loss_single": {"first": o.first("1 device", "loss"), "last": o.last("1 device", "loss")},
            "loss_dp": {"first": o.first(dp, "loss"), "last": o.last(dp, "loss")},
            "max_param_diff_vs_single": o.facts["max_param_diff_vs_single"]}


def e_overhead(o: Observed) -> Dict[str, Any]:
    p = o.params
    n = p["devices"]
    tags = [f"{variant}{size}" for size in ("", ", 8× batch", ", 64× batch")
            for variant in ("1 device", f"DataParallel x{n}")]
    if n > 1:
        tags.append(f"DDP x{n}")
    variants = [{"tag": tag, "forward_ms": o.spread(tag, "forward_ms"),
                 "per_rank_ms": [stats.bar_value(o, tag, "forward_ms", [r]) for r in o.ranks(tag, "forward_ms")]}
                for tag in tags]
    return {"devices": n, "forward_kind": p["forward_kind"], "depth": p["depth"], "batch_size": p["batch_size"],
            "variants": variants, "threads": o.facts["threads"], "host_cores": o.facts["host_cores"],
            "batch_sweep": [_sweep_row(o, n, factor * p["batch_size"], size)
                            for factor, size in ((1, ""), (8, ", 8× batch"), (64, ", 64× batch"))]}


def _sweep_row(o: Observed, n: int, rows: int, size: str) -> Dict[str, Any]:
    """One batch size of the sweep: DataParallel's forward time over one device's, as the ratio of their
    medians and as the spread of the ratios of the forwards timed at the same repeat (the noise rule's input)."""
    one, dp = o.spread(f"1 device{size}", "forward_ms"), o.spread(f"DataParallel x{n}{size}", "forward_ms")
    paired = dict(o.values(f"1 device{size}", "forward_ms", warmup=False))
    ratios = [v / paired[i] for i, v in o.values(f"DataParallel x{n}{size}", "forward_ms", warmup=False)
              if paired.get(i)]
    spread = stats.spread(ratios)
    return {"rows": rows, "one_ms": one, "dp_ms": dp,
            "ratio": dp["median"] / one["median"] if one and dp and one["median"] else None,
            "ratio_spread": spread.to_dict() if spread else None}


def concurrency(spans: Sequence[Sequence[float]]) -> float:
    """Summed durations over the time at least one ran: 1.0 one after another, N all N side by side."""
    ordered = sorted((float(a), float(b)) for a, b, *_ in spans if b > a)
    if not ordered:
        return 1.0
    busy, (start, end) = 0.0, ordered[0]
    for a, b in ordered[1:]:
        if a > end:
            busy, start, end = busy + end - start, a, b
        else:
            end = max(end, b)
    busy += end - start
    return sum(b - a for a, b in ordered) / busy if busy > 0 else 1.0


def e_backward(o: Observed) -> Dict[str, Any]:
    import mgpulab as lab
    p, f = o.params, o.facts
    n = p["devices"]
    tag = f"DataParallel x{n}"
    backward = f["backward"][1:] if len(f["backward"]) > 2 else f["backward"]  # the warm-up step left out
    forward = f["forward"][1:] if len(f["forward"]) > 2 else f["forward"]

    def by(step: List[List[Any]], key: int) -> List[List[float]]:  # one span per replica (key 0) or thread (key 1)
        spans: Dict[Any, List[float]] = {}
        for entry in step:
            a, b = spans.get(entry[key], [entry[2], entry[3]])
            spans[entry[key]] = [min(a, entry[2]), max(b, entry[3])]
        return list(spans.values())

    threads = sorted({entry[1] for step in backward for entry in step})
    plan = lab.devices.detect(n, "DataParallel", placement=p["placement"])
    return {"devices": n, "replicas": max((len({e[0] for e in step}) for step in backward), default=0),
            "backward_thread_concurrency": stats.median([concurrency(by(step, 1)) for step in backward])
            if backward else 1.0,
            "backward_replica_overlap": stats.median([concurrency(by(step, 0)) for step in backward])
            if backward else 1.0,
            "forward_concurrency": stats.median([concurrency(step) for step in forward]) if forward else 1.0,
            "backward_threads": threads, "forward_threads": f["forward_threads"], "main_thread": f["main_thread"],
            "backward_ms": o.spread(tag, "backward_ms", [0]), "optimizer_ms": o.spread(tag, "optimizer_ms", [0]),
            "step_ms": o.spread(tag, "step_ms", [0]), "optimizer_devices": f["optimizer_devices"],
            "optimizer_tensors": f["optimizer_tensors"],
            "plan": {"kind": plan.kind, "label": plan.label, "gpus_used": plan.gpus_used}}


def e_data_wait(o: Observed) -> Dict[str, Any]:
    p = o.params
    workers = {}
    for label, rows in o.facts["rows"].items():
        data, step = o.spread(label, "data_ms", [0]), o.spread(label, "step_ms", [0])
        workers[label] = {"data_ms": data, "step_ms": step, "rows_in": rows["rows_in"], "rows_out": rows["rows_out"],
                          "data_share": data["median"] / step["median"] if data and step and step["median"] else 0.0}
    return {"devices": p["devices"], "sample_cost_ms": p["sample_cost_ms"], "num_workers": p["num_workers"],
            "workers": workers}


# -- verdicts --------------------------------------------------------------------------------------

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


EXPERIMENTS = (
    Experiment("completeness", "Output completeness and loss parity: 1 device vs DataParallel xN",
               ("1 device", "DataParallel xN"), metrics=("loss",), chart="line: loss per step",
               evidence=e_completeness),
    Experiment("python-overhead", "Python overhead per device: 1 device vs DataParallel threads vs DDP processes",
               ("1 device", "DataParallel xN", "DDP xN"), metrics=("forward_ms",), chart="bar: forward ms",
               evidence=e_overhead),
    Experiment("backward", "Each replica's backward and the optimizer step: when, and on which thread",
               ("DataParallel xN",), metrics=("backward_ms", "optimizer_ms"), chart="bar: step phases",
               evidence=e_backward),
    Experiment("data-wait", "Data-wait share of each step: num_workers=0 vs num_workers=N",
               ("num_workers=0", "num_workers=N"), metrics=("data_ms", "step_ms"),
               chart="stacked bar: data wait vs compute", evidence=e_data_wait),
)

CLAIMS = (
    Claim("incomplete", "This bottleneck manifests as incomplete processing, particularly when the computational "
          "load on the GPUs is significantly less than the communication and synchronization demands.",
          "completeness", v_incomplete),
    Claim("loss-irregular", "Incomplete results might manifest as unexpectedly high loss values, inconsistent "
          "training progress, or even silent failures.", "completeness", v_loss),
    Claim("gil-restricts", "While seemingly offering a straightforward approach to parallelization, DataParallel's "
          "reliance on the GIL significantly restricts true parallelism for computationally intensive operations "
          "within Python itself.", "python-overhead", v_gil),
    Claim("ddp-avoids-gil", "DDP avoids the GIL bottleneck by using the `nccl` backend (or other appropriate backends "
          "depending on the hardware), enabling efficient communication and gradient aggregation across multiple "
          "GPUs without the serialization imposed by the GIL.", "python-overhead", v_ddp_gil),
    Claim("no-improvement", "Consequently, the theoretical speedup achievable with multiple GPUs is far from realized, "
          "often leading to situations where using DataParallel provides minimal or no improvement compared to "
          "single-GPU training, and in some cases, even degraded performance due to the communication overhead "
          "outweighing any benefit from parallelism.", "python-overhead", v_no_improvement),
    Claim("python-grows", "The time spent in Python code –  handling data transfers, calculating loss, and updating "
          "model parameters – grows disproportionately.", "python-overhead", v_python_grows),
    Claim("large-batches", "This effect is especially pronounced with complex models or large batch sizes.",
          "python-overhead", v_large_batches),
    Claim("backward-sequential", "Observe how the `loss.backward()` and `optimizer.step()` calls (both involving "
          "substantial Python operations) are sequentially executed across the GPUs, despite the forward pass being "
          "potentially parallelized.", "backward", v_backward_sequential),
    Claim("gil-prevents-concurrency", "The GIL prevents true concurrency during these steps.", "backward",
          v_gil_concurrency),
    Claim("aggregation-bottleneck", "While the computation on the GPUs is genuinely parallelized, the synchronization "
          "and communication overhead (including gradient aggregation and parameter updates) are often bottlenecked "
          "by the GIL.", "backward", v_aggregation),
    Claim("data-bottleneck", "This can lead to data loading becoming a bottleneck, preventing the GPUs from being "
          "fully utilized and again resulting in incomplete results.", "data-wait", v_data),
    Claim("num-workers", "Multiple `num_workers` should be experimented with to optimize the balance between data "
          "loading and GPU processing.", "data-wait", v_workers),
)

SCENARIO = Scenario(
    id="incomplete-results-gil", title="Incomplete results? DataParallel and the GIL", source=SOURCE, source_title=SOURCE_TITLE,
    summary="Test the claim: output completeness and loss parity vs one device; Python overhead per device on "
            "threads vs DDP processes; DataLoader num_workers and the data-wait share of each step.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("devices"),),
    # What each choice of a step's question is, in verdicts (see Scenario.outcomes).
    outcomes={
        "completeness": ({"incomplete": ("does-not-hold",)}, {"incomplete": ("holds",)}),
        "python-overhead": ({"no-improvement": ("does-not-hold",)},
                            {"no-improvement": ("holds",), "python-grows": ("does-not-hold", "partly")},
                            {"no-improvement": ("holds",), "python-grows": ("holds",)}),
        # partly: one at a time here because these devices share one autograd worker.
        "backward": ({"backward-sequential": ("holds", "partly")}, {"backward-sequential": ("does-not-hold",)}),
        "data-wait": ({"data-bottleneck": ("partly",)}, {"data-bottleneck": ("does-not-hold",)}),
    },
)
