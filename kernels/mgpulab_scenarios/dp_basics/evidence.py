"""Scenario 1 — DataParallel basics: what each experiment cell recorded, turned into its evidence dict.

Separate from the scenario's definition (``__init__``) and its verdicts (:mod:`.verdicts`): these
functions run when a cell finishes its recording (``Experiment.evidence``, see
:mod:`mgpulab_scenarios.evidence`), on that cell's own series and facts; the verdicts read only their result.
"""
from __future__ import annotations

from typing import Any, Dict

import mgpulab as lab

from .. import stats
from ..observed import Observed, concurrency


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
