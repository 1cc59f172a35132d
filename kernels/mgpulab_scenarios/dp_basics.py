"""Scenario 1 — DataParallel basics (seed 004): split, replicate, gather, average, scaling."""
from __future__ import annotations

from typing import Any, Dict, List

import torch
import torch.nn.functional as F

from . import common as c
from .core import (PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, Verdict, at_most_devices, fmt,
                   load_template)

SOURCE = "004_7c517dd2c75ffa4d.txt"

PARAMETERS = (
    Parameter("batch_size", "int", 64, "rows in one input batch", 1, 512),
    Parameter("devices", "int", 4, "devices for DataParallel / DDP ranks: GPUs (shared when fewer than this), "
              "or emulated CPU devices", 1, 8),
    PLACEMENT,
    Parameter("hidden", "int", 32, "hidden width of the MLP", 2, 512),
    Parameter("d_in", "int", 16, "input features", 1, 256),
    Parameter("steps", "int", 3, "training steps for the equivalence run", 1, 20),
    Parameter("lr", "float", 0.05, "SGD learning rate", 1e-5, 1.0),
    Parameter("seed", "int", 0, "seed for data and initial weights", 0, 2 ** 31 - 1),
    Parameter("timing_repeats", "int", 5, "timed steps per variant in the speed-up sweep", 1, 50),
    Parameter("compare_ddp", "bool", True,
              "also time DDP x devices in the sweep (rank processes: gloo on CPU, NCCL on GPUs)"),
)

SPLIT_CELL = load_template("dp_basics_split")

EQUIV_CELL = load_template("dp_basics_equivalence")

REPLICATE_CELL = load_template("dp_basics_replication")

SCALING_CELL = load_template("dp_basics_scaling")

STEPS = (
    Step("split", "**How DataParallel splits a batch.** The article says the batch is divided *evenly*: "
         "64 rows on 4 GPUs become 4 chunks of 16. DataParallel uses `torch.chunk`: ceil(B/n) rows per "
         "device, so a batch that does not divide gives uneven chunks (and sometimes fewer chunks than "
         "devices). Outputs are gathered on device 0.",
         (Cell("split", SPLIT_CELL),),
         "With batch_size={batch_size} on {devices} devices, how many rows does each device get?",
         ("the same number on every device", "uneven chunks (last one smaller or missing)", "random"),
         ("splits-evenly", "gathered-on-device-0")),
    Step("equivalence", "**Same seed, same data: one device vs DataParallel.** The replicas' gradients flow "
         "back to the one original model (summed by autograd); the averaging comes from the loss mean over "
         "the gathered batch. Compare gradients and weights after a few SGD steps.",
         (Cell("equivalence", EQUIV_CELL),),
         "Are the gradients of DataParallel identical to single-device training at the same seed?",
         ("identical up to float rounding", "N times larger", "different"),
         ("full-batch-equivalence", "gradients-averaged")),
    Step("replication", "**Replication on every forward.** Each forward builds new replica modules "
         "(replicate) before running them; the time is paid every step.",
         (Cell("replication", REPLICATE_CELL),),
         "Is the model copied once, or on every forward?", ("once", "every forward"),
         ("replicated-every-forward",)),
    Step("scaling", "**Speed-up vs device count.** Time one training step with 1..N devices (and DDP×N). "
         "Devices that share hardware (emulated CPU devices on the host's cores, or virtual devices on fewer "
         "GPUs) cannot scale like separate GPUs — the label says which ran, and the phase split shows where "
         "the time goes.",
         (Cell("scaling", SCALING_CELL),),
         "With {devices} devices, what speed-up over one device do you expect?",
         ("about {devices}x", "more than 1x but less than {devices}x", "none or a slowdown"),
         ("not-linear", "myth-linear")),
)


# -- experiments -------------------------------------------------------------------------------

def run_split(p: Dict[str, Any]) -> Dict[str, Any]:
    model = c.mlp(p["seed"], p["d_in"], p["hidden"])
    wrapped = c.dp(model, p["devices"], p)
    x, _ = c.data(p["seed"], p["batch_size"], p["d_in"], to=c.device(p))
    with torch.no_grad():
        out = wrapped(x)
    ph = c.phases(wrapped)
    out_bytes = out.numel() * out.element_size()
    mem = list(ph.memory_bytes)
    known = [m for m in mem if m is not None]  # every device that got a chunk has its bytes counted
    return {
        "variant": f"DataParallel x{p['devices']}", "deviceMode": c.mode_label(p["devices"], "DataParallel", p),
        "batch_size": p["batch_size"], "devices": p["devices"], "samples_per_device": list(ph.samples),
        "chunks": len(ph.samples), "rows_scattered": sum(s or 0 for s in ph.samples),
        # an index for both wrappers here (torch types DataParallel's as int | device)
        "gathered_rows": int(out.shape[0]), "output_device": int(wrapped.output_device),  # type: ignore[arg-type]
        "output_bytes": out_bytes, "memory_bytes_per_device": mem,
        "device0_extra_bytes": (known[0] - max(known[1:])) if len(known) > 1 else 0,
        "phases_ms": {"scatter": c.r(ph.scatter_ms), "replicate": c.r(ph.replicate_ms),
                      "parallel_apply": c.r(ph.parallel_apply_ms), "gather": c.r(ph.gather_ms)},
    }


def run_equivalence(p: Dict[str, Any]) -> Dict[str, Any]:
    dev = c.device(p)
    x, y = c.data(p["seed"], p["batch_size"], p["d_in"], to=dev)
    single = c.mlp(p["seed"], p["d_in"], p["hidden"], to=dev)
    base = c.mlp(p["seed"], p["d_in"], p["hidden"], to=dev)
    wrapped = c.dp(base, p["devices"], p, keep_replicas=True)
    # one backward each: gradient comparison
    F.mse_loss(single(x), y).backward()
    F.mse_loss(wrapped(x), y).backward()
    g_single, g_dp = c.grads(single), c.grads(base)
    # per-chunk gradients on a fresh copy: what summing vs averaging per-device grads would give
    chunks_x, chunks_y = x.chunk(p["devices"]), y.chunk(p["devices"])
    per_chunk = []
    for cx, cy in zip(chunks_x, chunks_y):
        m = c.mlp(p["seed"], p["d_in"], p["hidden"], to=dev)
        (F.mse_loss(m(cx), cy, reduction="sum") / x.shape[0]).backward()
        per_chunk.append(c.grads(m))
    summed = [sum(gs) for gs in zip(*per_chunk)]
    means = []
    for cx, cy in zip(chunks_x, chunks_y):
        m = c.mlp(p["seed"], p["d_in"], p["hidden"], to=dev)
        F.mse_loss(m(cx), cy).backward()
        means.append(c.grads(m))
    averaged = [sum(gs) / len(means) for gs in zip(*means)]
    # training: same seed, same data, steps of SGD
    single = c.mlp(p["seed"], p["d_in"], p["hidden"], to=dev)
    base = c.mlp(p["seed"], p["d_in"], p["hidden"], to=dev)
    wrapped = c.dp(base, p["devices"], p)
    o1 = torch.optim.SGD(single.parameters(), lr=p["lr"])
    o2 = torch.optim.SGD(wrapped.parameters(), lr=p["lr"])
    l1 = [c.train_step(single, o1, x, y) for _ in range(p["steps"])]
    l2 = [c.train_step(wrapped, o2, x, y) for _ in range(p["steps"])]
    grad_scale = max(float(g.abs().max()) for g in g_single)
    return {
        "variants": ["1 device", f"DataParallel x{p['devices']}"],
        "chunk_rows": [int(t.shape[0]) for t in chunks_x],
        "max_grad_diff": c.max_abs_diff(g_single, g_dp), "grad_scale": grad_scale,
        "max_grad_diff_vs_sum_of_device_grads": c.max_abs_diff(summed, g_dp),
        "max_grad_diff_vs_mean_of_device_mean_grads": c.max_abs_diff(averaged, g_dp),
        "max_param_diff_after_steps": c.max_abs_diff(c.params_of(single), c.params_of(base)),
        "steps": p["steps"], "loss_single": [c.r(v, 6) for v in l1], "loss_dp": [c.r(v, 6) for v in l2],
    }


def run_replication(p: Dict[str, Any]) -> Dict[str, Any]:
    forwards = 3
    out: Dict[str, Any] = {"forwards": forwards, "devices": p["devices"]}
    for label, hidden in (("hidden", p["hidden"]), ("hidden_x4", p["hidden"] * 4)):
        model = c.mlp(p["seed"], p["d_in"], hidden)
        wrapped = c.dp(model, p["devices"], p, keep_replicas=True)
        x, _ = c.data(p["seed"], p["batch_size"], p["d_in"], to=c.device(p))
        kept, times = [], []  # keep the replicas alive so id() cannot be reused
        for _ in range(forwards):
            wrapped(x).sum().backward()
            kept.extend(wrapped.last_replicas)
            times.append(c.r(c.phases(wrapped).replicate_ms))
        out[label] = {"hidden_width": hidden, "params": sum(q.numel() for q in model.parameters()),
                      "replicas_per_forward": len(wrapped.last_replicas),
                      "distinct_replica_objects": len({id(m) for m in kept}), "replicate_ms": times}
    return out


def _ddp_step_ms(p: Dict[str, Any], n: int) -> Dict[str, Any]:
    from . import rank_fns
    res = c.launch(rank_fns.ddp_train, n, p, kwargs=dict(seed=p["seed"], batch=p["batch_size"], d_in=p["d_in"],
                                                         hidden=p["hidden"], steps=p["timing_repeats"] + 1,
                                                         lr=p["lr"]),
                   echo=False, timeout_s=20, time_limit_s=90, hang_timeout_s=30)
    if not res.ok:
        return {"status": res.status, "summary": res.summary}
    step = max(rr["step_ms"] for rr in res.results)
    return {"status": res.status, "step_ms": c.r(step), "per_rank_step_ms": [c.r(rr["step_ms"]) for rr in res.results]}


def run_scaling(p: Dict[str, Any]) -> Dict[str, Any]:
    dev = c.device(p)
    x, y = c.data(p["seed"], p["batch_size"], p["d_in"], to=dev)
    rows: List[Dict[str, Any]] = []
    for n in range(1, p["devices"] + 1):
        model = c.mlp(p["seed"], p["d_in"], p["hidden"], to=dev)
        m = model if n == 1 else c.dp(model, n, p)
        opt = torch.optim.SGD(m.parameters(), lr=p["lr"])
        ms = c.median_ms(lambda: c.train_step(m, opt, x, y), p["timing_repeats"], on=dev)
        row = {"devices": n, "engine": "single" if n == 1 else "DataParallel", "step_ms": c.r(ms)}
        if n > 1:
            ph = c.phases(m)
            row["phases_ms"] = {"scatter": c.r(ph.scatter_ms), "replicate": c.r(ph.replicate_ms),
                                "parallel_apply": c.r(ph.parallel_apply_ms), "gather": c.r(ph.gather_ms)}
        rows.append(row)
    base = rows[0]["step_ms"]
    for row in rows:
        row["speedup"] = c.r(base / row["step_ms"]) if row["step_ms"] else None
    out: Dict[str, Any] = {"rows": rows, "devices": p["devices"], "speedup_at_max": rows[-1]["speedup"],
                           "deviceMode": c.mode_label(p["devices"], "DataParallel", p)}
    if p["compare_ddp"] and p["devices"] > 1:
        ddp = _ddp_step_ms(p, p["devices"])
        ddp["devices"] = p["devices"]
        if "step_ms" in ddp:
            ddp["speedup"] = c.r(base / ddp["step_ms"])
        out["ddp"] = ddp
    return out


# -- verdicts ------------------------------------------------------------------------------------

def v_splits_evenly(e: Dict[str, Any]) -> Verdict:
    s, b, n = e["samples_per_device"], e["batch_size"], e["devices"]
    if e["rows_scattered"] != b:
        return "does-not-hold", f"only {e['rows_scattered']} of {b} rows were scattered ({s})"
    if len(s) == n and len(set(s)) == 1:
        return "holds", f"{b} rows on {n} devices -> {s}: every device got {s[0]}"
    return "partly", (f"{b} rows on {n} devices -> {s} ({len(s)} chunk(s) for {n} devices): torch.chunk gives "
                      f"ceil({b}/{n}) = {-(-b // n)} per device, so the split is even only when {n} divides {b}")


def v_gathered(e: Dict[str, Any]) -> Verdict:
    ok_rows = e["gathered_rows"] == e["batch_size"]
    extra = e["device0_extra_bytes"]
    if ok_rows and e["output_device"] == 0 and (e["devices"] == 1 or extra >= e["output_bytes"]):
        return "holds", (f"all {e['gathered_rows']} output rows gathered on device {e['output_device']}; device 0 "
                         f"holds {extra} extra bytes (the {e['output_bytes']}-byte gathered output)")
    return "does-not-hold", (f"gathered {e['gathered_rows']} of {e['batch_size']} rows on device "
                             f"{e['output_device']}; device 0 extra bytes {extra}")


def v_full_batch(e: Dict[str, Any]) -> Verdict:
    d, p = e["max_grad_diff"], e["max_param_diff_after_steps"]
    tol = 1e-5 * max(1.0, e["grad_scale"])
    text = (f"max |grad diff| = {fmt(d)}, max |weight diff| after {e['steps']} steps = {fmt(p)}; "
            f"final loss {e['loss_single'][-1]} (1 device) vs {e['loss_dp'][-1]} (DataParallel)")
    if d <= tol and p <= 1e-4:
        return "holds", text
    if d <= 1e-3 * max(1.0, e["grad_scale"]):
        return "partly", text + " (small but above float rounding)"
    return "does-not-hold", text


def v_averaged(e: Dict[str, Any]) -> Verdict:
    s, m = e["max_grad_diff_vs_sum_of_device_grads"], e["max_grad_diff_vs_mean_of_device_mean_grads"]
    tol = 1e-5 * max(1.0, e["grad_scale"])
    rows = e["chunk_rows"]
    if m <= tol and s <= tol:
        return "holds", (f"with even chunks {rows} the result equals both the mean of per-device mean-loss "
                          f"gradients (diff {fmt(m)}) and the sum of per-device contributions (diff {fmt(s)}): "
                          "mechanically DataParallel sums replica gradients into the original; the average comes "
                          "from the loss mean over the gathered batch")
    if m <= tol:
        return "holds", f"DataParallel gradient equals the average of per-device gradients (diff {fmt(m)})"
    if s <= tol:
        return "partly", (f"chunks {rows} are uneven: DataParallel's gradient equals the SUM of per-device "
                          f"contributions (diff {fmt(s)}) and differs from the plain average of per-device "
                          f"gradients by {fmt(m)} — it is a full-batch gradient, not an average over devices")
    return "does-not-hold", f"neither sum (diff {fmt(s)}) nor average (diff {fmt(m)}) matches"


def v_replicated(e: Dict[str, Any]) -> Verdict:
    a = e["hidden"]
    if e["devices"] == 1 or a["replicas_per_forward"] <= 1:
        return "partly", (f"with {e['devices']} device(s) and {a['replicas_per_forward']} chunk(s) DataParallel "
                          "runs the module directly, no replication to observe")
    fresh = a["distinct_replica_objects"] == a["replicas_per_forward"] * e["forwards"]
    times = a["replicate_ms"]
    if fresh and all(t > 0 for t in times):
        return "holds", (f"{a['distinct_replica_objects']} distinct replica objects over {e['forwards']} forwards "
                         f"({a['replicas_per_forward']} per forward); replicate took {times} ms each time, "
                         f"{e['hidden_x4']['replicate_ms']} ms with a {e['hidden_x4']['params']}-parameter model")
    return "does-not-hold", (f"{a['distinct_replica_objects']} distinct replicas over {e['forwards']} forwards "
                             f"(replicate ms {times})")


def v_not_linear(e: Dict[str, Any]) -> Verdict:
    n, s = e["devices"], e["speedup_at_max"]
    table = ", ".join(f"{r['devices']}: {r['step_ms']} ms (x{r['speedup']})" for r in e["rows"])
    ddp = e.get("ddp") or {}
    ddp_text = f"; DDP x{n}: {ddp.get('step_ms')} ms (x{ddp.get('speedup')})" if ddp.get("step_ms") else ""
    if n == 1:
        return "partly", f"only 1 device: nothing to scale ({table})"
    if s >= 0.9 * n:
        return "does-not-hold", f"near-linear speed-up x{s} on {n} devices ({table}{ddp_text})"
    if s > 1.05:
        return "holds", f"speed-up x{s} on {n} devices, below linear ({table}{ddp_text})"
    return "partly", (f"not linear, but no speed-up at all here: x{s} on {n} devices ({table}{ddp_text}); "
                      f"{e['deviceMode']} — these devices share hardware")


def v_myth_linear(e: Dict[str, Any]) -> Verdict:
    n = e["devices"]
    worst = min((r["speedup"] / r["devices"] for r in e["rows"]), default=1.0)
    table = ", ".join(f"{r['devices']}: x{r['speedup']}" for r in e["rows"])
    if worst >= 0.9:
        return "holds", f"every device count scaled within 10% of linear ({table})"
    return "does-not-hold", f"speed-up per device fell to {fmt(worst)} of linear ({table}, up to {n} devices)"


EXPERIMENTS = (
    Experiment("split", "Batch split and gather", ("DataParallel xN",), run_split,
               ("samples_per_device", "memory_bytes_per_device"), "bar: samples per device"),
    Experiment("equivalence", "1 device vs DataParallel xN, same seed and data", ("1 device", "DataParallel xN"),
               run_equivalence, ("loss", "max_grad_diff"), "line: loss per step, both variants"),
    Experiment("replication", "Replication on every forward", ("hidden", "hidden x4"), run_replication,
               ("replicate_ms",), "bar: replicate ms per forward"),
    Experiment("scaling", "Step time vs device count (1 device, DataParallel x2..N, DDP xN)",
               ("1 device", "DataParallel x2..N", "DDP xN"), run_scaling, ("step_ms", "speedup"),
               "bar: step ms and speed-up per device count"),
)

CLAIMS = (
    Claim("splits-evenly", "For example, a batch of 64 images on 4 GPUs becomes 4 chunks of 16 images each.",
          "split", v_splits_evenly),
    Claim("gathered-on-device-0", "DataParallel sends each chunk to a GPU, runs the model forward pass, then "
          "collects all outputs on the default GPU.", "split", v_gathered),
    Claim("full-batch-equivalence", "Model weights update as if training on the full batch at once.",
          "equivalence", v_full_batch),
    Claim("gradients-averaged", "DataParallel then averages these gradients across GPUs to keep the model weights "
          "synchronized.", "equivalence", v_averaged),
    Claim("replicated-every-forward", "Internally, DataParallel copies the model to each GPU at every forward call.",
          "replication", v_replicated),
    Claim("not-linear", "Speedup improves with more GPUs but not linearly; overhead grows.", "scaling",
          v_not_linear),
    Claim("myth-linear", "DataParallel always makes training faster in direct proportion to the number of GPUs.",
          "scaling", v_myth_linear),
)

SCENARIO = Scenario(
    id="dp-basics", title="DataParallel basics: split, replicate, gather, average", source=SOURCE,
    summary="Measure how DataParallel splits a batch, where outputs land, whether gradients match one device, "
            "how often the model is replicated, and how step time scales with the device count.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("devices"),),
)
