"""Scenario 4 — "DataParallel returns incomplete results" / the GIL (seed 002)."""
from __future__ import annotations

import time
from typing import Any, Dict

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

import mgpulab as lab

from . import common as c
from .core import (PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, Verdict, at_most_devices, fmt,
                   load_template)
from .rank_fns import PythonHeavy

SOURCE = "002_e762a3f4f8bd6399.txt"

PARAMETERS = (
    Parameter("devices", "int", 2, "devices for DataParallel / DDP ranks: GPUs (shared when fewer than this), "
              "or emulated CPU devices", 1, 8),
    PLACEMENT,
    Parameter("samples", "int", 2000, "dataset rows (article: 10000)", 10, 20000),
    Parameter("batch_size", "int", 250, "DataLoader batch size (article: 1000)", 1, 5000),
    Parameter("epochs", "int", 1, "epochs over the dataset (article: 10)", 1, 10),
    Parameter("lr", "float", 0.01, "SGD learning rate (article: 0.01)", 1e-5, 1.0),
    Parameter("forward_kind", "choice", "python", "python: many tiny layers (Python/dispatch-bound forward); "
              "tensor: two wide layers (arithmetic-bound forward)", choices=("python", "tensor")),
    Parameter("depth", "int", 40, "layers of the Python-heavy model", 1, 400),
    Parameter("repeats", "int", 5, "timed forwards per variant", 1, 50),
    Parameter("num_workers", "int", 2, "DataLoader workers for the data-wait comparison (vs 0)", 0, 4),
    Parameter("sample_cost_ms", "float", 0.3, "emulated per-sample loading cost (I/O wait) in the dataset", 0.0, 10.0),
    Parameter("seed", "int", 0, "seed for data and weights", 0, 2 ** 31 - 1),
)


class SlowDataset(Dataset):
    """Rows of (x, y) whose loading costs ``cost_ms`` each (sleep: I/O-like wait)."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor, cost_ms: float) -> None:
        self.x, self.y, self.cost = x, y, cost_ms / 1000.0

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int):
        if self.cost:
            time.sleep(self.cost)
        return self.x[i], self.y[i]


def _overhead_model(p: Dict[str, Any]) -> nn.Module:
    torch.manual_seed(p["seed"])
    if p["forward_kind"] == "python":
        return PythonHeavy(8, p["depth"])
    return nn.Sequential(nn.Linear(8, 1024), nn.Tanh(), nn.Linear(1024, 8))


COMPLETE_CELL = load_template("incomplete_results_gil_completeness")

OVERHEAD_CELL = load_template("incomplete_results_gil_python_overhead")

DATA_CELL = load_template("incomplete_results_gil_data_wait")

STEPS = (
    Step("completeness", "**Are DataParallel's results incomplete?** Run the article's Example 1 on one device and "
         "on DataParallel at the same seed and count the output rows that come back, check they are finite, and "
         "compare the loss step by step.",
         (Cell("completeness", COMPLETE_CELL),),
         "What fraction of the outputs does DataParallel return?", ("100%", "less than 100%"),
         ("incomplete", "loss-irregular")),
    Step("python-overhead", "**What the GIL really costs.** Replicas run on Python threads: the GPU work of the "
         "replicas overlaps, but their Python (module calls, dispatch) is serialized by the GIL. DDP ranks are "
         "processes with their own interpreters. Compare the forward time of a Python-heavy model.",
         (Cell("python-overhead", OVERHEAD_CELL),),
         "How does DataParallel's forward time compare with one device for a Python-heavy model?",
         ("faster", "same", "slower, growing with the number of devices"), ("gil-restricts", "ddp-avoids-gil")),
    Step("data-wait", "**DataLoader workers (Example 2).** Each step first waits for its batch. Measure the share "
         "of the step spent waiting for data with `num_workers=0` and with more workers.",
         (Cell("data-wait", DATA_CELL),),
         "With num_workers=0, is the step dominated by data waiting?", ("yes", "no"),
         ("data-bottleneck", "num-workers")),
)


# -- experiments ---------------------------------------------------------------------------------

def run_completeness(p: Dict[str, Any]) -> Dict[str, Any]:
    torch.manual_seed(p["seed"])
    data, labels = torch.randn(p["samples"], 10), torch.randn(p["samples"], 1)
    loader = DataLoader(TensorDataset(data, labels), batch_size=p["batch_size"])
    dev = c.device(p)
    torch.manual_seed(p["seed"] + 1)
    single = nn.Linear(10, 1).to(dev)
    base = nn.Linear(10, 1).to(dev)
    base.load_state_dict(single.state_dict())
    wrapped = c.dp(base, p["devices"], p)
    o1 = torch.optim.SGD(single.parameters(), lr=p["lr"])
    o2 = torch.optim.SGD(wrapped.parameters(), lr=p["lr"])
    rows_in = rows_out = nonfinite = 0
    max_loss_diff, losses_single, losses_dp = 0.0, [], []
    for _ in range(p["epochs"]):
        for inputs, targets in loader:
            inputs, targets = inputs.to(dev), targets.to(dev)
            out1, out2 = single(inputs), wrapped(inputs)
            rows_in += len(inputs)
            rows_out += int(out2.shape[0]) if out2.dim() else 0
            nonfinite += int((~torch.isfinite(out2)).sum())
            l1, l2 = F.mse_loss(out1, targets), F.mse_loss(out2, targets)
            for o, l in ((o1, l1), (o2, l2)):
                o.zero_grad()
                l.backward()
                o.step()
            losses_single.append(float(l1))
            losses_dp.append(float(l2))
            max_loss_diff = max(max_loss_diff, abs(float(l1) - float(l2)))
    return {"devices": p["devices"], "rows_in": rows_in, "rows_out": rows_out,
            "completeness_pct": c.r(100.0 * rows_out / rows_in) if rows_in else 0.0, "nonfinite_outputs": nonfinite,
            "steps": len(losses_dp), "max_loss_diff_vs_single": max_loss_diff,
            "final_loss_single": c.r(losses_single[-1], 6), "final_loss_dp": c.r(losses_dp[-1], 6),
            "loss_dp_first_last": [c.r(losses_dp[0], 6), c.r(losses_dp[-1], 6)],
            "max_param_diff_vs_single": c.max_abs_diff(c.params_of(single), c.params_of(base))}


def run_overhead(p: Dict[str, Any]) -> Dict[str, Any]:
    n = p["devices"]
    dev = c.device(p)
    model = _overhead_model(p).to(dev)
    x = torch.randn(p["batch_size"], 8).to(dev)
    with torch.no_grad():
        single = c.median_ms(lambda: model(x), p["repeats"], on=dev)
        wrapped = c.dp(model, n, p)
        dp_ms = c.median_ms(lambda: wrapped(x), p["repeats"], on=dev)
        ph = c.phases(wrapped)
    out: Dict[str, Any] = {"devices": n, "forward_kind": p["forward_kind"], "depth": p["depth"],
                           "single_ms": c.r(single), "dp_ms": c.r(dp_ms), "dp_ratio": c.r(dp_ms / single),
                           "dp_apply_ms": [c.r(v) for v in ph.apply_ms], "dp_threads": list(ph.threads),
                           "host_cores": lab.devices.host_cores()}
    if n > 1 and p["forward_kind"] == "python":
        from . import rank_fns
        res = c.launch(rank_fns.ddp_forward_overhead, n, p,
                       kwargs=dict(seed=p["seed"], batch=p["batch_size"], d=8, depth=p["depth"],
                                   repeats=p["repeats"]), echo=False, timeout_s=20, time_limit_s=90)
        if res.ok:
            ddp = max(rr["forward_ms"] for rr in res.results)
            out.update(ddp_ms=c.r(ddp), ddp_ratio=c.r(ddp / single),
                       ddp_per_rank_ms=[c.r(rr["forward_ms"]) for rr in res.results])
        else:
            out["ddp_status"] = f"{res.status}: {res.summary}"
    return out


def _data_run(p: Dict[str, Any], workers: int) -> Dict[str, Any]:
    x, y = c.data(p["seed"], 400, 10)
    loader = DataLoader(SlowDataset(x, y, p["sample_cost_ms"]), batch_size=50, num_workers=workers)
    dev = c.device(p)
    torch.manual_seed(p["seed"] + 1)
    model = c.dp(nn.Linear(10, 1), p["devices"], p)
    opt = torch.optim.SGD(model.parameters(), lr=p["lr"])
    timer = lab.StepTimer(model, emit=False)
    rows = 0
    for step, (xb, yb) in enumerate(timer.data(loader)):
        xb, yb = xb.to(dev), yb.to(dev)
        with timer.phase("forward"):
            out = model(xb)
            loss = F.mse_loss(out, yb)
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step()
            opt.zero_grad()
        rows += int(out.shape[0])
        timer.step(step, samples=len(xb), loss=loss)
    timer.close()
    data_ms, step_ms = timer.mean("data_ms", skip=1) or 0.0, timer.mean("step_ms", skip=1) or 0.0
    return {"num_workers": workers, "data_ms": c.r(data_ms), "step_ms": c.r(step_ms),
            "data_share": c.r(data_ms / step_ms) if step_ms else 0.0, "rows_in": 400, "rows_out": rows}


def run_data_wait(p: Dict[str, Any]) -> Dict[str, Any]:
    base = _data_run(p, 0)
    more = _data_run(p, p["num_workers"]) if p["num_workers"] > 0 else base
    return {"devices": p["devices"], "sample_cost_ms": p["sample_cost_ms"], "workers_0": base,
            "workers_n": more, "num_workers": p["num_workers"]}


# -- verdicts --------------------------------------------------------------------------------------

def v_incomplete(e: Dict[str, Any]) -> Verdict:
    text = (f"{e['rows_out']} of {e['rows_in']} output rows returned ({e['completeness_pct']}%), "
            f"{e['nonfinite_outputs']} non-finite, over {e['steps']} steps on {e['devices']} devices")
    if e["rows_out"] < e["rows_in"] or e["nonfinite_outputs"]:
        return "holds", text
    return "does-not-hold", text + " — complete"


def v_loss(e: Dict[str, Any]) -> Verdict:
    d = e["max_loss_diff_vs_single"]
    text = (f"max |loss(DataParallel) - loss(1 device)| over {e['steps']} steps = {fmt(d)}; final loss "
            f"{e['final_loss_dp']} vs {e['final_loss_single']}; weights differ by {fmt(e['max_param_diff_vs_single'])}")
    if d <= 1e-4 * max(1.0, abs(e["final_loss_single"])):
        return "does-not-hold", text + " — same training curve as one device"
    if d <= 1e-2 * max(1.0, abs(e["final_loss_single"])):
        return "partly", text
    return "holds", text


def v_gil(e: Dict[str, Any]) -> Verdict:
    n, ratio = e["devices"], e["dp_ratio"]
    text = (f"{e['forward_kind']} forward: 1 device {e['single_ms']} ms, DataParallel x{n} {e['dp_ms']} ms "
            f"(x{ratio}); per-replica apply ms {e['dp_apply_ms']} on threads {e['dp_threads']}")
    if "ddp_ms" in e:
        text += f"; DDP x{n} processes {e['ddp_ms']} ms (x{e['ddp_ratio']})"
    if n == 1:
        return "partly", text + " (1 device: no threads to contend)"
    if ratio >= 1.5:
        return "holds", text + " — the replicas' Python ran one at a time"
    if ratio >= 1.15:
        return "partly", text
    return "does-not-hold", text + " — no serialization visible"


def v_ddp_gil(e: Dict[str, Any]) -> Verdict:
    if "ddp_ms" not in e:
        return "partly", (f"no DDP comparison in this run (forward_kind={e['forward_kind']}, devices={e['devices']}"
                          f"{', ' + e['ddp_status'] if 'ddp_status' in e else ''}); DataParallel x{e['dp_ratio']}")
    d, dd = e["dp_ratio"], e["ddp_ratio"]
    text = (f"DDP x{e['devices']} forward x{dd} of one device vs DataParallel x{d} (per-rank ms "
            f"{e['ddp_per_rank_ms']}, {e['host_cores']} host cores); note it is separate processes, not the backend, "
            "that removes the shared GIL")
    if dd <= 0.77 * d:
        return "holds", text
    if dd <= d:
        return "partly", text
    return "does-not-hold", text


def v_data(e: Dict[str, Any]) -> Verdict:
    w0 = e["workers_0"]
    complete = w0["rows_out"] == w0["rows_in"] and e["workers_n"]["rows_out"] == e["workers_n"]["rows_in"]
    text = (f"num_workers=0: data wait {w0['data_ms']} ms of a {w0['step_ms']} ms step ({fmt(100 * w0['data_share'])}%), "
            f"rows out {w0['rows_out']}/{w0['rows_in']}")
    if not complete:
        return "holds", text + " — rows were lost"
    if w0["data_share"] >= 0.3:
        return "partly", text + " — loading is the bottleneck, but every result is complete"
    return "does-not-hold", text + " — loading is not the bottleneck and every result is complete"


def v_workers(e: Dict[str, Any]) -> Verdict:
    a, b = e["workers_0"], e["workers_n"]
    text = (f"data wait {a['data_ms']} ms ({fmt(100 * a['data_share'])}% of the step) with 0 workers vs "
            f"{b['data_ms']} ms ({fmt(100 * b['data_share'])}%) with {e['num_workers']}; step {a['step_ms']} -> "
            f"{b['step_ms']} ms")
    if e["num_workers"] == 0:
        return "partly", text + " — set num_workers > 0 to compare"
    if b["data_ms"] < 0.8 * a["data_ms"]:
        return "holds", text
    return "does-not-hold", text


EXPERIMENTS = (
    Experiment("completeness", "Output completeness and loss parity: 1 device vs DataParallel xN",
               ("1 device", "DataParallel xN"), run_completeness, ("rows_out", "loss"), "line: loss per step"),
    Experiment("python-overhead", "Python overhead per device: 1 device vs DataParallel threads vs DDP processes",
               ("1 device", "DataParallel xN", "DDP xN"), run_overhead, ("forward_ms",), "bar: forward ms"),
    Experiment("data-wait", "Data-wait share of each step: num_workers=0 vs num_workers=N",
               ("num_workers=0", "num_workers=N"), run_data_wait, ("data_ms", "step_ms"),
               "stacked bar: data wait vs compute"),
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
    Claim("data-bottleneck", "This can lead to data loading becoming a bottleneck, preventing the GPUs from being "
          "fully utilized and again resulting in incomplete results.", "data-wait", v_data),
    Claim("num-workers", "Multiple `num_workers` should be experimented with to optimize the balance between data "
          "loading and GPU processing.", "data-wait", v_workers),
)

SCENARIO = Scenario(
    id="incomplete-results-gil", title="Incomplete results? DataParallel and the GIL", source=SOURCE,
    summary="Test the claim: output completeness and loss parity vs one device; Python overhead per device on "
            "threads vs DDP processes; DataLoader num_workers and the data-wait share of each step.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("devices"),),
)
