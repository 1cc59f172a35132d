"""Scenario 2 — training not starting / slow with DataParallel (seed 000)."""
from __future__ import annotations

import time
from typing import Any, Dict, List

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pad_sequence

from . import common as c
from .core import (PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, Verdict, at_most_devices, fmt,
                   load_template)

SOURCE = "000_3b7eff0f44992b59.txt"
SEQ_LENGTHS = [10, 20, 30, 40, 5, 15, 25, 35]  # the article's Example 1

PARAMETERS = (
    Parameter("devices", "int", 2, "devices for DataParallel / DDP ranks: GPUs (shared when fewer than this), "
              "or emulated CPU devices", 1, 8),
    PLACEMENT,
    Parameter("seq_batch_size", "int", 4, "batch size of the padded variable-length loader (Example 1)", 1, 8),
    Parameter("trim_padding", "bool", False,
              "fault: the model trims its output to the longest sequence of ITS chunk (what pad_packed_sequence "
              "does without total_length), so replicas return different lengths"),
    Parameter("input_size", "int", 512, "LargeModel input size (article: 10000; kept small for CPU)", 8, 4096),
    Parameter("hidden_size", "int", 512, "LargeModel hidden size (article: 5000)", 8, 4096),
    Parameter("batch_size", "int", 16, "LargeModel batch size (article: 16)", 1, 1024),
    Parameter("num_steps", "int", 4, "timed steps per variant (article: 10)", 2, 20),
    Parameter("weight_kind", "choice", "parameter", "how CustomLayer holds its weight (article: nn.Parameter)",
              choices=("parameter", "buffer", "plain_tensor")),
    Parameter("seed", "int", 0, "seed for data and weights", 0, 2 ** 31 - 1),
)


class SeqModel(nn.Module):
    """The article's SimpleModel, plus an optional trim to the chunk's longest real sequence."""

    def __init__(self, trim: bool) -> None:
        super().__init__()
        self.linear = nn.Linear(10, 20)
        self.trim = trim

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        out = self.linear(x)
        if self.trim:
            out = out[:, :int(lengths.max())]
        return out


class CustomLayer(nn.Module):
    weight: torch.Tensor  # a parameter, a buffer or a plain tensor, by kind
    def __init__(self, input_size: int, hidden_size: int, kind: str, device: Any = "cpu") -> None:
        super().__init__()
        weight = torch.randn(input_size, hidden_size).to(device)  # a plain tensor stays where it is made
        if kind == "parameter":
            self.weight = nn.Parameter(weight)
        elif kind == "buffer":
            self.register_buffer("weight", weight)
        else:
            self.weight = weight  # plain attribute: replicate() copies only the reference

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x, self.weight)


class ModelWithCustomLayer(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, kind: str, device: Any = "cpu") -> None:
        super().__init__()
        self.custom_layer = CustomLayer(input_size, hidden_size, kind, device)
        self.linear = nn.Linear(hidden_size, hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.custom_layer(x))


def large_model(seed: int, input_size: int, hidden_size: int) -> nn.Module:
    torch.manual_seed(seed + 1)
    return nn.Sequential(nn.Linear(input_size, hidden_size), nn.ReLU(), nn.Linear(hidden_size, hidden_size),
                         nn.ReLU(), nn.Linear(hidden_size, hidden_size), nn.ReLU(),
                         nn.Linear(hidden_size, input_size))


PADDED_CELL = load_template("dp_not_starting_padded")

LARGE_CELL = load_template("dp_not_starting_large_model")

CUSTOM_CELL = load_template("dp_not_starting_custom_layer")

STEPS = (
    Step("padded", "**Variable-length, padded batches (Example 1).** `pad_sequence` pads every batch to its "
         "longest sequence, so the tensor DataParallel scatters is rectangular and splits fine. Trouble starts "
         "when replicas return *different* shapes — e.g. a model that trims padding to its own chunk's longest "
         "sequence (toggle `trim_padding`): then gather cannot concatenate.",
         (Cell("padded", PADDED_CELL),),
         "Does DataParallel fail on padded variable-length batches?",
         ("always", "only when replicas return different shapes", "never"), ("padded-errors",)),
    Step("large-model", "**Large model, small batch (Example 2).** Time a step on 1 device and on DataParallel, "
         "and split DataParallel's forward into scatter / replicate / parallel apply / gather.",
         (Cell("large-model", LARGE_CELL),),
         "With a large model and batch 16, is DataParallel faster than one device?",
         ("faster", "about the same", "slower"), ("transfer-dominates", "time-does-not-decrease", "ddp-graceful")),
    Step("custom-layer", "**Custom layers (Example 3).** `replicate()` copies registered parameters and buffers to "
         "every device; a plain tensor attribute is copied by reference and stays on device 0.",
         (Cell("custom-layer", CUSTOM_CELL),),
         "Will the article's CustomLayer (weight is an nn.Parameter) fail on the worker devices?",
         ("yes", "no — only an unregistered tensor would"), ("custom-layer",)),
    Step("what-is-copied", "**Data or model parallelism?** Count the parameters each replica holds and the "
         "rows each replica gets.", (), None, (), ("model-parallelism",)),
)


# -- experiments ---------------------------------------------------------------------------------

def run_padded(p: Dict[str, Any]) -> Dict[str, Any]:
    bs, n = p["seq_batch_size"], p["devices"]
    g = torch.Generator().manual_seed(p["seed"])
    seqs = [torch.randn(length, 10, generator=g) for length in SEQ_LENGTHS]
    dev = c.device(p)
    torch.manual_seed(p["seed"])
    single = SeqModel(p["trim_padding"]).to(dev)
    wrapped = c.dp(SeqModel(p["trim_padding"]), n, p)
    wrapped.module.load_state_dict(single.state_dict())
    batches = []
    for i in range(0, len(seqs), bs):
        x = pad_sequence(seqs[i:i + bs], batch_first=True).to(dev)
        lengths = torch.tensor(SEQ_LENGTHS[i:i + bs]).to(dev)
        ref = single(x, lengths)
        row: Dict[str, Any] = {"batch": i // bs, "shape": list(x.shape), "lengths": SEQ_LENGTHS[i:i + bs]}
        try:
            out = wrapped(x, lengths=lengths)
            row.update(ok=True, chunks=list(c.phases(wrapped).samples),
                       max_diff_vs_single=float((out - ref).abs().max()) if out.shape == ref.shape else None,
                       out_shape=list(out.shape))
        except Exception as err:
            row.update(ok=False, error=f"{type(err).__name__}: {' '.join(str(err).split())[:200]}")
        batches.append(row)
    return {"devices": n, "seq_batch_size": bs, "trim_padding": p["trim_padding"], "batches": batches,
            "errors": sum(not b["ok"] for b in batches),
            "uneven_batches": sum(1 for b in batches if b.get("ok") and len(set(b["chunks"])) > 1
                                  or b.get("ok") and len(b["chunks"]) < n)}


def _time_variant(p: Dict[str, Any], n: int) -> Dict[str, Any]:
    dev = c.device(p)
    model = large_model(p["seed"], p["input_size"], p["hidden_size"]).to(dev)
    m = model if n == 1 else c.dp(model, n, p)
    opt = torch.optim.Adam(m.parameters())
    g = torch.Generator().manual_seed(p["seed"])
    x = torch.randn(p["batch_size"], p["input_size"], generator=g).to(dev)
    y = torch.randn(p["batch_size"], p["input_size"], generator=g).to(dev)
    rows: List[Dict[str, Any]] = []
    for step in range(p["num_steps"]):  # on a GPU each phase is waited for, so its time is the GPU's too
        c.sync(dev)
        t0 = time.perf_counter()
        out = m(x)
        loss = F.mse_loss(out, y)
        c.sync(dev)
        t1 = time.perf_counter()
        loss.backward()
        c.sync(dev)
        t2 = time.perf_counter()
        opt.step()
        opt.zero_grad()
        c.sync(dev)
        t3 = time.perf_counter()
        row: Dict[str, Any] = {"forward": (t1 - t0) * 1e3, "backward": (t2 - t1) * 1e3, "optimizer": (t3 - t2) * 1e3,
               "step": (t3 - t0) * 1e3}
        if n > 1:
            ph = c.phases(m)
            row.update(scatter=ph.scatter_ms, replicate=ph.replicate_ms, parallel_apply=ph.parallel_apply_ms,
                       gather=ph.gather_ms, memory_bytes=list(ph.memory_bytes))
        rows.append(row)
    rows = rows[1:]  # warm-up
    keys = [k for k in rows[0] if k != "memory_bytes"]
    mean = {k: c.r(sum(r[k] for r in rows) / len(rows)) for k in keys}
    if n > 1:
        mean["memory_bytes_per_device"] = rows[-1]["memory_bytes"]
    return mean


def run_large(p: Dict[str, Any]) -> Dict[str, Any]:
    n = p["devices"]
    single = _time_variant(p, 1)
    out: Dict[str, Any] = {"devices": n, "params": sum(q.numel() for q in large_model(0, p["input_size"],
                                                                                         p["hidden_size"]).parameters()),
                           "batch_size": p["batch_size"], "single_ms": single,
                           "deviceMode": c.mode_label(n, "DataParallel", p),
                           "transfers_emulated": c.device(p).type == "cpu"}
    if n > 1:
        dpm = _time_variant(p, n)
        transfer = dpm["scatter"] + dpm["replicate"] + dpm["gather"]
        out["dp_ms"] = dpm
        out["dp_transfer_ms"] = c.r(transfer)
        out["dp_transfer_share"] = c.r(transfer / dpm["step"])
        parts = {k: dpm[k] for k in ("scatter", "replicate", "parallel_apply", "gather", "backward", "optimizer")}
        out["dp_largest_phase"] = max(parts, key=lambda phase: parts[phase])
        out["dp_vs_single"] = c.r(dpm["step"] / single["step"])
        from . import rank_fns
        res = c.launch(rank_fns.ddp_train, n, p, kwargs=dict(seed=p["seed"], batch=p["batch_size"],
                                                             d_in=p["input_size"], hidden=p["hidden_size"],
                                                             steps=p["num_steps"], lr=0.01, layers=4),
                       echo=False, timeout_s=30, time_limit_s=120, hang_timeout_s=60)
        if res.ok:
            out["ddp_step_ms"] = c.r(max(rr["step_ms"] for rr in res.results))
            out["ddp_comm_ms"] = c.r(max(rr["comm_ms"] or 0.0 for rr in res.results))
        else:
            out["ddp_status"] = f"{res.status}: {res.summary}"
    return out


def run_custom(p: Dict[str, Any]) -> Dict[str, Any]:
    dev = c.device(p)
    x, _ = c.data(p["seed"], 32, 100, to=dev)
    kinds = {}
    for kind in ("parameter", "buffer", "plain_tensor"):
        torch.manual_seed(p["seed"])
        single = ModelWithCustomLayer(100, 50, kind, dev).to(dev)
        torch.manual_seed(p["seed"])
        wrapped = c.dp(ModelWithCustomLayer(100, 50, kind, dev), p["devices"], p)
        ref = single(x)
        try:
            out = wrapped(x)
            out.sum().backward()
            kinds[kind] = {"ok": True, "max_diff_vs_single": float((out - ref).abs().max()),
                           "samples_per_device": list(c.phases(wrapped).samples)}
        except Exception as err:
            kinds[kind] = {"ok": False, "error": f"{type(err).__name__}: {' '.join(str(err).split())[:300]}"}
    return {"devices": p["devices"], "selected": p["weight_kind"], "kinds": kinds}


def run_copied(p: Dict[str, Any]) -> Dict[str, Any]:
    model = large_model(p["seed"], 32, 32)
    wrapped = c.dp(model, p["devices"], p, keep_replicas=True)
    x = torch.randn(max(p["batch_size"], p["devices"]), 32).to(c.device(p))
    wrapped(x)
    total = sum(q.numel() for q in model.parameters())
    names = [name for name, _ in model.named_parameters()]

    def held(replica: nn.Module) -> int:  # replica parameters are plain (non-leaf) tensor attributes
        count = 0
        for name in names:
            obj: Any = replica
            for part in name.split("."):
                obj = getattr(obj, part, None)
            count += obj.numel() if isinstance(obj, torch.Tensor) else 0
        return count
    per_replica = [held(rep) for rep in wrapped.last_replicas] or [total]
    return {"devices": p["devices"], "model_params": total, "params_per_replica": per_replica,
            "rows_per_replica": list(c.phases(wrapped).samples), "rows": int(x.shape[0])}


# -- verdicts ------------------------------------------------------------------------------------

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


def v_transfer(e: Dict[str, Any]) -> Verdict:
    if "dp_ms" not in e:
        return "partly", f"only {e['devices']} device: no transfers to measure (step {e['single_ms']['step']} ms)"
    d, s, share = e["dp_ms"]["step"], e["single_ms"]["step"], e["dp_transfer_share"]
    text = (f"DataParallel x{e['devices']} step {d} ms vs 1 device {s} ms; scatter+replicate+gather = "
            f"{e['dp_transfer_ms']} ms = {fmt(share * 100)}% of the step; largest phase: {e['dp_largest_phase']} "
            f"(transfers are memcpy in CPU emulation)")
    if d < 0.9 * s:
        return "does-not-hold", text + " — DataParallel was faster"
    if share >= 0.3:
        return "holds", text
    return "partly", text + " — slower, but the time goes to the replicas' compute, not to transfers"


def v_no_decrease(e: Dict[str, Any]) -> Verdict:
    if "dp_ms" not in e:
        return "partly", f"only {e['devices']} device: nothing to compare"
    ratio = e["dp_vs_single"]
    text = (f"{e['params']} parameters, batch {e['batch_size']}: DataParallel x{e['devices']} step "
            f"{e['dp_ms']['step']} ms vs 1 device {e['single_ms']['step']} ms (ratio {ratio})")
    return ("holds", text) if ratio >= 0.9 else ("does-not-hold", text)


def v_ddp(e: Dict[str, Any]) -> Verdict:
    if "ddp_step_ms" not in e:
        return "partly", f"no DDP timing ({e.get('ddp_status', 'one device only')})"
    d, dd = e["dp_ms"]["step"], e["ddp_step_ms"]
    text = (f"DDP x{e['devices']} step {dd} ms (of which allreduce {e['ddp_comm_ms']} ms) vs DataParallel "
            f"x{e['devices']} {d} ms vs 1 device {e['single_ms']['step']} ms")
    if dd < 0.9 * d:
        return "holds", text
    if dd <= 1.1 * d:
        return "partly", text + " — about the same here"
    return "does-not-hold", text + " — processes did not help on this host"


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


EXPERIMENTS = (
    Experiment("padded", "Padded variable-length batches: 1 device vs DataParallel xN", ("1 device", "DataParallel xN"),
               run_padded, ("errors", "chunks"), "table: per batch, ok/error and rows per device"),
    Experiment("large-model", "Large model, small batch: 1 device vs DataParallel xN vs DDP xN",
               ("1 device", "DataParallel xN", "DDP xN"), run_large, ("step_ms", "phases"),
               "stacked bar: scatter/replicate/apply/gather/backward/optimizer per variant"),
    Experiment("custom-layer", "CustomLayer weight as parameter / buffer / plain tensor",
               ("parameter", "buffer", "plain_tensor"), run_custom, ("ok",), "table"),
    Experiment("what-is-copied", "Parameters and rows per replica", ("DataParallel xN",), run_copied,
               ("params_per_replica", "rows_per_replica"), "bar"),
)

CLAIMS = (
    Claim("padded-errors", "When the input data isn't perfectly divisible by the number of GPUs or contains "
          "variable-length sequences, `DataParallel` struggles to evenly distribute the workload. This often "
          "manifests as errors stemming from tensor dimensions not aligning correctly after the split or gather "
          "operations.", "padded", v_padded),
    Claim("transfer-dominates", "The transfer of data, model parameters, gradients, and loss across devices during "
          "forward and backward propagation can quickly dominate the training time, diminishing the overall speed "
          "benefits of `DataParallel`.", "large-model", v_transfer),
    Claim("time-does-not-decrease", "You will observe, especially when increasing the `input_size` and "
          "`hidden_size`, that the time does not decrease by using multiple GPUs.", "large-model", v_no_decrease),
    Claim("ddp-graceful", "The `DistributedDataParallel` class generally handles the process of distributed data "
          "parallelism more gracefully, because it uses separate processes instead of threads, making the whole "
          "setup less prone to the limitations above mentioned.", "large-model", v_ddp),
    Claim("custom-layer", "DataParallel relies on all tensors being on the same device in the forward pass, and also "
          "in the backward pass when calculating the gradient, and the implementation of the CustomLayer is not "
          "guaranteed to transfer to the worker devices.", "custom-layer", v_custom),
    Claim("model-parallelism", "It is crucial to remember that the model's parameters remain in the primary "
          "process's memory, while only copies are used on the worker GPUs, making it a form of *model "
          "parallelism,* while primarily *data parallelism*.", "what-is-copied", v_model_parallel),
)

SCENARIO = Scenario(
    id="dp-not-starting", title="Training not starting or slow with DataParallel", source=SOURCE,
    summary="Padded variable-length batches, a large model with a small batch (where the time goes), custom "
            "layers with unregistered tensors, and DataParallel vs DDP step time.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("devices"),),
)
