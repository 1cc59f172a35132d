"""Scenario 3 — parameters not updated with DataParallel (seed 001)."""
from __future__ import annotations

from typing import Any, Dict

from .core import (PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, Verdict, at_most_devices, fmt,
                   load_template)
from .evidence import Observed

SOURCE = "001_7181883389e4f40f.txt"
SOURCE_TITLE = "Why can't parameters be updated when using `torch.nn.DataParallel` to train on multiple GPUs?"  # the article's own title, shown with the file name as a detail

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


TRAIN_CELL = load_template("params_not_updated_train")

OVERWRITE_CELL = load_template("params_not_updated_overwrite")

STATE_CELL = load_template("params_not_updated_in_forward")

STEPS = (
    Step("variants", "**optimizer.step vs manual updates.** Train the article's LinearModel with DataParallel "
         "three ways at the same seed: `optimizer.step()` on the wrapped model, the article's manual loop over "
         "`model.module.children()`, and a manual loop over the *replicas*. Watch loss and parameter norm.",
         (Cell("train", TRAIN_CELL),),
         "Does the article's manual loop over `model.module.children()` fail to converge?",
         ("yes, the loss stays flat", "no, its loss falls just as fast"),
         ("manual-fails", "primary-unchanged", "optimizer-correct", "grads-not-synchronized"),
         tells=(("never moves",), ("converges", "decreases")),
         explanation="**Why.** `model.module` *is* the one model DataParallel trains: the replicas are copied "
                     "from its parameters on every forward, and their gradients flow back into them. A manual "
                     "update over `model.module.children()` therefore changes exactly what `optimizer.step()` "
                     "changes. A loop over the replicas updates copies that the next forward throws away."),
    Step("overwrite", "**Edits on a replica.** Change replica 1's weight after a forward, then run the next "
         "forward.", (Cell("overwrite", OVERWRITE_CELL),),
         "After you edit a replica's weight, what does the next forward use?",
         ("the edited replica", "a fresh copy of the primary model"),
         ("replica-overwritten", "replicated-at-wrap", "replicates-entire-model"),
         tells=(("edit survives", "kept"), ("rebuilt", "discarded", "lost")),
         explanation="**Why.** The replica is rebuilt from the primary model: `replicate()` runs on every "
                     "forward, so an edit on a replica never reaches the next one."),
    Step("in-forward", "**State mutated inside forward.** The model counts its calls with `self.calls += 1` "
         "and updates a buffer in place inside its forward; run it under DataParallel.",
         (Cell("in-forward", STATE_CELL),),
         "After K forwards on N devices, what is `model.module.calls`?", ("K", "K x N", "0"),
         ("updates-discarded",),
         tells=(("survives",), ("every replica adds",), ("discarded", "lost", "stays at zero")),
         explanation="**Why.** Rebinding an attribute on a replica is lost with the replica; an in-place buffer "
                     "update on replica 0 shares storage with the original and survives, with device 0's rows "
                     "only."),
)


# -- evidence: what each cell recorded ------------------------------------------------------------

VARIANTS = (("1 device", "single"), ("optimizer.step", "optimizer"), ("manual", "manual"))


def e_train(o: Observed) -> Dict[str, Any]:
    p, f = o.params, o.facts
    out: Dict[str, Any] = {"devices": p["devices"], "steps": p["steps"], "manual_target": p["manual_target"],
                           "initial_param_norm": f["initial_param_norm"]}
    for tag, key in VARIANTS:
        out[key] = {"loss_first": o.first(tag, "loss"), "loss_last": o.last(tag, "loss"),
                    "param_norm_last": o.last(tag, "param_norm"), "updates_applied": f["updates_applied"][tag]}
    out.update(optimizer_vs_single_max_param_diff=f["optimizer_vs_single_max_param_diff"],
               dp_grad_vs_single_max_diff=f["dp_grad_vs_single_max_diff"], grad_scale=f["grad_scale"])
    return out


def e_overwrite(o: Observed) -> Dict[str, Any]:
    return {"devices": o.params["devices"], **o.facts}


def e_in_forward(o: Observed) -> Dict[str, Any]:
    dp = f"DataParallel x{o.params['devices']}"
    return {"devices": o.params["devices"], "forwards": o.params["steps"],
            "rows_per_device": o.facts["rows_per_device"],
            "single": {"calls": o.last("1 device", "calls"), "rows_seen": o.last("1 device", "rows_seen")},
            "dp": {"calls": o.last(dp, "calls"), "rows_seen": o.last(dp, "rows_seen")}}


# -- verdicts ----------------------------------------------------------------------------------

def _ratio(a: float, b: float) -> float:
    return a / b if b else 1.0


def v_not_synced(e: Dict[str, Any]) -> Verdict:
    d = e["dp_grad_vs_single_max_diff"]
    text = (f"after one DataParallel backward on {e['devices']} devices the primary model's gradient differs from "
            f"the single-device full-batch gradient by at most {fmt(d)}")
    if d <= 1e-5 * max(1.0, e["grad_scale"]):
        return "does-not-hold", text + ": replica gradients are reduced into the primary model automatically"
    return "holds", text


def v_manual_fails(e: Dict[str, Any]) -> Verdict:
    m, s = e["manual"], e["single"]
    ratio = _ratio(m["loss_last"], m["loss_first"])
    moved = abs(m["param_norm_last"] - e["initial_param_norm"])
    text = (f"manual loop over {e['manual_target']}: {m['updates_applied']} tensor updates applied, loss "
            f"{fmt(m['loss_first'])} -> {fmt(m['loss_last'])} (x{fmt(ratio)}) over {e['steps']} steps, parameter "
            f"norm moved {fmt(moved)}; single device: {fmt(s['loss_first'])} -> {fmt(s['loss_last'])}")
    if e["steps"] < 2:
        return "inconclusive", text + " — one step shows no trend: set steps to 2 or more"
    if ratio < 0.98 and moved > 0:
        return "does-not-hold", text + " — it learns"
    if ratio < 1.0:
        return "partly", text
    return "holds", text + " — nothing reached the primary model"


def v_primary_unchanged(e: Dict[str, Any]) -> Verdict:
    m = e["manual"]
    moved = abs(m["param_norm_last"] - e["initial_param_norm"])
    text = (f"the manual loop over {e['manual_target']} applied {m['updates_applied']} tensor updates; the primary "
            f"model's parameter norm moved {fmt(moved)} ({fmt(e['initial_param_norm'])} -> "
            f"{fmt(m['param_norm_last'])})")
    if e["manual_target"] == "module_children":
        if moved > 0:
            return "does-not-hold", (text + ": the article's loop walks model.module.children() — the primary model "
                                     "itself, not the replicas — so it changes the primary model")
        return "partly", text + ": the loop walked the primary model, but nothing moved"
    if moved == 0:
        return "holds", text + ": updates aimed at the replicas never reach the primary model"
    return "does-not-hold", text


def v_optimizer(e: Dict[str, Any]) -> Verdict:
    d = e["optimizer_vs_single_max_param_diff"]
    o = e["optimizer"]
    text = (f"optimizer.step on DataParallel x{e['devices']}: loss {fmt(o['loss_first'])} -> {fmt(o['loss_last'])}; "
            f"weights after {e['steps']} steps differ from 1-device training by {fmt(d)}")
    if d <= 1e-5:
        return "holds", text
    if d <= 1e-3:
        return "partly", text
    return "does-not-hold", text


def v_overwritten(e: Dict[str, Any]) -> Verdict:
    d, o = e["replica_diff_from_original_after_next_forward"], e["original_changed_by"]
    text = (f"replica {e['edited_replica']}'s weight was moved by {fmt(e['edit_size'])}; after the next forward it "
            f"differs from the primary by {fmt(d)}, and the primary changed by {fmt(o)}")
    if e["devices"] == 1:
        return "partly", text + " (1 device: the 'replica' is the primary model itself)"
    if d <= 1e-7 and o <= 1e-7:
        return "holds", text
    return "does-not-hold", text


def v_replicated_at_wrap(e: Dict[str, Any]) -> Verdict:
    text = (f"right after wrapping, model.module is the original model ({e['module_is_original']}) and "
            f"{e['replicas_at_wrap']} replicas exist; the first forward made {e['replicas_per_forward']}")
    if e["devices"] == 1:
        return "partly", text + " (1 device: nothing is ever replicated)"
    if e["module_is_original"] and e["replicas_at_wrap"] == 0 and e["replicas_per_forward"] > 1:
        return "does-not-hold", text + ": wrapping copies nothing; the replicas are made by each forward pass"
    return "holds", text


def v_entire_model(e: Dict[str, Any]) -> Verdict:
    held, total = e["params_per_replica"], e["model_params"]
    text = f"{len(held)} replicas held {held} of the model's {total} parameters"
    if e["devices"] == 1 or len(held) < 2:
        return "partly", text + " (one device: nothing to replicate)"
    if all(h == total for h in held):
        return "holds", text + ": every replica is a whole copy"
    return "does-not-hold", text


def v_discarded(e: Dict[str, Any]) -> Verdict:
    s, d = e["single"], e["dp"]
    text = (f"after {e['forwards']} forwards: calls {fmt(d['calls'])} (1 device: {fmt(s['calls'])}), rows_seen "
            f"{fmt(d['rows_seen'])} (1 device: {fmt(s['rows_seen'])}; rows per device {e['rows_per_device']})")
    lost_calls = d["calls"] < s["calls"]
    lost_rows = d["rows_seen"] < s["rows_seen"]
    if lost_calls and d["rows_seen"] == 0:
        return "holds", text + " — every in-forward update was discarded"
    if lost_calls or lost_rows:
        return "partly", text + (" — attribute rebinding was discarded; the in-place buffer update on replica 0 "
                                 "(shared storage) survived with device 0's rows only")
    return "does-not-hold", text + " — nothing was lost"


EXPERIMENTS = (
    Experiment("train", "1 device vs DataParallel + optimizer.step vs DataParallel + manual update",
               ("1 device", "optimizer.step", "manual"), metrics=("loss", "param_norm"),
               chart="line: loss and parameter norm per step, three variants", evidence=e_train),
    Experiment("overwrite", "Edit a replica, run the next forward", ("DataParallel xN",),
               metrics=(), chart="table: replica state", evidence=e_overwrite),
    Experiment("in-forward", "State mutated inside forward: 1 device vs DataParallel xN",
               ("1 device", "DataParallel xN"), metrics=("calls", "rows_seen"), chart="bar", evidence=e_in_forward),
)

CLAIMS = (
    Claim("grads-not-synchronized", "These local gradients are not automatically synchronized to create a global "
          "gradient across all replicas.", "train", v_not_synced),
    Claim("manual-fails", "Subsequent iterations using this approach will fail to converge", "train",
          v_manual_fails),
    Claim("primary-unchanged", "This is problematic because you’re directly manipulating the *local* gradients and "
          "parameters within the replicas, while the primary model remains unchanged.", "train", v_primary_unchanged),
    Claim("optimizer-correct", "Here, `optimizer.step()` updates the parameters of the *single* model instance that "
          "`DataParallel` manages internally, based on the *averaged* gradients calculated from all the replicas.",
          "train", v_optimizer),
    Claim("replica-overwritten", "The next forward pass then overwrites any changes made locally, as each replica's "
          "parameters are reset to the primary model's state.", "overwrite", v_overwritten),
    Claim("replicated-at-wrap", "When we instantiate `nn.DataParallel(model)`, the model is replicated onto all "
          "available GPUs.", "overwrite", v_replicated_at_wrap),
    Claim("replicates-entire-model", "The fundamental problem lies in the fact that `DataParallel` replicates the "
          "entire model onto each available GPU.", "overwrite", v_entire_model),
    Claim("updates-discarded", "These updates are localized and, because the primary model is the definitive "
          "version, they become effectively discarded in the subsequent step, leading to a loss of learning "
          "progress.", "in-forward", v_discarded),
)

SCENARIO = Scenario(
    id="params-not-updated", title="Parameters not updated with DataParallel", source=SOURCE, source_title=SOURCE_TITLE,
    summary="optimizer.step on the wrapped model vs manual updates (primary model or replicas) vs state mutated "
            "inside forward — loss and parameter norm per variant.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("devices"),),
    # What each choice of a step's question is, in verdicts (see Scenario.outcomes).
    outcomes={
        "variants": ({"manual-fails": ("holds",)}, {"manual-fails": ("does-not-hold",)}),
        "overwrite": ({"replica-overwritten": ("does-not-hold",)}, {"replica-overwritten": ("holds",)}),
        # The primary's counter stays 0 when the replicas' attribute updates are discarded (holds, or partly
        # when only the in-place buffer update of replica 0 survived); K when nothing was lost.
        "in-forward": ({"updates-discarded": ("does-not-hold",)}, {}, {"updates-discarded": ("holds", "partly")}),
    },
)
