"""Real DDP over gloo on 2 and 4 CPU ranks, through the lab's launcher."""
from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import mgpulab as lab
import toolkit_rank_fns as fns

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.dirname(os.path.abspath(__file__))
LIMITS = {"time_limit_s": 90, "timeout_s": 60}


def single_process(steps, lr, seed, batch, dim):
    x, y = fns.make_data(seed, batch, dim)
    model = fns.initial_linear(seed, dim)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return model, losses


def check_matches_full_batch(results, steps, lr, seed, batch, dim):
    model, losses = single_process(steps, lr, seed, batch, dim)
    for result in results:
        # DDP averages gradients over equal shards = the full-batch gradient: same parameters
        assert torch.allclose(torch.tensor(result["weight"]), model.weight.detach(), atol=1e-5)
        assert torch.allclose(torch.tensor(result["bias"]), model.bias.detach(), atol=1e-5)
    for step in range(steps):
        mean_of_ranks = sum(r["losses"][step] for r in results) / len(results)
        assert mean_of_ranks == pytest.approx(losses[step], abs=1e-5)


def test_two_ranks_train_like_one_full_batch_and_report_state(capsys):
    args = dict(steps=4, lr=0.1, seed=3, batch=8, dim=3)
    # CPU ranks on any host (a GPU host's `auto` would put both on its GPU: test_cuda.py covers that)
    result = lab.launch(fns.two_rank_checks, 2, kwargs=args, placement="cpu", **LIMITS)
    assert result.ok, result.summary
    assert result.launcher in ("torchrun", "torch.multiprocessing.spawn") and result.launcher_note
    assert result.device_mode["label"].startswith("2× cpu, DDP over gloo")
    check_matches_full_batch([r["train"] for r in result.results], **args)

    records = result.results[1]["train"]["records"]
    assert [m["step"] for m in records] == [0, 1, 2, 3] and {m["rank"] for m in records} == {1}
    for message in records:  # the comm hook timed the allreduce of every step
        assert message["values"]["comm_ms"] > 0
        assert message["values"]["samples"] == 4.0 and message["values"]["memory_mib"] > 0

    table = result.results[0]["bn"]["table"]
    diverged = {row["name"] for row in table["rows"] if row["diverged"]}
    assert diverged == {"1.running_mean", "1.running_var"}  # params and counters stay in sync
    assert table["columns"] == ["rank 0", "rank 1"]
    assert result.results[1]["bn"]["table"] == table  # every rank sees the same gathered table

    out = capsys.readouterr().out
    assert "[rank 0] rank 0 of 2 starting" in out and "[rank 1] rank 1 of 2 starting" in out
    assert "[launch] ok" in out


def test_four_ranks_train_like_one_full_batch():
    args = dict(steps=3, lr=0.05, seed=11, batch=16, dim=4)
    result = lab.launch(fns.train_linear, 4, kwargs=args, **LIMITS)
    assert result.ok, result.summary
    assert [r.state for r in result.ranks] == ["ok"] * 4
    check_matches_full_batch(result.results, **args)


DRIVER = """
import sys
sys.path[:0] = [{kernels!r}, {tests!r}]
from mgpulab_wire import frames
import mgpulab as lab
import toolkit_rank_fns as fns
frames.configure({nonce!r})
result = lab.launch(fns.emit_frames, 4, args=({count},), time_limit_s=120)
print("STATUS", result.status, result.results)
"""


def test_metric_frames_from_four_ranks_sharing_one_pipe_arrive_intact():
    nonce, count = secrets.token_hex(16), 2500
    code = DRIVER.format(kernels=KERNELS, tests=TESTS, nonce=nonce, count=count)
    run = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         timeout=150)
    assert run.returncode == 0, run.stderr.decode()[-3000:]
    stream = run.stdout
    frame = re.compile(rb"\x1b\]mgl;" + nonce.encode() + rb";([^\x07]*)\x07")
    frames = [json.loads(body) for body in frame.findall(stream)]
    plans = [message for message in frames if message["type"] == "device_plan"]
    assert [plan["plan"]["engine"] for plan in plans] == ["DDP"], "the launch names its plan once"
    messages = [message for message in frames if message["type"] == "metric"]
    assert len(messages) == 4 * count
    for rank in range(4):
        mine = [m for m in messages if m["rank"] == rank]
        assert [m["step"] for m in mine] == list(range(count))  # complete and in order
        assert all(m["values"] == {"loss": m["step"] * 0.5, "tag_value": float(rank)} for m in mine)
    rest = frame.sub(b"", stream).decode()
    assert b"\x1b" not in frame.sub(b"", stream)  # no torn frame left behind
    lines = [line for line in rest.splitlines() if line]
    assert all(line.startswith(("[launch] ", "[rank ", "STATUS ")) for line in lines), lines[:5]
    assert sum(line.startswith("[rank 3] progress") for line in lines) == count // 500
    assert f"STATUS ok [{count}, {count}, {count}, {count}]" in rest


def test_launch_code_runs_source_in_every_rank(capsys):
    source = "import os\nprint('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'])\n"
    result = lab.launch_code(source, 2, time_limit_s=60)
    assert result.ok, result.summary
    out = capsys.readouterr().out
    assert "[rank 0] rank 0 of 2" in out and "[rank 1] rank 1 of 2" in out


def test_unpicklable_targets_are_refused_early():
    with pytest.raises(TypeError, match="module level"):
        lab.launch(lambda: None, 2)


def test_injected_comm_delay_shows_in_comm_time():
    result = lab.launch(fns.train_linear, 2, kwargs=dict(steps=2, lr=0.1, seed=1, batch=4, dim=2,
                                                         comm_delay_ms=80.0), **LIMITS)
    assert result.ok, result.summary
    for rank_result in result.results:
        for message in rank_result["records"]:
            values = message["values"]
            assert values["comm_ms"] >= 80.0 and values["backward_ms"] >= 80.0
    check_matches_full_batch(result.results, steps=2, lr=0.1, seed=1, batch=4, dim=2)
