"""Scenario 3 — parameters not updated with DataParallel (seed 001)."""
from __future__ import annotations

import warnings
from typing import Any, Dict, Type, TypeVar

import torch
import torch.nn.functional as F
from torch import nn

import mgpulab as lab

from . import common as c
from .core import (PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, Verdict, at_most_devices, fmt,
                   load_template)

SOURCE = "001_7181883389e4f40f.txt"

PARAMETERS = (
    Parameter("devices", "int", 2, "DataParallel devices: GPUs (shared when fewer than this), or emulated CPU "
              "devices", 1, 8),
    PLACEMENT,
    Parameter("batch_size", "int", 64, "rows per batch (article: 64)", 1, 1024),
    Parameter("input_size", "int", 10, "LinearModel input size (article: 10)", 1, 256),
    Parameter("output_size", "int", 5, "LinearModel output size (article: 5)", 1, 256),
    Parameter("steps", "int", 5, "training steps per variant", 1, 50),
    Parameter("lr", "float", 0.05, "learning rate (article: 0.01)", 1e-5, 1.0),
    Parameter("manual_target", "choice", "module_children",
              "what the manual update loop walks: the article's `model.module.children()` (the primary model) "
              "or the replicas of the last forward",
              choices=("module_children", "replicas")),
    Parameter("seed", "int", 0, "seed for data and weights", 0, 2 ** 31 - 1),
)


class LinearModel(nn.Module):
    def __init__(self, input_size: int, output_size: int) -> None:
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


class StatefulModel(LinearModel):
    """Mutates state inside forward: an attribute counter (rebinding) and an in-place buffer."""

    rows_seen: torch.Tensor  # a registered buffer (torch types module attributes as Tensor | Module)

    def __init__(self, input_size: int, output_size: int) -> None:
        super().__init__(input_size, output_size)
        self.calls = 0
        self.register_buffer("rows_seen", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls = self.calls + 1
        self.rows_seen.add_(x.shape[0])
        return self.linear(x)


M = TypeVar("M", bound=LinearModel)


def _model(p: Dict[str, Any], cls: Type[M]) -> M:
    torch.manual_seed(p["seed"] + 1)
    return cls(p["input_size"], p["output_size"]).to(c.device(p))


def _resolve(module: nn.Module, name: str) -> Any:
    obj: Any = module
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj


TRAIN_CELL = load_template("params_not_updated_train")

STATE_CELL = load_template("params_not_updated_in_forward")

STEPS = (
    Step("variants", "**optimizer.step vs manual updates.** Train the article's LinearModel with DataParallel "
         "three ways at the same seed: `optimizer.step()` on the wrapped model, the article's manual loop over "
         "`model.module.children()`, and a manual loop over the *replicas*. Watch loss and parameter norm.",
         (Cell("train", TRAIN_CELL),),
         "Does the article's manual loop over `model.module.children()` fail to converge?",
         ("yes, the loss stays flat", "no, it trains like optimizer.step"), ("manual-fails", "optimizer-correct",
                                                                           "grads-not-synchronized")),
    Step("overwrite", "**Edits on a replica.** Change replica 1's weight after a forward and run the next "
         "forward: the replica is rebuilt from the primary model.", (), None, (), ("replica-overwritten",)),
    Step("in-forward", "**State mutated inside forward.** Rebinding an attribute (`self.calls += 1`) on a replica "
         "is lost; an in-place buffer update on replica 0 shares storage with the original and survives, with "
         "device 0's rows only.",
         (Cell("in-forward", STATE_CELL),),
         "After K forwards on N devices, what is `model.module.calls`?", ("K", "K x N", "0"),
         ("updates-discarded",)),
)


# -- experiments -----------------------------------------------------------------------------

def _train(p: Dict[str, Any], how: str) -> Dict[str, Any]:
    x, y = c.data(p["seed"], p["batch_size"], p["input_size"], p["output_size"], to=c.device(p))
    base = _model(p, LinearModel)
    wrapped = None if how == "single" else c.dp(base, p["devices"], p, keep_replicas=True)
    model = base if wrapped is None else wrapped
    opt = torch.optim.SGD(model.parameters(), lr=p["lr"])
    names = [n for n, _ in base.named_parameters()]
    losses, norms, applied = [], [c.param_norm(base)], 0
    for _ in range(p["steps"]):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        losses.append(float(loss))
        if how in ("single", "optimizer"):
            opt.step()
        elif p["manual_target"] == "module_children":
            assert wrapped is not None
            with torch.no_grad():
                for child in wrapped.module.children():
                    for param in child.parameters():
                        if param.grad is not None:
                            param.data -= p["lr"] * param.grad.data
                            applied += 1
        else:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # .grad of a non-leaf replica tensor: None, as on GPUs
                assert wrapped is not None
                for replica in wrapped.last_replicas:
                    for name in names:
                        t = _resolve(replica, name)
                        if isinstance(t, torch.Tensor) and t.grad is not None:
                            t.data -= p["lr"] * t.grad.data
                            applied += 1
        norms.append(c.param_norm(base))
    with torch.no_grad():
        final = float(F.mse_loss(base(x), y))
    return {"loss": [c.r(v, 6) for v in losses], "final_loss": c.r(final, 6), "param_norm": [c.r(v, 6) for v in norms],
            "updates_applied": applied, "params": c.params_of(base)}


def run_variants(p: Dict[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {"devices": p["devices"], "steps": p["steps"], "manual_target": p["manual_target"]}
    params = {}
    for how in ("single", "optimizer", "manual"):
        res = _train(p, how)
        params[how] = res.pop("params")
        out[how] = res
    out["optimizer_vs_single_max_param_diff"] = c.max_abs_diff(params["optimizer"], params["single"])
    # one backward: is the original's gradient the full-batch gradient?
    x, y = c.data(p["seed"], p["batch_size"], p["input_size"], p["output_size"], to=c.device(p))
    single, base = _model(p, LinearModel), _model(p, LinearModel)
    F.mse_loss(single(x), y).backward()
    F.mse_loss(c.dp(base, p["devices"], p)(x), y).backward()
    out["dp_grad_vs_single_max_diff"] = c.max_abs_diff(c.grads(single), c.grads(base))
    out["grad_scale"] = max(float(g.abs().max()) for g in c.grads(single))
    return out


def run_overwrite(p: Dict[str, Any]) -> Dict[str, Any]:
    base = _model(p, LinearModel)
    model = c.dp(base, p["devices"], p, keep_replicas=True)
    x, _ = c.data(p["seed"], p["batch_size"], p["input_size"], p["output_size"], to=c.device(p))
    with torch.no_grad():
        model(x)
    before = base.linear.weight.detach().clone()
    target = len(model.last_replicas) - 1
    with torch.no_grad():
        _resolve(model.last_replicas[target], "linear.weight").add_(1.0)
        edited = float((_resolve(model.last_replicas[target], "linear.weight") - before).abs().max())
        model(x)
    after_replica = _resolve(model.last_replicas[target], "linear.weight")
    table = lab.replica_state(model)
    return {"devices": p["devices"], "edited_replica": target, "edit_size": c.r(edited),
            "replica_diff_from_original_after_next_forward": float((after_replica - base.linear.weight).abs().max()),
            "original_changed_by": float((base.linear.weight - before).abs().max()),
            "diverged_rows_after_next_forward": [row.name for row in table.diverged()]}


def run_in_forward(p: Dict[str, Any]) -> Dict[str, Any]:
    x, _ = c.data(p["seed"], p["batch_size"], p["input_size"], p["output_size"], to=c.device(p))
    single = _model(p, StatefulModel)
    base = _model(p, StatefulModel)
    model = c.dp(base, p["devices"], p, keep_replicas=True)
    with torch.no_grad():
        for _ in range(p["steps"]):
            single(x)
            model(x)
    return {"devices": p["devices"], "forwards": p["steps"], "rows_per_device": list(c.phases(model).samples),
            "single": {"calls": single.calls, "rows_seen": float(single.rows_seen)},
            "dp": {"calls": base.calls, "rows_seen": float(base.rows_seen)}}


# -- verdicts ----------------------------------------------------------------------------------

def v_not_synced(e: Dict[str, Any]) -> Verdict:
    d = e["dp_grad_vs_single_max_diff"]
    text = (f"after one DataParallel backward on {e['devices']} devices the primary model's gradient differs from "
            f"the single-device full-batch gradient by at most {fmt(d)}")
    if d <= 1e-5 * max(1.0, e["grad_scale"]):
        return "does-not-hold", text + ": replica gradients are reduced into the primary model automatically"
    return "holds", text


def v_manual_fails(e: Dict[str, Any]) -> Verdict:
    m, s = e["manual"], e["single"]
    ratio = m["final_loss"] / m["loss"][0] if m["loss"][0] else 1.0
    moved = abs(m["param_norm"][-1] - m["param_norm"][0])
    text = (f"manual loop over {e['manual_target']}: {m['updates_applied']} tensor updates applied, loss "
            f"{m['loss'][0]} -> {m['final_loss']} (x{fmt(ratio)}), parameter norm moved {fmt(moved)}; "
            f"single device: {s['loss'][0]} -> {s['final_loss']}")
    if ratio < 0.98 and moved > 0:
        return "does-not-hold", text + " — it learns"
    if ratio < 1.0:
        return "partly", text
    return "holds", text + " — nothing reached the primary model"


def v_optimizer(e: Dict[str, Any]) -> Verdict:
    d = e["optimizer_vs_single_max_param_diff"]
    o = e["optimizer"]
    text = (f"optimizer.step on DataParallel x{e['devices']}: loss {o['loss'][0]} -> {o['final_loss']}; weights "
            f"after {e['steps']} steps differ from 1-device training by {fmt(d)}")
    if d <= 1e-5:
        return "holds", text
    if d <= 1e-3:
        return "partly", text
    return "does-not-hold", text


def v_overwritten(e: Dict[str, Any]) -> Verdict:
    d, o = e["replica_diff_from_original_after_next_forward"], e["original_changed_by"]
    text = (f"replica {e['edited_replica']}'s weight was moved by {e['edit_size']}; after the next forward it "
            f"differs from the primary by {fmt(d)}, and the primary changed by {fmt(o)}")
    if e["devices"] == 1:
        return "partly", text + " (1 device: the 'replica' is the primary model itself)"
    if d <= 1e-7 and o <= 1e-7:
        return "holds", text
    return "does-not-hold", text


def v_discarded(e: Dict[str, Any]) -> Verdict:
    s, d = e["single"], e["dp"]
    text = (f"after {e['forwards']} forwards: calls {d['calls']} (1 device: {s['calls']}), rows_seen "
            f"{d['rows_seen']} (1 device: {s['rows_seen']}; rows per device {e['rows_per_device']})")
    lost_calls = d["calls"] < s["calls"]
    lost_rows = d["rows_seen"] < s["rows_seen"]
    if lost_calls and d["rows_seen"] == 0:
        return "holds", text + " — every in-forward update was discarded"
    if lost_calls or lost_rows:
        return "partly", text + (" — attribute rebinding was discarded; the in-place buffer update on replica 0 "
                                 "(shared storage) survived with device 0's rows only")
    return "does-not-hold", text + " — nothing was lost"


EXPERIMENTS = (
    Experiment("variants", "1 device vs DataParallel + optimizer.step vs DataParallel + manual update",
               ("1 device", "optimizer.step", "manual"), run_variants, ("loss", "param_norm"),
               "line: loss and parameter norm per step, three variants"),
    Experiment("overwrite", "Edit a replica, run the next forward", ("DataParallel xN",), run_overwrite,
               ("replica_diff",), "table: replica state"),
    Experiment("in-forward", "State mutated inside forward: 1 device vs DataParallel xN",
               ("1 device", "DataParallel xN"), run_in_forward, ("calls", "rows_seen"), "bar"),
)

CLAIMS = (
    Claim("grads-not-synchronized", "These local gradients are not automatically synchronized to create a global "
          "gradient across all replicas.", "variants", v_not_synced),
    Claim("manual-fails", "Subsequent iterations using this approach will fail to converge", "variants",
          v_manual_fails),
    Claim("optimizer-correct", "Here, `optimizer.step()` updates the parameters of the *single* model instance that "
          "`DataParallel` manages internally, based on the *averaged* gradients calculated from all the replicas.",
          "variants", v_optimizer),
    Claim("replica-overwritten", "The next forward pass then overwrites any changes made locally, as each replica's "
          "parameters are reset to the primary model's state.", "overwrite", v_overwritten),
    Claim("updates-discarded", "These updates are localized and, because the primary model is the definitive "
          "version, they become effectively discarded in the subsequent step, leading to a loss of learning "
          "progress.", "in-forward", v_discarded),
)

SCENARIO = Scenario(
    id="params-not-updated", title="Parameters not updated with DataParallel", source=SOURCE,
    summary="optimizer.step on the wrapped model vs manual updates (primary model or replicas) vs state mutated "
            "inside forward — loss and parameter norm per variant.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("devices"),),
)
