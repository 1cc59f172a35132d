"""Scenario 4 — "DataParallel returns incomplete results" / the GIL: what each experiment cell recorded, turned into its evidence dict.

Separate from the scenario's definition (``__init__``) and its verdicts (:mod:`.verdicts`): these
functions run when a cell finishes its recording (``Experiment.evidence``, see
:mod:`mgpulab_scenarios.evidence`), on that cell's own series and facts; the verdicts read only their result.
"""
from __future__ import annotations

from typing import Any, Dict, List

from .. import stats
from ..observed import Observed, concurrency


def e_completeness(o: Observed) -> Dict[str, Any]:
    n = o.params["devices"]
    dp = f"DataParallel x{n}"
    rows = o.facts["rows"][dp]
    single, parallel = dict(o.values("1 device", "loss")), dict(o.values(dp, "loss"))
    common = sorted(set(single) & set(parallel))
    return {"devices": n, "rows_in": rows["rows_in"], "rows_out": rows["rows_out"],
            "completeness_pct": 100.0 * rows["rows_out"] / rows["rows_in"] if rows["rows_in"] else 0.0,
            "nonfinite_outputs": rows["nonfinite_outputs"], "steps": len(parallel),
            "max_loss_diff_vs_single": max((abs(single[s] - parallel[s]) for s in common), default=0.0),
            "loss_single": {"first": o.first("1 device", "loss"), "last": o.last("1 device", "loss")},
            "loss_dp": {"first": o.first(dp, "loss"), "last": o.last(dp, "loss")},
            "max_param_diff_vs_single": o.facts["max_param_diff_vs_single"]}


def e_overhead(o: Observed) -> Dict[str, Any]:
    p = o.params
    n = p["devices"]
    tags = [f"{variant}{size}" for size in ("", ", 8× batch", ", 64× batch")
            for variant in ("1 device", f"DataParallel x{n}")]
    if n > 1:
        tags.append(f"DDP x{n}")
    variants = [{"tag": tag, "forward_ms": o.spread(tag, "forward_ms"),
                 "per_rank_ms": [stats.bar_value(o, tag, "forward_ms", [r]) for r in o.ranks(tag, "forward_ms")]}
                for tag in tags]
    return {"devices": n, "forward_kind": p["forward_kind"], "depth": p["depth"], "batch_size": p["batch_size"],
            "variants": variants, "threads": o.facts["threads"], "host_cores": o.facts["host_cores"],
            "batch_sweep": [_sweep_row(o, n, factor * p["batch_size"], size)
                            for factor, size in ((1, ""), (8, ", 8× batch"), (64, ", 64× batch"))]}


def _sweep_row(o: Observed, n: int, rows: int, size: str) -> Dict[str, Any]:
    """One batch size of the sweep: DataParallel's forward time over one device's, as the ratio of their
    medians and as the spread of the ratios of the forwards timed at the same repeat (the noise rule's input)."""
    one, dp = o.spread(f"1 device{size}", "forward_ms"), o.spread(f"DataParallel x{n}{size}", "forward_ms")
    paired = dict(o.values(f"1 device{size}", "forward_ms", warmup=False))
    ratios = [v / paired[i] for i, v in o.values(f"DataParallel x{n}{size}", "forward_ms", warmup=False)
              if paired.get(i)]
    spread = stats.spread(ratios)
    return {"rows": rows, "one_ms": one, "dp_ms": dp,
            "ratio": dp["median"] / one["median"] if one and dp and one["median"] else None,
            "ratio_spread": spread.to_dict() if spread else None}


def e_backward(o: Observed) -> Dict[str, Any]:
    import mgpulab as lab
    p, f = o.params, o.facts
    n = p["devices"]
    tag = f"DataParallel x{n}"
    backward = f["backward"][1:] if len(f["backward"]) > 2 else f["backward"]  # the warm-up step left out
    forward = f["forward"][1:] if len(f["forward"]) > 2 else f["forward"]

    def by(step: List[List[Any]], key: int) -> List[List[float]]:  # one span per replica (key 0) or thread (key 1)
        spans: Dict[Any, List[float]] = {}
        for entry in step:
            a, b = spans.get(entry[key], [entry[2], entry[3]])
            spans[entry[key]] = [min(a, entry[2]), max(b, entry[3])]
        return list(spans.values())

    threads = sorted({entry[1] for step in backward for entry in step})
    plan = lab.devices.detect(n, "DataParallel", placement=p["placement"])
    return {"devices": n, "replicas": max((len({e[0] for e in step}) for step in backward), default=0),
            "backward_thread_concurrency": stats.median([concurrency(by(step, 1)) for step in backward])
            if backward else 1.0,
            "backward_replica_overlap": stats.median([concurrency(by(step, 0)) for step in backward])
            if backward else 1.0,
            "forward_concurrency": stats.median([concurrency(step) for step in forward]) if forward else 1.0,
            "backward_threads": threads, "forward_threads": f["forward_threads"], "main_thread": f["main_thread"],
            "backward_ms": o.spread(tag, "backward_ms", [0]), "optimizer_ms": o.spread(tag, "optimizer_ms", [0]),
            "step_ms": o.spread(tag, "step_ms", [0]), "optimizer_devices": f["optimizer_devices"],
            "optimizer_tensors": f["optimizer_tensors"],
            "plan": {"kind": plan.kind, "label": plan.label, "gpus_used": plan.gpus_used}}


def e_data_wait(o: Observed) -> Dict[str, Any]:
    p = o.params
    workers = {}
    for label, rows in o.facts["rows"].items():
        data, step = o.spread(label, "data_ms", [0]), o.spread(label, "step_ms", [0])
        workers[label] = {"data_ms": data, "step_ms": step, "rows_in": rows["rows_in"], "rows_out": rows["rows_out"],
                          "data_share": data["median"] / step["median"] if data and step and step["median"] else 0.0}
    return {"devices": p["devices"], "sample_cost_ms": p["sample_cost_ms"], "num_workers": p["num_workers"],
            "workers": workers}
