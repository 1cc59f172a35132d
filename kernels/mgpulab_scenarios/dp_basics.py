"""Scenario 1 — DataParallel basics (seed 004): split, replicate, gather, average, scaling."""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

import mgpulab as lab

from . import stats
from .core import (PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, Verdict, at_most_devices, fmt,
                   load_template)
from .evidence import Observed
from .stats import compare_spreads as _compare, spread_text as _spread_text

SOURCE = "004_7c517dd2c75ffa4d.txt"
SOURCE_TITLE = "DataParallel basics in PyTorch - Deep Dive"  # the article's own title, shown with the file name as a detail

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
    Parameter("timing_repeats", "int", 5, "timed steps (or forwards) per variant after a warm-up step; "
              "timing verdicts need 3 or more to see their spread", 2, 50),
    Parameter("compare_ddp", "bool", True,
              "also time DDP x devices in the sweep (rank processes: gloo on CPU, NCCL on GPUs)"),
)

SPLIT_CELL = load_template("dp_basics_split")

EQUIV_CELL = load_template("dp_basics_equivalence")

REPLICATE_CELL = load_template("dp_basics_replication")

SCALING_CELL = load_template("dp_basics_scaling")

PLACEMENT_CELL = load_template("dp_basics_placement")

STEPS = (
    Step("split", "**How DataParallel splits a batch.** The article says the batch is divided *evenly*. This "
         "cell scatters a batch of {{batch_size}} rows over {{devices}} devices, counts the rows each device "
         "gets, and looks at where the outputs come back.",
         (Cell("split", SPLIT_CELL),),
         "With batch_size={batch_size} on {devices} devices, how many rows does each device get?",
         ("the same number on every device", "uneven chunks (last one smaller or missing)", "random"),
         ("splits-evenly", "one-chunk-per-gpu", "gathered-on-device-0", "runs-in-parallel", "uneven-imbalance"),
         tells=((), (), ("random", "shuffled")),
         explanation="**Why.** DataParallel splits with `torch.chunk`: ceil(B/n) rows per device, so a batch "
                     "that does not divide gives uneven chunks (the last one smaller, and sometimes fewer "
                     "chunks than devices). The outputs are gathered on device 0."),
    Step("equivalence", "**Same seed, same data: one device vs DataParallel.** Train both at the same seed on "
         "the same batch and compare gradients and weights after a few SGD steps.",
         (Cell("equivalence", EQUIV_CELL),),
         "Are the gradients of DataParallel identical to single-device training at the same seed?",
         ("identical up to float rounding", "N times larger", "different"),
         ("full-batch-equivalence", "gradients-averaged", "update-on-main-gpu"),
         explanation="**Why.** The replicas' gradients flow back to the one original model, summed by autograd; "
                     "the averaging comes from the loss mean over the gathered batch, so the result is the "
                     "single-device gradient up to float rounding."),
    Step("replication", "**Replication.** Run several forwards of a DataParallel model, and watch the replica "
         "modules and the time of each phase of the forward.",
         (Cell("replication", REPLICATE_CELL),),
         "Is the model copied once, or on every forward?", ("once", "every forward"),
         ("replicated-every-forward", "replication-cost", "ddp-replicates-once"),
         tells=(("once", "one time"), ("each forward", "per step", "every step")),
         explanation="**Why.** Each forward builds new replica modules (`replicate`) before running them, so "
                     "the copy is paid on every step, not once. DDP copies once: each rank process keeps its one "
                     "model object for the whole run, and only gradients travel."),
    Step("scaling", "**Speed-up vs device count.** Time one training step with 1 to {{devices}} devices (and "
         "DDP over {{devices}} ranks). The label says which devices ran (separate GPUs, virtual devices "
         "sharing a GPU, or the CPU emulation), and the phase split shows where the time goes.",
         (Cell("scaling", SCALING_CELL),),
         "With {devices} devices, what speed-up over one device do you expect?",
         ("about {devices}x", "more than 1x but less than {devices}x", "none or a slowdown"),
         ("not-linear", "myth-linear", "ddp-more-efficient"),
         explanation="**Why.** DataParallel pays scatter, replicate and gather on every step, from one "
                     "process. Devices that share hardware (emulated CPU devices on the host's cores, or "
                     "virtual devices on fewer GPUs) cannot scale like separate GPUs at all: a speed-up above "
                     "the device count there is noise, and is flagged as such."),
    Step("placement", "**Where the model and the input must be (CUDA only).** torch's own `nn.DataParallel` is "
         "called with the model left on the CPU, with the wrapper moved after wrapping, and with the input on "
         "the CPU (and on another GPU). On a host without a GPU it cannot be measured: the verdicts say so.",
         (Cell("placement", PLACEMENT_CELL),),
         "The model is on cuda:0 and the input batch is still on the CPU. What does DataParallel do?",
         ("a device-mismatch error", "it copies the input to the GPUs and runs"),
         ("model-on-gpu-first", "inputs-on-default-gpu"),
         explanation="**Why.** DataParallel checks, at each forward, that the module's parameters and buffers "
                     "are on `device_ids[0]`: a model left on the CPU fails then, however it was wrapped. The "
                     "input is scattered from wherever it is (`scatter` copies each chunk to its device), so "
                     "it need not start on the default GPU."),
)


# -- evidence: what each cell recorded ------------------------------------------------------------

def concurrency(intervals: Sequence[Sequence[float]]) -> float:
    """How many replica forwards ran at once on average: their summed durations over the time at least one
    ran (1.0: one after another; N: all N side by side)."""
    spans = sorted((float(a), float(b)) for a, b in intervals if b > a)
    if not spans:
        return 1.0
    busy, (start, end) = 0.0, spans[0]
    for a, b in spans[1:]:
        if a > end:
            busy, start, end = busy + end - start, a, b
        else:
            end = max(end, b)
    busy += end - start
    return sum(b - a for a, b in spans) / busy if busy > 0 else 1.0


def _plan(n: int, engine: str, p: Dict[str, Any]) -> Dict[str, Any]:
    mode = lab.devices.detect(n, engine, placement=p["placement"])
    return {"kind": mode.kind, "host_cores": mode.host_cores, "label": mode.label}


def e_split(o: Observed) -> Dict[str, Any]:
    p, f = o.params, o.facts
    tag = f"DataParallel x{p['devices']}"
    ranks = o.ranks(tag, "samples")
    samples = [stats.bar_value(o, tag, "samples", [r]) for r in ranks]
    memory = [o.peak(tag, "memory_mib", [r]) for r in ranks]  # the memory chart's bar: the largest value
    timed = [iv for iv in f["replica_intervals"][1:] if len(iv) > 1] if len(f["replica_intervals"]) > 2 \
        else [iv for iv in f["replica_intervals"] if len(iv) > 1]
    overlaps = [concurrency(iv) for iv in timed]
    known = [m for m in memory if m is not None]
    return {
        "variant": tag, "batch_size": p["batch_size"], "devices": p["devices"], "samples_per_device": samples,
        "chunks": len(samples), "rows_scattered": sum(s or 0 for s in samples),
        "gathered_rows": int(f["gathered_rows"]), "output_device": int(f["output_device"]),
        "output_bytes": int(f["output_bytes"]), "memory_mib_per_device": memory,
        "device0_extra_bytes": (known[0] - max(known[1:])) * 2 ** 20 if len(known) > 1 else 0.0,
        "apply_ms": [o.spread(tag, "apply_ms", [r]) for r in ranks],
        "concurrency": stats.median(overlaps) if overlaps else 1.0, "forwards_timed": len(overlaps),
        "threads": list(f["threads"]), "plan": _plan(p["devices"], "DataParallel", p),
    }


def e_equivalence(o: Observed) -> Dict[str, Any]:
    p, f = o.params, o.facts
    dp = f"DataParallel x{p['devices']}"
    return {"variants": ["1 device", dp], "steps": p["steps"], "chunk_rows": f["chunk_rows"],
            "max_grad_diff": f["max_grad_diff"], "grad_scale": f["grad_scale"],
            "max_grad_diff_vs_sum_of_device_grads": f["max_grad_diff_vs_sum_of_device_grads"],
            "max_grad_diff_vs_mean_of_device_mean_grads": f["max_grad_diff_vs_mean_of_device_mean_grads"],
            "max_param_diff_after_steps": f["max_param_diff_after_steps"], "update": dict(f["update"]),
            "devices": p["devices"], "plan": _plan(p["devices"], "DataParallel", p),
            "loss_single": {"first": o.first("1 device", "loss"), "last": o.last("1 device", "loss")},
            "loss_dp": {"first": o.first(dp, "loss"), "last": o.last(dp, "loss")}}


def e_replication(o: Observed) -> Dict[str, Any]:
    p = o.params
    sizes = []
    for tag, model in o.facts["models"].items():
        replicate, step = o.spread(tag, "replicate_ms", [0]), o.spread(tag, "step_ms", [0])
        sizes.append({"tag": tag, **model, "replicate_ms": replicate, "step_ms": step,
                      "replicate_share": replicate["median"] / step["median"] if replicate and step and step["median"] else None,
                      "replicate_ms_per_step": [v for _, v in o.values(tag, "replicate_ms", [0])]})
    ddp = [{k: r[k] for k in ("rank", "steps", "distinct_modules", "distinct_parameter_sets", "distinct_storages",
                              "tensors", "device")} for r in o.facts.get("ddp") or []]
    return {"devices": p["devices"], "sizes": sizes, "ddp": ddp}


def e_placement(o: Observed) -> Dict[str, Any]:
    f = o.facts
    return {"gpus": int(f["gpus"]), "device_ids": list(f["device_ids"]), "torch": str(f["torch_version"]),
            "placement": o.params["placement"], "cases": dict(f["cases"])}


def e_scaling(o: Observed) -> Dict[str, Any]:
    p = o.params
    n = p["devices"]
    tags = ["1 device"] + [f"DataParallel x{k}" for k in range(2, n + 1)]
    if p["compare_ddp"] and n > 1:
        tags.append(f"DDP x{n}")
    variants = []
    for tag in tags:
        engine = "single" if tag == "1 device" else tag.split(" x")[0]
        count = stats.device_count(tag) or 1
        variants.append({"tag": tag, "engine": engine, "devices": count, "step_ms": o.spread(tag, "step_ms"),
                         "speedup": o.speedup(tag, "1 device"),
                         "plan": _plan(count, "DataParallel" if engine == "single" else engine, p)})
    return {"devices": n, "variants": variants, "basis": stats.speedup_basis(o.metrics),
            "plan": _plan(n, "DataParallel", p)}


# -- verdicts ------------------------------------------------------------------------------------

def v_splits_evenly(e: Dict[str, Any]) -> Verdict:
    s, b, n = [int(v) for v in e["samples_per_device"]], e["batch_size"], e["devices"]
    if e["rows_scattered"] != b:
        return "does-not-hold", f"only {fmt(e['rows_scattered'])} of {b} rows were scattered ({s})"
    if len(s) == n and len(set(s)) == 1:
        return "holds", f"{b} rows on {n} devices -> {s}: every device got {s[0]}"
    return "partly", (f"{b} rows on {n} devices -> {s} ({len(s)} chunk(s) for {n} devices): torch.chunk gives "
                      f"ceil({b}/{n}) = {-(-b // n)} per device, so the split is even only when {n} divides {b}")


def v_one_chunk_per_gpu(e: Dict[str, Any]) -> Verdict:
    s, b, n = [int(v) for v in e["samples_per_device"]], e["batch_size"], e["devices"]
    text = f"{b} rows on {n} devices -> {e['chunks']} chunk(s) {s}"
    if n == 1:
        return "partly", text + " (one device: nothing to split)"
    if e["chunks"] == n:
        return "holds", text + ": one chunk per device"
    return "partly", (text + f": torch.chunk makes chunks of ceil({b}/{n}) = {-(-b // n)} rows, so only "
                      f"{e['chunks']} devices get work and {n - e['chunks']} stay idle")


def v_gathered(e: Dict[str, Any]) -> Verdict:
    ok_rows = e["gathered_rows"] == e["batch_size"]
    extra = e["device0_extra_bytes"]
    if ok_rows and e["output_device"] == 0 and (e["devices"] == 1 or extra >= 0.99 * e["output_bytes"]):
        return "holds", (f"all {e['gathered_rows']} output rows gathered on device {e['output_device']}; device 0 "
                         f"holds {fmt(extra)} extra bytes (the {e['output_bytes']}-byte gathered output)")
    return "does-not-hold", (f"gathered {e['gathered_rows']} of {e['batch_size']} rows on device "
                             f"{e['output_device']}; device 0 extra bytes {fmt(extra)}")


def v_imbalance(e: Dict[str, Any]) -> Verdict:
    s = [int(v) for v in e["samples_per_device"]]
    if len(s) < 2 or len(set(s)) == 1:
        return "partly", (f"chunks {s} are even here, so there is no imbalance to measure: choose a batch_size that "
                          f"{e['devices']} does not divide")
    big, small = s.index(max(s)), s.index(min(s))
    memory = e["memory_mib_per_device"]
    a, b = e["apply_ms"][big], e["apply_ms"][small]
    text = (f"device {big} got {s[big]} rows, device {small} {s[small]}: tracked memory {fmt(memory[big])} vs "
            f"{fmt(memory[small])} MiB; forward {_spread_text(a)} vs {_spread_text(b)}")
    comparison = _compare(a, b)
    if comparison is None or not comparison.conclusive:
        why = comparison.reason if comparison else "no timing"
        return "inconclusive", (text + f" — memory follows the rows, but for the time {why}; {stats.ADVICE}")
    if a["median"] > b["median"]:
        return "holds", text + " — the bigger chunk costs more memory and more time: the others wait for it"
    return "partly", text + " — memory follows the rows, the time did not"


def v_parallel(e: Dict[str, Any]) -> Verdict:
    k, n = e["concurrency"], e["devices"]
    apply = [x["median"] for x in e["apply_ms"] if x]
    text = (f"median concurrency of the replicas' forwards {fmt(k)} (1 = one after another, {len(apply)} = all at "
            f"once) over {e['forwards_timed']} forwards, on threads {e['threads']}; each replica's forward took "
            f"a median {fmt(max(apply) if apply else 0.0)} ms; {e['plan']['label']}")
    if n == 1 or len(apply) < 2:
        return "partly", text + " (one replica: nothing runs in parallel)"
    if k >= 1.5:
        return "holds", text + " — the replicas ran side by side"
    if max(apply) < 1.0:
        return "inconclusive", (text + " — each forward is shorter than starting a thread, so no overlap can show; "
                                "raise hidden or batch_size")
    if k >= 1.15:
        return "partly", text + " — the replicas overlapped only partly"
    return "does-not-hold", text + " — the replicas ran one after another"


def v_full_batch(e: Dict[str, Any]) -> Verdict:
    d, p = e["max_grad_diff"], e["max_param_diff_after_steps"]
    tol = 1e-5 * max(1.0, e["grad_scale"])
    text = (f"max |grad diff| = {fmt(d)}, max |weight diff| after {e['steps']} steps = {fmt(p)}; "
            f"final loss {fmt(e['loss_single']['last'], 6)} (1 device) vs {fmt(e['loss_dp']['last'], 6)} "
            "(DataParallel)")
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
    a = e["sizes"][0]
    if e["devices"] == 1 or a["replicas_per_forward"] <= 1:
        return "partly", (f"with {e['devices']} device(s) and {a['replicas_per_forward']} chunk(s) DataParallel "
                          "runs the module directly, no replication to observe")
    fresh = a["distinct_replica_objects"] == a["replicas_per_forward"] * a["forwards"]
    times = a["replicate_ms_per_step"]
    text = (f"{a['distinct_replica_objects']} distinct replica objects over {a['forwards']} forwards "
            f"({a['replicas_per_forward']} per forward); replicate took {_spread_text(a['replicate_ms'])} each step")
    if fresh and times and all(t > 0 for t in times):
        return "holds", text
    return "does-not-hold", text


def v_replication_cost(e: Dict[str, Any]) -> Verdict:
    small, large = e["sizes"][0], e["sizes"][-1]
    if e["devices"] == 1 or small["replicas_per_forward"] <= 1:
        return "partly", f"{e['devices']} device(s): nothing is replicated, so replication costs nothing"
    text = (f"replicate {_spread_text(small['replicate_ms'])} = {fmt(100 * (small['replicate_share'] or 0))}% of a "
            f"step with {small['params']} parameters; {_spread_text(large['replicate_ms'])} = "
            f"{fmt(100 * (large['replicate_share'] or 0))}% with {large['params']}")
    comparison = _compare(large["replicate_ms"], small["replicate_ms"])
    if comparison is None or not comparison.conclusive:
        return "inconclusive", text + f" — {comparison.reason if comparison else 'no timing'}; {stats.ADVICE}"
    if large["replicate_ms"]["median"] <= small["replicate_ms"]["median"]:
        return "does-not-hold", text + " — the larger model did not replicate slower"
    if (large["replicate_share"] or 0) >= 0.1:
        return "holds", text + " — replication grows with the model and is a real share of the step"
    return "partly", text + " — it grows with the model, but stays a small share of the step here"


def v_ddp_replicates_once(e: Dict[str, Any]) -> Verdict:
    a, ranks = e["sizes"][0], e.get("ddp") or []
    if e["devices"] == 1 or not ranks:
        return "inconclusive", (f"no DDP ranks in this run ({e['devices']} device(s)): set devices to 2 or more "
                                "to compare DDP with DataParallel")
    dp = (f"DataParallel made {a['distinct_replica_objects']} distinct replica objects over {a['forwards']} forwards "
          f"({a['replicas_per_forward']} per forward)")
    ddp = "; ".join(f"DDP rank {r['rank']} ran {r['distinct_modules']} module object(s) and "
                    f"{r['distinct_parameter_sets']} parameter set(s) (storages: {r['distinct_storages']}) over "
                    f"{r['steps']} steps on {r['device']}" for r in ranks)
    text = f"{ddp}; {dp}"
    once = all(r["distinct_modules"] == 1 and r["distinct_parameter_sets"] == 1 and r["distinct_storages"] == 1
               for r in ranks)
    if not once:
        return "does-not-hold", text + " — a DDP rank ran a new copy of the model during training"
    if a["replicas_per_forward"] > 1 and a["distinct_replica_objects"] == a["replicas_per_forward"] * a["forwards"]:
        return "holds", (text + " — each DDP rank keeps its one copy for the whole run, where DataParallel copies "
                         "on every forward")
    return "partly", text + " — DDP kept one copy per rank, but DataParallel did not copy per forward here either"


def v_main_gpu_update(e: Dict[str, Any]) -> Verdict:
    u, n = e["update"], e["devices"]
    text = (f"optimizer.step updated {u['optimizer_tensors']} tensors on {u['optimizer_devices']} — the one model's "
            f"{u['model_tensors']} ({'the same objects' if u['optimizer_holds_the_model'] else 'other objects'}), "
            f"not a copy per device; the last forward's {u['replicas']} replica(s) ran on {u['replica_devices']}; "
            f"device 0 is {u['device0']}")
    if not u["optimizer_holds_the_model"] or u["optimizer_tensors"] != u["model_tensors"]:
        return "does-not-hold", text + " — the update is not applied to the one model"
    if u["optimizer_devices"] != [u["device0"]]:
        return "partly", text + " — one model is updated, but not all on device 0"
    if n == 1 or len(u["replica_devices"]) < 2:
        return "inconclusive", (text + f" — one model is updated, on device 0; but every device here is "
                                f"{u['replica_devices'] or [u['device0']]} ({e['plan']['label']}), so that the update "
                                "runs on the main device rather than the others cannot show: run on 2 or more GPUs")
    return "holds", text + " — the update runs once, on device 0; the other devices only hold replicas"


def _placement_missing(e: Dict[str, Any]) -> Optional[str]:
    if e["gpus"]:
        return None
    where = "placement is cpu" if e["placement"] == "cpu" else "this host has no CUDA GPU"
    return (f"needs a GPU: {where}, and torch's DataParallel runs the module as is without CUDA (torch "
            f"{e['torch']}), so where the model and the input must be cannot be measured; run this cell on a GPU "
            "host with placement auto")


def _case(e: Dict[str, Any], key: str) -> str:
    c = e["cases"].get(key)
    if c is None:
        return "not tried"
    return f"ran, output on {c['output_device']}" if c["ok"] else f"failed ({c['error']})"


def v_model_on_gpu_first(e: Dict[str, Any]) -> Verdict:
    missing = _placement_missing(e)
    if missing:
        return "inconclusive", missing
    text = (f"torch {e['torch']}, device_ids {e['device_ids']}: model left on the CPU and wrapped, input on cuda:0 — "
            f"{_case(e, 'cpu_model')}; wrapper moved with .cuda() after wrapping — {_case(e, 'moved_after_wrap')}")
    plain, moved = e["cases"]["cpu_model"], e["cases"]["moved_after_wrap"]
    if plain["ok"]:
        if str(plain["output_device"]).startswith("cpu"):
            return "holds", text + " — no error, but it ran on the CPU: the slow fallback"
        return "does-not-hold", text + " — it ran on the GPU anyway"
    if moved["ok"]:
        return "partly", (text + " — a model left on the CPU fails at the first forward (DataParallel checks there), "
                          "but moving it after wrapping works: it must be on the GPU before the forward, not before "
                          "wrapping, and nothing falls back to the CPU")
    return "holds", text + " — the model must be on the GPU before wrapping"


def v_inputs_on_default_gpu(e: Dict[str, Any]) -> Verdict:
    missing = _placement_missing(e)
    if missing:
        return "inconclusive", missing
    text = (f"torch {e['torch']}, device_ids {e['device_ids']}, model on cuda:0: input on the CPU — "
            f"{_case(e, 'cpu_input')}; input on another GPU — {_case(e, 'other_gpu_input')}")
    cpu, other = e["cases"]["cpu_input"], e["cases"].get("other_gpu_input")
    if not cpu["ok"]:
        return "holds", text + " — inputs off the default GPU raise an error"
    if other is not None and not other["ok"]:
        return "partly", text + " — a CPU input is scattered, but an input on another GPU fails"
    return "does-not-hold", (text + " — scatter copies each chunk from wherever the input is to its device: no "
                             "error from an input off the default GPU")


def _speed_row(e: Dict[str, Any], tag: str) -> Optional[Dict[str, Any]]:
    return next((r for r in e["variants"] if r["tag"] == tag), None)


def _table(e: Dict[str, Any]) -> str:
    return ", ".join(f"{r['tag']}: {fmt(r['step_ms']['median']) if r['step_ms'] else '-'} ms (x{fmt(r['speedup'])})"
                     for r in e["variants"])


def _impossible(e: Dict[str, Any]) -> Optional[str]:
    for r in e["variants"]:
        reason = stats.impossible_speedup(r["speedup"], r["devices"], r["plan"]["kind"], r["plan"]["host_cores"])
        if reason:
            return f"{r['tag']}: {reason}"
    return None


def v_not_linear(e: Dict[str, Any]) -> Verdict:
    n = e["devices"]
    base, top = _speed_row(e, "1 device"), _speed_row(e, f"DataParallel x{n}")
    if n == 1 or top is None or base is None:
        return "inconclusive", f"only 1 device: nothing to scale ({_table(e)}); set devices to 2 or more"
    table, s = _table(e), top["speedup"]
    impossible = _impossible(e)
    if impossible:
        return "inconclusive", f"{table} — {impossible}; {stats.ADVICE}"
    comparison = _compare(base["step_ms"], top["step_ms"])
    if comparison is None or not comparison.conclusive:
        return "inconclusive", (f"{table} — 1 device {_spread_text(base['step_ms'])} vs DataParallel x{n} "
                                f"{_spread_text(top['step_ms'])}: {comparison.reason if comparison else 'no timing'}; "
                                f"{stats.ADVICE}")
    if s is not None and s >= 0.9 * n:
        return "does-not-hold", f"near-linear speed-up x{fmt(s)} on {n} devices ({table})"
    if s is not None and s > 1.05:
        return "holds", f"speed-up x{fmt(s)} on {n} devices, below linear ({table})"
    # "Speed-up improves with more GPUs" is what a slowdown contradicts: it does not hold, whatever the linearity.
    return "does-not-hold", (f"no speed-up at all: x{fmt(s)} on {n} devices, so more devices did not make it faster "
                             f"({table}); {e['plan']['label']}")


def v_myth_linear(e: Dict[str, Any]) -> Verdict:
    n, table = e["devices"], _table(e)
    rows = [r for r in e["variants"] if r["engine"] == "DataParallel" and r["speedup"] is not None]
    if not rows:
        return "inconclusive", f"only 1 device: nothing to scale ({table}); set devices to 2 or more"
    impossible = _impossible(e)
    if impossible:
        return "inconclusive", f"{table} — {impossible}; {stats.ADVICE}"
    worst = min(rows, key=lambda r: r["speedup"] / r["devices"])
    ratio = worst["speedup"] / worst["devices"]
    comparison = _compare(_speed_row(e, "1 device")["step_ms"], worst["step_ms"])  # type: ignore[index]
    if comparison is None or not comparison.conclusive:
        return "inconclusive", (f"{table} — {worst['tag']} vs 1 device: "
                                f"{comparison.reason if comparison else 'no timing'}; {stats.ADVICE}")
    if ratio >= 0.9:
        return "holds", f"every device count scaled within 10% of linear ({table})"
    return "does-not-hold", f"speed-up per device fell to {fmt(ratio)} of linear at {worst['tag']} ({table}, up to {n} devices)"


def v_ddp_efficient(e: Dict[str, Any]) -> Verdict:
    n = e["devices"]
    dp, ddp = _speed_row(e, f"DataParallel x{n}"), _speed_row(e, f"DDP x{n}")
    if n == 1 or dp is None or ddp is None or not ddp["step_ms"]:
        return "inconclusive", (f"no DDP x{n} timing in this run ({_table(e)}): set compare_ddp and devices to 2 or "
                                "more")
    text = (f"DDP x{n} {_spread_text(ddp['step_ms'])} (x{fmt(ddp['speedup'])}) vs DataParallel x{n} "
            f"{_spread_text(dp['step_ms'])} (x{fmt(dp['speedup'])}), {ddp['plan']['label']}")
    comparison = _compare(ddp["step_ms"], dp["step_ms"])
    if comparison is None or not comparison.conclusive:
        return "inconclusive", text + f" — {comparison.reason if comparison else 'no timing'}; {stats.ADVICE}"
    if ddp["step_ms"]["median"] < dp["step_ms"]["median"]:
        return "holds", text + " — separate processes, one model copy each, beat a replicate-every-step wrapper"
    return "does-not-hold", text + " — DDP was slower here (a small model: its all-reduce costs more than it saves)"


EXPERIMENTS = (
    Experiment("split", "Batch split and gather", ("DataParallel xN",), metrics=("samples", "apply_ms", "memory_mib"),
               chart="bar: samples per device", evidence=e_split),
    Experiment("equivalence", "1 device vs DataParallel xN, same seed and data", ("1 device", "DataParallel xN"),
               metrics=("loss",), chart="line: loss per step, both variants", evidence=e_equivalence),
    Experiment("replication", "Replication on every forward", ("hidden", "hidden x16"),
               metrics=("replicate_ms", "step_ms"), chart="bar: replicate ms per step", evidence=e_replication),
    Experiment("placement", "torch's DataParallel with the model or the input off the default GPU (CUDA only)",
               ("model on the CPU", "moved after wrapping", "input on the CPU", "input on another GPU"), metrics=(),
               chart="table: what each forward did", evidence=e_placement),
    Experiment("scaling", "Speed-up vs device count", ("1 device", "DataParallel x2..N", "DDP xN"),
               metrics=("step_ms", "samples"), chart="bar: step ms and speed-up per device count", evidence=e_scaling),
)

CLAIMS = (
    Claim("splits-evenly", "For example, a batch of 64 images on 4 GPUs becomes 4 chunks of 16 images each.",
          "split", v_splits_evenly),
    Claim("one-chunk-per-gpu", "When you wrap your model with torch.nn.DataParallel, it automatically splits each "
          "input batch into smaller chunks, one per GPU.", "split", v_one_chunk_per_gpu),
    Claim("gathered-on-device-0", "DataParallel sends each chunk to a GPU, runs the model forward pass, then "
          "collects all outputs on the default GPU.", "split", v_gathered),
    Claim("runs-in-parallel", "DataParallel splits input data across GPUs, runs the model on each part in parallel, "
          "then combines the results to update the model.", "split", v_parallel),
    Claim("uneven-imbalance", "Batch size per GPU affects memory usage and speed; uneven batch sizes can cause load "
          "imbalance and reduce efficiency.", "split", v_imbalance),
    Claim("full-batch-equivalence", "Model weights update as if training on the full batch at once.",
          "equivalence", v_full_batch),
    Claim("gradients-averaged", "DataParallel then averages these gradients across GPUs to keep the model weights "
          "synchronized.", "equivalence", v_averaged),
    Claim("replicated-every-forward", "Internally, DataParallel copies the model to each GPU at every forward call.",
          "replication", v_replicated),
    Claim("replication-cost", "Model replication overhead can slow training, especially with large models.",
          "replication", v_replication_cost),
    Claim("ddp-replicates-once", "Alternatives like DistributedDataParallel came later to reduce this overhead by "
          "replicating the model once and using more efficient communication.", "replication", v_ddp_replicates_once),
    Claim("update-on-main-gpu", "Gradients from all GPUs are averaged and used to update the model weights on the "
          "main GPU.", "equivalence", v_main_gpu_update),
    Claim("model-on-gpu-first", "DataParallel requires the model to be on GPU before wrapping; forgetting this "
          "causes errors or slow CPU fallback.", "placement", v_model_on_gpu_first),
    Claim("inputs-on-default-gpu", "DataParallel expects inputs on the default GPU; mismatched devices cause runtime "
          "errors.", "placement", v_inputs_on_default_gpu),
    Claim("not-linear", "Speedup improves with more GPUs but not linearly; overhead grows.", "scaling",
          v_not_linear),
    Claim("myth-linear", "DataParallel always makes training faster in direct proportion to the number of GPUs.",
          "scaling", v_myth_linear),
    Claim("ddp-more-efficient", "For large models or many GPUs, DistributedDataParallel is more efficient and "
          "scalable than DataParallel.", "scaling", v_ddp_efficient),
)

SCENARIO = Scenario(
    id="dp-basics", title="DataParallel basics: split, replicate, gather, average", source=SOURCE, source_title=SOURCE_TITLE,
    summary="Measure how DataParallel splits a batch, where outputs land, whether gradients match one device, "
            "how often the model is replicated, and how step time scales with the device count.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("devices"),),
    # What each choice of a step's question is, in verdicts (see Scenario.outcomes).
    outcomes={
        "split": ({"splits-evenly": ("holds",)}, {"splits-evenly": ("partly",)}, {}),
        "equivalence": ({"full-batch-equivalence": ("holds",)}, {}, {"full-batch-equivalence": ("partly", "does-not-hold")}),
        "replication": ({"replicated-every-forward": ("does-not-hold",)}, {"replicated-every-forward": ("holds",)}),
        # A near-linear speed-up and a slowdown both contradict "improves, but not linearly": the linear claim
        # tells them apart (it holds only within 10% of linear at every device count).
        "scaling": ({"not-linear": ("does-not-hold",), "myth-linear": ("holds",)}, {"not-linear": ("holds",)},
                    {"not-linear": ("does-not-hold",), "myth-linear": ("does-not-hold",)}),
        "placement": ({"inputs-on-default-gpu": ("holds",)}, {"inputs-on-default-gpu": ("does-not-hold",)}),
    },
)
