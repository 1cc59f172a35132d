"""One story also when a run breaks: an experiment whose run failed gives its claims "experiment failed"
with the error — never a verdict — in the kernel's verdicts cell, in the report and in the headless catalog,
which then exits non-zero naming the experiments. A failure the experiment provokes on purpose (a hang, an
out-of-memory error) is a measurement; any other failure is the experiment failing.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import mgpulab_scenarios as sc
from kernel_run import run_kernel
from mgpulab import outcome
from mgpulab_scenarios import evidence
from mgpulab_scenarios.report import VERDICTS_MIME

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Every rank process dies at start with SIGKILL, as the kernel's OOM killer would kill it: a fault from
# outside the lab, on every launch, whichever launcher `auto` picks on this host. A spawned rank is a new
# interpreter (multiprocessing's spawn_main); a torchrun rank is forked by its keeper (mgpulab._rank_keeper),
# which must live to report how the rank ended, so there the rank is killed as it leaves the fork.
KILL_RANKS = '''
import os, signal, sys
argv = getattr(sys, "orig_argv", [])
if any("spawn_main" in a for a in argv):
    os.kill(os.getpid(), signal.SIGKILL)
elif any("mgpulab._rank_keeper" in a for a in argv):
    os.register_at_fork(after_in_child=lambda: os.kill(os.getpid(), signal.SIGKILL))
'''

@pytest.fixture
def ranks_killed_at_start(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(KILL_RANKS)
    return dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{KERNELS}")


def test_a_launch_that_breaks_fails_its_experiment_and_the_catalog_exits_non_zero(ranks_killed_at_start):
    done = subprocess.run([sys.executable, "-m", "mgpulab_scenarios.cli", "hangs", "--json"], capture_output=True,
                          env=ranks_killed_at_start, timeout=600, cwd=KERNELS)
    assert done.returncode == 1, done.stderr.decode()[-3000:]
    doc = json.loads(done.stdout)
    launching = {"oom-ddp", "collectives", "slow-link", "uneven-batches", "dtype-mismatch", "fault", "fix"}
    failed = {e["id"] for e in doc["experiments"] if e["status"] == "failed"}
    assert failed == launching, doc["experiments"]
    stderr = done.stderr.decode()
    assert "error: experiment(s) failed: " in stderr
    assert all(f"hangs/{name}" in stderr.splitlines()[-1] for name in launching)
    for claim in doc["claims"]:
        if claim["experiment"] in launching:
            assert claim["verdict"] is None and claim["status"] == "failed", claim
            assert claim["explanation"].startswith("experiment failed: a launch ended in a rank killed by a signal")
            assert "killed by SIGKILL" in claim["explanation"]
        else:  # the oversized batch runs in the catalog's own process: measured as ever
            assert claim["status"] == "measured" and claim["verdict"] is not None
    slow_link = next(e for e in doc["experiments"] if e["id"] == "slow-link")
    assert "it provokes a hang (a rank stopped making progress), not this" in slow_link["error"]


def _execute(code: str, n: int) -> dict:
    return {"type": "execute", "id": f"r{n}", "code": code, "cellId": f"cell-{n}", "executionId": f"exec-{n}"}


def _report(cell) -> dict:
    shown = [m for m in cell.of("display_data") if VERDICTS_MIME in m["data"]]
    assert len(shown) == 1, cell.text
    return json.loads(shown[0]["data"][VERDICTS_MIME])


def test_a_cell_that_raises_fails_its_experiment_in_the_kernel():
    scenario = sc.get("hangs")
    values = scenario.validate({})
    params = ", ".join(f"{name}={values[name]!r}" for name in scenario.used("oom"))
    broken = (f"from mgpulab_scenarios import evidence\nrun = evidence.start('hangs/oom', {params})\n"
              "raise ValueError('broken on purpose')")
    verdicts = sc.render("hangs/verdicts", values)
    first, second, shown = run_kernel([_execute(broken, 1), _execute("1 + 1", 2), _execute(verdicts, 3)])
    assert first.status == "error" and second.status == "ok" and shown.status == "ok"
    report = _report(shown)
    oom = next(e for e in report["experiments"] if e["id"] == "oom")
    assert oom["status"] == "failed" and oom["error"] == "the cell raised ValueError: broken on purpose"
    assert oom["run"]["executionId"] == "exec-1"
    for claim in report["claims"]:
        if claim["experiment"] == "oom":
            assert claim["verdict"] is None and claim["status"] == "failed"
            assert claim["explanation"] == "experiment failed: the cell raised ValueError: broken on purpose"
            assert claim["numbers"] == []  # no numbers from a run that broke
        else:
            assert claim["status"] == "needs-run"


def test_an_interrupted_cell_asks_to_run_it_again(tmp_path):
    evidence.clear()
    scenario = sc.get("hangs")
    values = scenario.validate({})
    params = {name: values[name] for name in scenario.used("oom")}
    with evidence.executing("hangs/oom", "exec-9"):
        evidence.start("hangs/oom", **params)
    evidence.cell_ended("exec-9", "interrupted", "KeyboardInterrupt: ")
    doc = sc.run("hangs", values, experiments=["oom"])
    assert doc["experiments"][0]["status"] == "needs-run"
    assert "did not finish" in doc["experiments"][0]["why"]


class _Launch:
    def __init__(self, status, culprit=None, error=None, exit_code=None):
        self.status, self.culprit, self.summary = status, culprit, "summary"
        self.ranks = [type("Rank", (), {"error": error, "exit_code": exit_code})()]


@pytest.mark.parametrize("launch, expected", [
    (_Launch("ok"), "ok"),
    (_Launch("hang"), "hang"),
    (_Launch("start_timeout"), "start_timeout"),
    (_Launch("time_limit"), "time_limit"),
    (_Launch("failed", 0, "EmulatedOOM: emulated OOM on emulated device 0: needs 76 MiB"), "failed:oom"),
    (_Launch("failed", 0, "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"), "failed:oom"),
    (_Launch("failed", 0, "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer"),
     "failed:collective"),
    (_Launch("failed", 0, "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 3000ms"),
     "failed:collective"),
    (_Launch("failed", 0, "DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error"),
     "failed:collective"),
    (_Launch("failed", 0, None, -6), "failed:abort"),
    (_Launch("failed", 0, None, -9), "failed:signal"),
    (_Launch("failed", 0, None, 3), "failed:exit"),
    (_Launch("failed", 0, "KeyError: 'step_ms'"), "failed:error"),
    (_Launch("failed", 0, "RuntimeError: Expected all tensors to be on the same device"), "failed:error"),
])
def test_launch_outcomes(launch, expected):
    assert outcome.launch_outcome(launch) == expected


def test_only_what_an_experiment_provokes_is_a_measurement():
    hang = [{"outcome": "hang", "status": "hang", "summary": "no heartbeat from rank 0 for 3.0 s"}]
    assert evidence.unexpected_launch(hang, ("hang",)) is None
    broke = [{"outcome": "failed:error", "status": "failed", "summary": "rank 0 failed first: KeyError: 'step_ms'"}]
    assert evidence.unexpected_launch(broke, ("hang",)) == (
        "a launch ended in an error in a rank (it provokes a hang (a rank stopped making progress), not this): "
        "rank 0 failed first: KeyError: 'step_ms'")
    start = [{"outcome": "start_timeout", "status": "start_timeout", "summary": "ranks 0, 1 did not reach…"}]
    assert evidence.unexpected_launch(start, ("hang", "failed:collective")).startswith(
        "a launch ended in a start-up that never ended")
    assert evidence.unexpected_launch([{"outcome": "time_limit", "status": "time_limit", "summary": "s"}], ()) \
        == "a launch ended in the time limit: s"
