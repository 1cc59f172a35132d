"""Scenario 1 — DataParallel basics: each claim's verdict, a pure function of its experiment's evidence dict.

Separate from the measurement (:mod:`.evidence`) so a verdict can be read, and tested, on evidence alone:
it never measures, it reads the numbers of the run the participant watched.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from .. import stats
from ..stats import compare_spreads as _compare, spread_text as _spread_text
from ..vocabulary import Verdict
from ..wording import fmt


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
