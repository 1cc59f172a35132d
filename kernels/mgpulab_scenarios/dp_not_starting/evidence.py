"""Scenario 2 — training not starting / slow with DataParallel: what each experiment cell recorded, turned into its evidence dict.

Separate from the scenario's definition (``__init__``) and its verdicts (:mod:`.verdicts`): these
functions run when a cell finishes its recording (``Experiment.evidence``, see
:mod:`mgpulab_scenarios.evidence`), on that cell's own series and facts; the verdicts read only their result.
"""
from __future__ import annotations

from typing import Any, Dict

from .. import stats
from ..observed import Observed
from ..wording import clip


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
