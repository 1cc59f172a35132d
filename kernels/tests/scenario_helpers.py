"""What the scenario test files share: the hostile value, where the kernels and the seed articles are, and
the helpers that read a report or build synthetic evidence (the small runs are conftest's fixture)."""
from __future__ import annotations

import json
import math
import os
import re

import mgpulab_scenarios as sc
from mgpulab_scenarios import VERDICTS

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the articles live beside the repo (../shared/seeds); MGPULAB_SEEDS overrides
SEEDS = os.environ.get("MGPULAB_SEEDS") or os.path.normpath(os.path.join(KERNELS, "..", "..", "shared", "seeds"))
HOSTILE = "1); import os; os.system('x')"


def numbers(obj):
    if isinstance(obj, bool):
        return
    if isinstance(obj, (int, float)):
        if math.isfinite(obj):
            yield float(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from numbers(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from numbers(v)


def mentions_evidence_number(explanation: str, evidence: dict) -> bool:
    said = [float(m) for m in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", explanation)]
    have = list(numbers(evidence))
    for a in said:
        for b in have:
            if a == b or (b != 0 and abs(a - b) / abs(b) < 0.01):
                return True
    return False


def verdict(doc, claim_id):
    return next(c["verdict"] for c in doc["claims"] if c["id"] == claim_id)


def claim(scenario_id, claim_id):
    return next(c for c in sc.get(scenario_id).claims if c.id == claim_id)


def timing(*values):
    from mgpulab_scenarios import stats
    return stats.spread(values).to_dict()


def scaling(single, dp, speedup, kind="cpu-emulated", cores=8, ddp=None):
    plan = {"kind": kind, "host_cores": cores, "label": f"4x {kind}"}
    variants = [{"tag": "1 device", "engine": "single", "devices": 1, "step_ms": single, "speedup": 1.0, "plan": plan},
                {"tag": "DataParallel x4", "engine": "DataParallel", "devices": 4, "step_ms": dp, "speedup": speedup,
                 "plan": plan}]
    if ddp is not None:
        variants.append({"tag": "DDP x4", "engine": "DDP", "devices": 4, "step_ms": ddp, "speedup": 1.0, "plan": plan})
    return {"devices": 4, "basis": "sample", "plan": plan, "variants": variants}


def check_every_claim_has_a_verdict_from_its_numbers(scenario_id, doc):
    """A scenario's headless report: JSON-able, no experiment failed, every claim judged, each explanation
    quoting a number of its evidence."""
    json.dumps(doc)
    assert doc["deviceMode"]
    assert all(e["error"] is None for e in doc["experiments"]), [e["error"] for e in doc["experiments"]]
    assert len(doc["claims"]) == len(sc.get(scenario_id).claims)
    for claim in doc["claims"]:
        assert claim["verdict"] in VERDICTS, claim
        assert mentions_evidence_number(claim["explanation"], claim["evidence"]), claim["explanation"]
