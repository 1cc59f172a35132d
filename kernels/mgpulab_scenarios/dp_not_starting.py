"""Scenario 2 — training not starting / slow with DataParallel (seed 000)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from . import stats
from .core import (PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, Verdict, at_most_devices, clip,
                   fmt, load_template)
from .evidence import Observed
from .stats import compare_spreads as _compare, spread_text as _spread_text

SOURCE = "000_3b7eff0f44992b59.txt"
SOURCE_TITLE = "Why is training not starting with nn.DataParallel?"  # the article's own title, shown with the file name as a detail

PARAMETERS = (
    Parameter("devices", "int", 2, "devices for DataParallel / DDP ranks: GPUs (shared when fewer than this), "
              "or emulated CPU devices", 1, 8),
    PLACEMENT,
    Parameter("seq_batch_size", "int", 4, "batch size of the padded variable-length loader (Example 1)", 1, 8),
    Parameter("trim_padding", "bool", False,
              "the model trims its output to the longest sequence of its own chunk (as pad_packed_sequence "
              "does without total_length)"),
    Parameter("input_size", "int", 512, "LargeModel input size (article: 10000; kept small for CPU)", 8, 4096),
    Parameter("hidden_size", "int", 512, "LargeModel hidden size (article: 5000)", 8, 4096),
    Parameter("batch_size", "int", 16, "LargeModel batch size (article: 16)", 1, 1024),
    Parameter("num_steps", "int", 4, "timed steps per variant after a warm-up step (article: 10); timing "
              "verdicts need 3 or more to see their spread", 2, 20),
    Parameter("weight_kind", "choice", "parameter", "how CustomLayer holds its weight (article: nn.Parameter)",
              choices=("parameter", "buffer", "plain_tensor")),
    Parameter("seed", "int", 0, "seed for data and weights", 0, 2 ** 31 - 1),
)


PADDED_CELL = load_template("dp_not_starting_padded")

LARGE_CELL = load_template("dp_not_starting_large_model")

CUSTOM_CELL = load_template("dp_not_starting_custom_layer")

COPIED_CELL = load_template("dp_not_starting_what_is_copied")

DDP_INIT_CELL = load_template("dp_not_starting_ddp_init")

STEPS = (
    Step("padded", "**Variable-length, padded batches (Example 1).** `pad_sequence` pads every batch to its "
         "longest sequence before DataParallel scatters it. With `trim_padding`, the model trims the padding to "
         "its own chunk's longest sequence.",
         (Cell("padded", PADDED_CELL),),
         "Does DataParallel fail on padded variable-length batches?",
         ("always", "only when replicas return different shapes", "never"), ("padded-errors", "consistent-tensor"),
         tells=(("always fails",), ("gather", "concatenate"), ("never fails", "splits fine")),
         explanation="**Why.** The padded tensor is rectangular, so it splits fine. Trouble starts when the "
                     "replicas return *different* shapes (a model that trims padding per chunk): then gather "
                     "cannot concatenate them."),
    Step("large-model", "**Large model, small batch (Example 2).** Time a step on 1 device and on DataParallel, "
         "and split DataParallel's forward into scatter / replicate / parallel apply / gather. Then what DDP "
         "asks before it runs at all: rank processes build `DistributedDataParallel` without, then with, "
         "`init_process_group`.",
         (Cell("large-model", LARGE_CELL), Cell("ddp-init", DDP_INIT_CELL)),
         "With a large model and batch {batch_size}, is DataParallel faster than one device?",
         ("faster", "about the same", "slower"),
         ("transfer-dominates", "time-does-not-decrease", "stall", "overhead-dominates", "ddp-graceful",
          "ddp-needs-init"),
         tells=(("speeds up", "quicker"), ("no difference",), ("slows", "costs more")),
         explanation="**Why.** Whether DataParallel wins is compute per device against what every step costs "
                     "whatever the batch: scattering the batch, copying the *whole* model to every device "
                     "(`replicate`, on every forward), running the replicas on threads of one process, and "
                     "gathering on device 0. A large model makes the copies bigger while a small batch leaves "
                     "each device little to do; the phase split shows which part took the time on this host. "
                     "DDP copies the model once and only exchanges gradients, but asks for a process group "
                     "first."),
    Step("custom-layer", "**Custom layers (Example 3).** The article's CustomLayer keeps its weight as an "
         "`nn.Parameter`; the cell runs it under DataParallel, next to a layer that keeps a plain tensor "
         "attribute.",
         (Cell("custom-layer", CUSTOM_CELL),),
         "Will the article's CustomLayer (weight is an nn.Parameter) fail on the worker devices?",
         ("yes", "no — only an unregistered tensor would"), ("custom-layer",),
         tells=(("error", "mismatch"), ("registered", "runs fine")),
         explanation="**Why.** `replicate()` copies registered parameters and buffers to every device; a plain "
                     "tensor attribute is copied by reference and stays on device 0."),
    Step("what-is-copied", "**Data or model parallelism?** Count the parameters each replica holds and the "
         "rows each replica gets; see what comes back from the replicas and where the gradients land.",
         (Cell("what-is-copied", COPIED_CELL),),
         "What does each replica hold?", ("the whole model", "a slice of the model's layers"),
         ("model-parallelism", "gathers-losses", "reduced-on-master"),
         explanation="**Why.** DataParallel is data parallelism: `replicate()` copies the whole module, every "
                     "parameter, to each device, and `scatter` gives each replica a slice of the *batch*, not of "
                     "the layers. The outputs are gathered on device 0, the loss is computed there, and the "
                     "replicas' gradients flow back into the one model on device 0. Model parallelism would put "
                     "different layers on different devices."),
)


# -- evidence: what each cell recorded ------------------------------------------------------------

def e_padded(o: Observed) -> Dict[str, Any]:
    p = o.params
    batches = []
    for row in o.facts["batches"]:
        row = dict(row)
        if "error" in row:
            row["error"] = clip(row["error"], 200)
        batches.append(row)
    n = p["devices"]
    return {"devices": n, "seq_batch_size": p["seq_batch_size"], "trim_padding": p["trim_padding"],
            "batches": batches, "errors": sum(not b["ok"] for b in batches),
            "uneven_batches": sum(1 for b in batches if b.get("ok") and (len(set(b["chunks"])) > 1 or len(b["chunks"]) < n))}


PHASES = ("scatter_ms", "replicate_ms", "gather_ms", "backward_ms", "optimizer_ms")


def e_large(o: Observed) -> Dict[str, Any]:
    p = o.params
    n = p["devices"]
    tags = ["1 device"] + [f"DataParallel x{k}" for k in range(2, n + 1)] + ([f"DDP x{n}"] if n > 1 else [])
    variants = []
    for tag in tags:
        row: Dict[str, Any] = {"tag": tag, "devices": stats.device_count(tag) or 1, "step_ms": o.spread(tag, "step_ms"),
                               "steps_done": max((len(o.values(tag, "step_ms", [r])) for r in o.ranks(tag, "step_ms")),
                                                 default=0)}
        if tag.startswith("DataParallel"):
            phases = {name: stats.bar_value(o, tag, name, [0]) for name in PHASES}
            apply = [stats.bar_value(o, tag, "apply_ms", [r]) for r in o.ranks(tag, "apply_ms")]
            phases["apply_ms"] = max((a for a in apply if a is not None), default=None)
            moved = [(phases[k] or 0.0) for k in ("scatter_ms", "replicate_ms", "gather_ms")]
            step = row["step_ms"]["median"] if row["step_ms"] else None
            row.update(phases=phases, transfer_ms=sum(moved),
                       transfer_share=sum(moved) / step if step else None,
                       transfer_ms_per_step=[sum(v) for v in zip(*[[x for _, x in o.values(tag, k, [0], warmup=False)]
                                                                   for k in ("scatter_ms", "replicate_ms", "gather_ms")])])
        if tag.startswith("DDP"):
            row["comm_ms"] = stats.bar_value(o, tag, "comm_ms")
        variants.append(row)
    return {"devices": n, "params": o.facts["params"], "batch_size": p["batch_size"], "steps_asked": o.facts["steps_asked"],
            "variants": variants, "transfers_emulated": p["placement"] == "cpu" or _emulated(n, p)}


def _emulated(n: int, p: Dict[str, Any]) -> bool:
    import mgpulab as lab
    return lab.devices.detect(n, "DataParallel", placement=p["placement"]).kind == "cpu-emulated"


def e_custom(o: Observed) -> Dict[str, Any]:
    kinds = {}
    for kind, value in o.facts["kinds"].items():
        value = dict(value)
        if "error" in value:
            value["error"] = clip(value["error"], 300)
        kinds[kind] = value
    return {"devices": o.params["devices"], "selected": o.params["weight_kind"], "kinds": kinds}


def e_ddp_init(o: Observed) -> Dict[str, Any]:
    f = o.facts
    ranks = []
    for r in f["ranks"]:
        row = {"rank": r["rank"], "initialized_before": r["initialized_before"]}
        for attempt in ("without_init", "with_init"):
            row[attempt] = {"ok": r[attempt]["ok"],
                            "error": clip(r[attempt]["error"], 300) if r[attempt]["error"] else None}
        ranks.append(row)
    return {"devices": o.params["devices"], "status": f["status"], "summary": clip(f["summary"], 400),
            "seconds": f["seconds"], "ranks": ranks}


def e_copied(o: Observed) -> Dict[str, Any]:
    return {"devices": o.params["devices"], **o.facts}


# -- verdicts ------------------------------------------------------------------------------------

def _row(e: Dict[str, Any], tag: str) -> Optional[Dict[str, Any]]:
    return next((r for r in e["variants"] if r["tag"] == tag), None)


def _noise(comparison: Optional[stats.Comparison]) -> str:
    return f"{comparison.reason if comparison else 'no timing'}; {stats.ADVICE}"


def v_padded(e: Dict[str, Any]) -> Verdict:
    errs = [b for b in e["batches"] if not b["ok"]]
    if errs:
        return "holds", (f"{len(errs)} of {len(e['batches'])} padded batches failed on {e['devices']} devices "
                         f"(trim_padding={e['trim_padding']}): {errs[0]['error']}")
    chunks = [b["chunks"] for b in e["batches"]]
    diff = max((b["max_diff_vs_single"] or 0.0) for b in e["batches"])
    if e["uneven_batches"]:
        return "partly", (f"no errors in {len(chunks)} padded batches (max diff vs 1 device {fmt(diff)}), but "
                          f"{e['uneven_batches']} split unevenly: rows per device {chunks}")
    return "does-not-hold", (f"all {len(chunks)} padded batches ran on {e['devices']} devices with even splits "
                             f"{chunks}, max diff vs 1 device {fmt(diff)}: padding makes the tensor rectangular")


def v_consistent(e: Dict[str, Any]) -> Verdict:
    shapes = [b["shape"] for b in e["batches"]]
    errs = [b for b in e["batches"] if not b["ok"]]
    if not errs:
        return "does-not-hold", (f"padded batches of shapes {shapes} (sequences of lengths 5 to 40 in each) ran on "
                                 f"{e['devices']} devices: a padded batch is one rectangular tensor, and scatter splits "
                                 "it along the batch dimension whatever the padding")
    return "partly", (f"the padded inputs {shapes} split fine; what broke is the replicas returning outputs of "
                      f"different lengths (trim_padding={e['trim_padding']}): {errs[0]['error']} — it is the "
                      "outputs that gather needs consistent, not the padding")


def _dp_top(e: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    return _row(e, f"DataParallel x{e['devices']}")


def v_transfer(e: Dict[str, Any]) -> Verdict:
    dp, one = _dp_top(e), _row(e, "1 device")
    if dp is None or one is None or not dp["step_ms"]:
        return "partly", f"only {e['devices']} device: no transfers to measure"
    share = dp["transfer_share"] or 0.0
    phases = dp["phases"]
    largest = max((k for k in phases if phases[k] is not None), key=lambda k: phases[k])
    text = (f"DataParallel x{e['devices']} step {_spread_text(dp['step_ms'])} vs 1 device "
            f"{_spread_text(one['step_ms'])}; scatter+replicate+gather = {fmt(dp['transfer_ms'])} ms = "
            f"{fmt(share * 100)}% of the step; largest phase: {largest.replace('_ms', '')}"
            + (" (transfers are memcpy in the CPU emulation)" if e["transfers_emulated"] else ""))
    comparison = _compare(dp["step_ms"], one["step_ms"])
    if comparison is None or not comparison.conclusive:
        return "inconclusive", text + f" — {_noise(comparison)}"
    if dp["step_ms"]["median"] < one["step_ms"]["median"]:
        return "does-not-hold", text + " — DataParallel was faster"
    if share >= 0.3:
        return "holds", text
    return "partly", text + " — slower, but the time goes to the replicas' compute, not to transfers"


def v_no_decrease(e: Dict[str, Any]) -> Verdict:
    dp, one = _dp_top(e), _row(e, "1 device")
    if dp is None or one is None or not dp["step_ms"]:
        return "inconclusive", f"only {e['devices']} device: nothing to compare; set devices to 2 or more"
    text = (f"{e['params']} parameters, batch {e['batch_size']}: DataParallel x{e['devices']} step "
            f"{_spread_text(dp['step_ms'])} vs 1 device {_spread_text(one['step_ms'])}")
    comparison = _compare(dp["step_ms"], one["step_ms"])
    if comparison is None or not comparison.conclusive:
        return "inconclusive", text + f" — no difference beyond the noise: {_noise(comparison)}"
    if dp["step_ms"]["median"] < one["step_ms"]["median"]:
        return "does-not-hold", text + " — the time did decrease"
    return "holds", text + " — more devices, no shorter step"


def v_stall(e: Dict[str, Any]) -> Verdict:
    dp, one = _dp_top(e), _row(e, "1 device")
    done = {r["tag"]: r["steps_done"] for r in e["variants"]}
    stalled = [tag for tag, n in done.items() if n < e["steps_asked"]]
    if stalled:
        return "holds", f"{', '.join(stalled)} did not finish its {e['steps_asked']} steps: {done}"
    if dp is None or one is None:
        return "inconclusive", f"only {e['devices']} device: no overhead to measure; set devices to 2 or more"
    ratio = dp["step_ms"]["median"] / one["step_ms"]["median"] if dp["step_ms"] and one["step_ms"] else None
    text = (f"every variant finished all {e['steps_asked']} steps ({done}); DataParallel x{e['devices']} step "
            f"{_spread_text(dp['step_ms'])} vs 1 device {_spread_text(one['step_ms'])} (x{fmt(ratio)})")
    comparison = _compare(dp["step_ms"], one["step_ms"])
    if comparison is None or not comparison.conclusive:
        return "inconclusive", text + f" — {_noise(comparison)}"
    if dp["step_ms"]["median"] > one["step_ms"]["median"]:
        return "partly", text + " — slower, as the article says, but never stalled: overhead lengthens steps"
    return "does-not-hold", text + " — neither slower nor stalled"


def v_overhead_grows(e: Dict[str, Any]) -> Verdict:
    rows = [r for r in e["variants"] if r["tag"].startswith("DataParallel") and r["transfer_share"] is not None]
    if not rows:
        return "inconclusive", f"only {e['devices']} device: no transfers to measure; set devices to 2 or more"
    shares = [(1, 0.0)] + [(r["devices"], r["transfer_share"]) for r in rows]  # one device moves nothing
    table = ", ".join(f"{n} device(s): {fmt(100 * s)}%" for n, s in shares)
    text = f"scatter+replicate+gather as a share of the step: {table}"
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        comparison = _compare(_as_timing(b["transfer_ms_per_step"]), _as_timing(a["transfer_ms_per_step"]))
        if comparison is None or not comparison.conclusive:
            return "inconclusive", text + f" — {a['tag']} vs {b['tag']}: {_noise(comparison)}"
    grows = all(later[1] >= earlier[1] for earlier, later in zip(shares, shares[1:]))
    top = shares[-1][1]
    if grows and top >= 0.5:
        return "holds", text + " — the transfers take over as devices are added"
    if grows:
        return "partly", text + (" — the share grows with the devices but does not dominate the step here"
                                 + ("; set devices to 3 or more for a trend beyond 2" if len(rows) < 2 else ""))
    return "does-not-hold", text + " — the share does not grow with the devices"


def _as_timing(values: List[float]) -> Optional[Dict[str, Any]]:
    s = stats.spread(values)
    return s.to_dict() if s else None


def v_ddp(e: Dict[str, Any]) -> Verdict:
    n = e["devices"]
    dp, ddp, one = _dp_top(e), _row(e, f"DDP x{n}"), _row(e, "1 device")
    if dp is None or ddp is None or not ddp["step_ms"] or one is None:
        return "inconclusive", f"no DDP x{n} timing in this run; set devices to 2 or more"
    text = (f"DDP x{n} step {_spread_text(ddp['step_ms'])} (of which allreduce {fmt(ddp['comm_ms'])} ms) vs "
            f"DataParallel x{n} {_spread_text(dp['step_ms'])} vs 1 device {_spread_text(one['step_ms'])}")
    comparison = _compare(ddp["step_ms"], dp["step_ms"])
    if comparison is None or not comparison.conclusive:
        return "inconclusive", text + f" — {_noise(comparison)}"
    if ddp["step_ms"]["median"] < dp["step_ms"]["median"]:
        return "holds", text
    return "does-not-hold", text + " — processes did not help on this host"


def v_ddp_init(e: Dict[str, Any]) -> Verdict:
    ranks = e["ranks"]
    if e["status"] != "ok" or not ranks or any(r["initialized_before"] for r in ranks):
        return "inconclusive", (f"the ranks did not both try without and with a process group ({e['status']}: "
                                f"{e['summary']}); run the cell again")
    without = [r["without_init"] for r in ranks]
    after = [r["with_init"] for r in ranks]
    text = (f"{len(ranks)} rank process(es) without a process group: "
            + ("; ".join(f"rank {r['rank']}: " + (r['without_init']['error'] or "built") for r in ranks))
            + f"; after init_process_group: {sum(a['ok'] for a in after)} of {len(after)} built DDP and ran a step")
    if all(w["ok"] for w in without):
        return "does-not-hold", text + " — DDP was built without any process group"
    if not any(w["ok"] for w in without) and all(a["ok"] for a in after):
        return "holds", text + " — DDP refuses to start until the processes are initialised into a group"
    return "partly", text


def v_custom(e: Dict[str, Any]) -> Verdict:
    k = e["kinds"]
    sel = k[e["selected"]]
    others = "; ".join(f"{name}: {'ok' if v['ok'] else 'error'}" for name, v in k.items())
    if e["devices"] == 1:
        return "partly", f"1 device: nothing is replicated ({others})"
    if not sel["ok"]:
        return "holds", f"weight as {e['selected']} failed on {e['devices']} devices: {sel['error']} ({others})"
    return "does-not-hold", (f"weight as {e['selected']} ran on devices {sel['samples_per_device']} with max diff vs "
                             f"1 device {fmt(sel['max_diff_vs_single'])}: registered tensors are replicated "
                             f"({others})")


def v_model_parallel(e: Dict[str, Any]) -> Verdict:
    full = all(n == e["model_params"] for n in e["params_per_replica"])
    text = (f"each of {len(e['params_per_replica'])} replicas held {e['params_per_replica']} of "
            f"{e['model_params']} parameters while rows were split {e['rows_per_replica']} of {e['rows']}")
    if full:
        return "does-not-hold", text + ": full copies + split data = data parallelism, not model parallelism"
    return "holds", text + ": parameters were partitioned"


def v_gathers_losses(e: Dict[str, Any]) -> Verdict:
    text = (f"the replicas returned outputs, gathered into one tensor of shape {e['gathered_shape']} on "
            f"{e['gathered_device']}; the loss (shape {e['loss_shape']}) was computed once from it on "
            f"{e['loss_device']}, then one backward")
    if e["gathered_shape"] and e["gathered_shape"][0] == e["rows"] and e["loss_shape"] == []:
        return "partly", (text + ": DataParallel gathers the outputs, not losses — backpropagating through a single "
                          "loss over the whole batch is right, gathering losses is not what happens")
    return "holds", text


def v_reduced_on_master(e: Dict[str, Any]) -> Verdict:
    leaves = e["replica_params_are_leaves"]
    text = (f"the loss over {e['rows']} rows was computed on {e['loss_device']}; after backward every gradient is on "
            f"{e['grad_devices']} where the parameters live ({e['params_device']}); the parameters of the "
            f"{len(leaves)} replicas are leaves: {leaves}")
    if e["devices"] == 1:
        return "partly", text + " (one device: there is nothing to reduce)"
    if e["grad_devices"] == [e["params_device"]] and e["loss_device"] == e["params_device"] \
            and not any(leaves[1:]):
        return "holds", (text + ": the replicas' gradients flow back through the replication and are summed into "
                         "the one model on the first device")
    return "does-not-hold", text


EXPERIMENTS = (
    Experiment("padded", "Padded variable-length batches: 1 device vs DataParallel xN", ("1 device", "DataParallel xN"),
               metrics=(), chart="table: per batch, ok/error and rows per device", evidence=e_padded),
    Experiment("large-model", "Large model, small batch: 1 device vs DataParallel x2..N vs DDP xN",
               ("1 device", "DataParallel x2..N", "DDP xN"), metrics=("step_ms", "scatter_ms", "replicate_ms",
                                                                     "gather_ms", "apply_ms"),
               chart="stacked bar: scatter/replicate/apply/gather/backward/optimizer per variant", evidence=e_large),
    Experiment("custom-layer", "CustomLayer weight as parameter / buffer / plain tensor",
               ("parameter", "buffer", "plain_tensor"), metrics=(), chart="table", evidence=e_custom),
    Experiment("ddp-init", "DDP built in rank processes without, then with, init_process_group", ("ranks",),
               metrics=(), chart="table: per rank, the error without a process group", evidence=e_ddp_init),
    Experiment("what-is-copied", "Parameters and rows per replica, the gathered output and the gradients",
               ("DataParallel xN",), metrics=(), chart="table", evidence=e_copied),
)

CLAIMS = (
    Claim("padded-errors", "When the input data isn't perfectly divisible by the number of GPUs or contains "
          "variable-length sequences, `DataParallel` struggles to evenly distribute the workload. This often "
          "manifests as errors stemming from tensor dimensions not aligning correctly after the split or gather "
          "operations.", "padded", v_padded),
    Claim("consistent-tensor", "The `collate_fn` handles the padding of the sequences, and this padding is not "
          "accounted for by `DataParallel`, that expects a completely consistent tensor when using multiple GPUs.",
          "padded", v_consistent),
    Claim("transfer-dominates", "The transfer of data, model parameters, gradients, and loss across devices during "
          "forward and backward propagation can quickly dominate the training time, diminishing the overall speed "
          "benefits of `DataParallel`.", "large-model", v_transfer),
    Claim("time-does-not-decrease", "You will observe, especially when increasing the `input_size` and "
          "`hidden_size`, that the time does not decrease by using multiple GPUs.", "large-model", v_no_decrease),
    Claim("stall", "This can lead to a slower effective training time, and in some cases, may actually stall the "
          "training loop if the overhead outweighs the parallelization gains.", "large-model", v_stall),
    Claim("overhead-dominates", "As more GPUs are added, the communication overhead between the primary process and "
          "worker GPUs starts to dominate.", "large-model", v_overhead_grows),
    Claim("ddp-graceful", "The `DistributedDataParallel` class generally handles the process of distributed data "
          "parallelism more gracefully, because it uses separate processes instead of threads, making the whole "
          "setup less prone to the limitations above mentioned.", "large-model", v_ddp),
    Claim("ddp-needs-init", "It does, however, require a more involved setup and a better understanding of "
          "distributed computing, as it needs initialization of the processes and synchronization protocols.",
          "ddp-init", v_ddp_init),
    Claim("custom-layer", "DataParallel relies on all tensors being on the same device in the forward pass, and also "
          "in the backward pass when calculating the gradient, and the implementation of the CustomLayer is not "
          "guaranteed to transfer to the worker devices.", "custom-layer", v_custom),
    Claim("model-parallelism", "It is crucial to remember that the model's parameters remain in the primary "
          "process's memory, while only copies are used on the worker GPUs, making it a form of *model "
          "parallelism,* while primarily *data parallelism*.", "what-is-copied", v_model_parallel),
    Claim("gathers-losses", "`nn.DataParallel` operates by splitting the input batch across available GPUs, executing "
          "the forward pass independently on each device, then gathering the resulting losses before backpropagating "
          "through a single, averaged loss.", "what-is-copied", v_gathers_losses),
    Claim("reduced-on-master", "Specifically, the reduction operation of the gradients and the loss is done in the "
          "master device.", "what-is-copied", v_reduced_on_master),
)

SCENARIO = Scenario(
    id="dp-not-starting", title="When DataParallel training will not start", source=SOURCE, source_title=SOURCE_TITLE,
    summary="Padded variable-length batches, a large model with a small batch (where does the time go?), a "
            "custom layer's weight on the worker devices, what each replica holds, and DataParallel vs DDP step "
            "time.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("devices"),),
    # What each choice of a step's question is, in verdicts (see Scenario.outcomes).
    outcomes={
        "padded": ({"padded-errors": ("holds",)}, {"padded-errors": ("partly",)}, {"padded-errors": ("does-not-hold",)}),
        # "about the same" is a difference within the noise: an inconclusive verdict, which judges nothing.
        "large-model": ({"time-does-not-decrease": ("does-not-hold",)}, {}, {"time-does-not-decrease": ("holds",)}),
        "custom-layer": ({"custom-layer": ("holds",)}, {"custom-layer": ("does-not-hold",)}),
        "what-is-copied": ({"model-parallelism": ("does-not-hold",)}, {"model-parallelism": ("holds",)}),
    },
)
