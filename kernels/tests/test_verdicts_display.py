"""Structured verdicts: one display output with text/plain and the verdicts JSON; MIME bundles."""
from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys


import mgpulab_scenarios as sc
from mgpulab_kernel.mime import MAX_REPR_CHARS, mime_bundle
from mgpulab_scenarios.report import VERDICTS_MIME, VerdictsDisplay, call_tracked, numbers, verdict_report

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NONCE = "0123456789abcdef0123456789abcdef"

DOC = {
    "scenario": "dp-basics", "title": "DataParallel basics", "source": "004.txt", "deviceMode": "2× cpu",
    "params": {"devices": 2, "lr": 0.05, "compare_ddp": False, "kind": "x"},
    "experiments": [{"id": "split", "title": "Split", "variants": ["DataParallel xN"], "seconds": 0.01,
                     "evidence": {}, "error": None},
                    {"id": "broken", "title": "Broken", "variants": ["a"], "seconds": 0.0, "evidence": {},
                     "error": "RuntimeError: boom"}],
    "claims": [
        {"id": "splits-evenly", "quote": "64 on 4 GPUs becomes 4 chunks of 16", "experiment": "split",
         "verdict": "partly", "explanation": "uneven: [4, 3]",
         "evidence": {"samples_per_device": [4, 3], "phases_ms": {"scatter": 0.123456789, "gather": 1e-9},
                      "rows": [{"devices": 1, "ok": True}], "label": "x", "nothing": None,
                      "nan": float("nan"), "big": 10 ** 30}},
        {"id": "other", "quote": "q", "experiment": "broken", "verdict": None,
         "explanation": "experiment failed", "evidence": {}},
    ],
}


def _check_report(report: dict) -> None:
    """The shape the lab's verdict view validates (server/protocol/verdict-model.ts)."""
    # sourceTitle (the article's title, shown instead of its file name) and scope ("step": one experiment cell's
    # claims, judged as it ended) are optional in the lab's schema (issue 27).
    assert set(report) - {"sourceTitle", "scope"} == {"scenario", "title", "source", "deviceMode", "params", "experiments",
                                                      "claims"}
    for key in ("scenario", "title", "source", "deviceMode", "sourceTitle"):
        assert isinstance(report.get(key, ""), str)
    assert report.get("scope", "scenario") in ("scenario", "step")
    assert all(isinstance(v, (str, int, float, bool)) for v in report["params"].values())
    for e in report["experiments"]:
        assert set(e) == {"id", "title", "variants", "seconds", "error", "status", "needed", "run", "expectedStacks"}
        assert isinstance(e["seconds"], float) and (e["error"] is None or isinstance(e["error"], str))
        assert all(isinstance(v, str) for v in e["variants"])
        assert e["status"] in sc.STATUSES and isinstance(e["needed"], bool)
        assert e["expectedStacks"] is None or isinstance(e["expectedStacks"], str)
        _check_run(e["run"])
    for c in report["claims"]:
        assert set(c) == {"id", "quote", "experiment", "verdict", "status", "explanation", "numbers", "spreads", "run"}
        assert c["verdict"] in (None, *sc.VERDICTS) and c["status"] in sc.STATUSES
        assert (c["verdict"] is None) == (c["status"] != "measured")
        assert len(c["numbers"]) <= 40
        for n in c["numbers"]:
            assert set(n) in ({"label", "value"}, {"label", "value", "source"}) and isinstance(n["label"], str)
            assert n["value"] is None or isinstance(n["value"], (str, int, float, bool))
            if "source" in n:
                assert {"tag", "metric", "ranks", "steps", "statistic"} <= set(n["source"])
        for item in c["spreads"]:
            assert set(item) == {"label", "n", "min", "median", "max", "mean"}
        _check_run(c["run"])


def _check_run(run) -> None:
    if run is None:
        return
    assert set(run) == {"templateId", "cellId", "executionId", "count", "recordedAt", "params"}
    assert isinstance(run["templateId"], str) and isinstance(run["recordedAt"], str)


def test_bundle_has_text_and_verdicts_json():
    bundle = mime_bundle(VerdictsDisplay(DOC))
    assert set(bundle) == {"text/plain", VERDICTS_MIME}
    assert "verdict: PARTLY" in bundle["text/plain"] and "64 on 4 GPUs" in bundle["text/plain"]
    report = json.loads(bundle[VERDICTS_MIME])  # strict JSON: no NaN
    _check_report(report)
    assert report["experiments"][1]["error"] == "RuntimeError: boom"
    assert "evidence" not in report["claims"][0]
    values = {n["label"]: n["value"] for n in report["claims"][0]["numbers"]}
    assert values == {"samples_per_device[0]": 4, "samples_per_device[1]": 3, "phases_ms.scatter": 0.123456789,  # full precision: displays round, the number equals its statistic
                      "phases_ms.gather": 1e-9, "rows[0].devices": 1, "rows[0].ok": True, "label": "x",
                      "nothing": None, "nan": None, "big": 1e30}
    assert report["claims"][1] == {"id": "other", "quote": "q", "experiment": "broken", "verdict": None,
                                   "status": "failed", "explanation": "experiment failed", "numbers": [],
                                   "spreads": [], "run": None}


def test_numbers_prefer_what_the_verdict_read_and_stay_bounded():
    evidence = {"noise": list(range(50)), "deciding": {"a": 1.0, "b": 2.0}, "rows": [{"x": 1, "y": 2}] * 3,
                "whole": [7, 8]}

    def verdict(e):
        used = e["deciding"]["b"] + sum(r["x"] for r in e["rows"]) + len(e["whole"])
        return "holds", f"{used}"

    outcome, reads = call_tracked(verdict, evidence)
    assert outcome == ("holds", "7.0")
    labels = [n["label"] for n in numbers(evidence, reads)]
    assert labels[:6] == ["deciding.b", "rows[0].x", "rows[1].x", "rows[2].x", "whole[0]", "whole[1]"]
    assert len(labels) == 40 and labels[6:] == [f"noise[{i}]" for i in range(34)]
    assert len(numbers(evidence)) == 40 and numbers(evidence)[0]["label"] == "noise[0]"


def test_a_headless_run_carries_numbers_read_by_each_verdict():
    from mgpulab_scenarios.headless import run_scenario
    doc = run_scenario("dp-basics", {"batch_size": 6, "devices": 4, "timing_repeats": 2}, only=["split"])
    claim = next(c for c in doc["claims"] if c["id"] == "splits-evenly")
    labels = [n["label"] for n in claim["numbers"]]
    assert labels[:3] == ["batch_size", "devices", "samples_per_device[0]"]
    # a number read from the cell's metric series says which series and statistic it is
    first = claim["numbers"][2]
    # Changed on purpose (issue 27): the charts' statistic, the median of the steps, not their mean.
    assert first["value"] == 2 and first["source"] == {"tag": "DataParallel x4", "metric": "samples", "ranks": [0],
                                                       "steps": [1, 2], "statistic": "median"}
    assert claim["run"]["templateId"] == "dp-basics/split" and claim["run"]["executionId"].startswith("cli-")
    report = verdict_report(doc)
    _check_report(report)
    json.dumps(report, allow_nan=False)


def test_show_verdicts_prints_outside_the_kernel(capsys):
    sc.show_verdicts(DOC)
    out = capsys.readouterr().out
    assert "verdict: PARTLY" in out and VERDICTS_MIME not in out


class _Bundle:
    def __init__(self, data):
        self.data = data

    def _repr_mimebundle_(self, include=None, exclude=None):
        return self.data

    def __repr__(self):
        return "<bundle>"


def test_mime_bundle_keeps_only_allowed_types_and_string_values():
    png = b"\x89PNG\r\n"
    bundle = mime_bundle(_Bundle({
        "text/plain": "plain", "text/html": "<b>x</b>", "image/svg+xml": "<svg/>", "image/png": png,
        "application/json": {"a": 1}, "application/vnd.mgpulab.verdicts+json": '{"x": 1}',
        "application/javascript": "alert(1)", "text/x-python": "import os",
        "application/vnd.other.thing+json": "{}", "application/vnd.mgpulab.evil": "{}",
        "application/vnd.mgpulab.Bad+json": "{}", "text/markdown": 5, 7: "seven",
        "application/vnd.mgpulab.big+json": "[" + "1," * MAX_REPR_CHARS + "1]",
        "application/vnd.mgpulab.nan+json": {"v": float("nan")},
    }))
    assert bundle == {"text/plain": "plain", "text/html": "<b>x</b>", "image/svg+xml": "<svg/>",
                      "image/png": base64.b64encode(png).decode("ascii"), "application/json": '{"a": 1}',
                      "application/vnd.mgpulab.verdicts+json": '{"x": 1}'}


def test_mime_bundle_survives_broken_bundles():
    class Broken:
        def _repr_mimebundle_(self, include=None, exclude=None):
            raise RuntimeError("no")

        def __repr__(self):
            return "broken"

    assert mime_bundle(Broken()) == {"text/plain": "broken"}
    assert mime_bundle(_Bundle(["text/plain"])) == {"text/plain": "<bundle>"}
    assert mime_bundle(_Bundle(({"text/html": "<i>m</i>"}, {"meta": 1}))) == {"text/plain": "<bundle>",
                                                                             "text/html": "<i>m</i>"}
    assert mime_bundle(_Bundle) == {"text/plain": repr(_Bundle)}  # a class is not rendered


def test_show_verdicts_in_the_kernel_is_one_display_output():
    code = ("import json, mgpulab_scenarios\n"
            f"mgpulab_scenarios.show_verdicts(json.loads({json.dumps(json.dumps(DOC, allow_nan=True))}))\n")
    boot = f"import sys; from mgpulab_kernel import kernel; kernel.main({{'nonce': '{NONCE}'}})"
    request = base64.b64encode(json.dumps({"type": "execute", "id": "c1", "code": code}).encode())
    env = dict(os.environ, PYTHONPATH=KERNELS)
    done = subprocess.run([sys.executable, "-c", boot], input=request + b"\n", capture_output=True, env=env,
                          timeout=120)
    pattern = re.compile(rb"\x1b\]mgl;" + NONCE.encode() + rb";(.*?)\x07")
    frames = [json.loads(m.group(1)) for m in pattern.finditer(done.stdout)]
    kinds = [f["type"] for f in frames]
    assert "error" not in kinds, frames
    displays = [f for f in frames if f["type"] == "display_data"]
    assert len(displays) == 1 and displays[0]["id"] == "c1"
    data = displays[0]["data"]
    assert set(data) == {"text/plain", VERDICTS_MIME}
    _check_report(json.loads(data[VERDICTS_MIME]))
    assert b"verdict: PARTLY" not in pattern.sub(b"", done.stdout)  # shown once, not also printed


def test_a_spread_in_a_variant_record_is_labelled_with_the_variant():
    from mgpulab_scenarios.report import spreads
    spread = {"n": 5, "min": 1.0, "median": 2.0, "max": 3.0, "mean": 2.0}
    evidence = {"variants": [{"tag": "1 device", "step_ms": spread}, {"tag": "", "step_ms": spread}], "other": spread}
    assert [s["label"] for s in spreads(evidence)] == ["1 device · step_ms", "variants[1].step_ms", "other"]
