"""Scenario 2 — training not starting / slow with DataParallel: each claim's verdict, a pure function of its experiment's evidence dict.

Separate from the measurement (:mod:`.evidence`) so a verdict can be read, and tested, on evidence alone:
it never measures, it reads the numbers of the run the participant watched.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .. import stats
from ..stats import compare_spreads as _compare, spread_text as _spread_text
from ..vocabulary import Verdict
from ..wording import fmt


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
