"""Metric messages, the step timer, and the inspector — in one process."""
from __future__ import annotations

import json
import math

import pytest
import torch
from torch import nn

import mgpulab as lab
from mgpulab import metrics
from mgpulab_wire import frames


@pytest.fixture
def sent_all():
    messages = []
    frames.set_sink(messages.append)
    yield messages
    frames.set_sink(None)


@pytest.fixture
def sent():
    """The metric messages sent (a step timer also names its devices once: see sent_all)."""
    messages = []
    frames.set_sink(lambda message: messages.append(message) if message.get("type") == "metric" else None)
    yield messages
    frames.set_sink(None)


def test_log_builds_metric_messages(sent, monkeypatch):
    monkeypatch.setenv("RANK", "3")
    lab.log(7, loss=torch.tensor(0.25), lr=1e-3, ok=True)
    assert sent == [{"type": "metric", "rank": 3, "step": 7, "values": {"loss": 0.25, "lr": 1e-3, "ok": 1.0}}]


def test_non_finite_values_are_sent_as_none_and_frames_encode(sent):
    lab.log(0, loss=float("nan"), grad_norm=torch.tensor(float("inf")), rank=1, run_id="r-9")
    message = sent[0]
    assert message == {"type": "metric", "runId": "r-9", "rank": 1, "step": 0,
                       "values": {"loss": None, "grad_norm": None}}
    frame = frames.encode_frame(message, "0123456789abcdef0123456789abcdef")
    assert json.loads(frame[len(frames.FRAME_PREFIX) + 33:-1]) == message


@pytest.mark.parametrize("step, values, error", [
    (-1, {"loss": 1.0}, ValueError),
    (1.5, {"loss": 1.0}, TypeError),
    (0, {}, ValueError),
    (0, {"bad name": 1.0}, ValueError),
    (0, {"loss": "high"}, TypeError),
    (0, {"loss": torch.ones(2)}, TypeError),
])
def test_bad_metrics_are_refused(step, values, error):
    with pytest.raises(error):
        metrics.metric_message(step, values, rank=0)


def test_run_id_tags_messages(sent):
    lab.set_run_id("run-42")
    try:
        lab.log(1, loss=1.0, rank=0)
    finally:
        lab.set_run_id(None)
    assert sent[0]["runId"] == "run-42"


def test_step_timer_on_one_device(sent):
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    timer = lab.StepTimer(model, rank=0)
    batches = [torch.randn(8, 4) for _ in range(3)]
    for step, x in enumerate(timer.data(batches)):
        with timer.phase("forward"):
            loss = model(x).pow(2).mean()
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step()
            opt.zero_grad()
        timer.step(step, samples=len(x), loss=loss)
    timer.close()
    assert [m["step"] for m in sent] == [0, 1, 2]
    values = sent[-1]["values"]
    for name in ("data_ms", "forward_ms", "backward_ms", "optimizer_ms", "step_ms", "memory_mib"):
        assert values[name] is not None and values[name] >= 0, name
    assert "comm_ms" not in values  # no DDP, no communication
    assert values["samples"] == 8.0 and math.isclose(values["loss"], loss.item())
    assert values["step_ms"] >= values["forward_ms"] + values["backward_ms"]
    assert timer.mean("forward_ms") is not None


def test_step_frames_go_out_in_batches_each_with_its_step_s_tag_and_none_is_lost_unclosed(sent):
    """A fast loop's frames go out together (one write, not one per step); the first step's at once, so a
    chart starts; a tag changed mid-run tags only later steps; a timer dropped without close() still sends
    what it held when the cell (here: flush_deferred, as the kernel calls it) ends."""
    import gc
    from mgpulab import timing
    timer = lab.StepTimer(rank=0, run_id="before")
    timer.step(0, samples=1)
    assert [m["step"] for m in sent] == [0], "the first step goes out as it ends"
    for step in range(1, 6):  # far faster than the send interval
        if step == 3:
            timer.run_id = "after"
        timer.step(step, samples=1)
    assert len(sent) < 6, "steps closer together than SEND_INTERVAL_S wait for the next batch"
    assert timing.SEND_INTERVAL_S <= 0.1  # a chart is never more than a tenth of a second behind a fast loop
    del timer
    gc.collect()
    metrics.flush_deferred()
    assert [m["step"] for m in sent] == [0, 1, 2, 3, 4, 5]
    assert [m.get("runId") for m in sent] == ["before"] * 3 + ["after"] * 3


def test_step_timer_with_data_parallel_emits_one_frame_per_device(sent):
    torch.manual_seed(0)
    model = lab.DataParallel(nn.Linear(4, 2), device_ids=[0, 1, 2], placement="cpu")
    timer = lab.StepTimer(model)
    with timer.phase("forward"):
        loss = model(torch.randn(10, 4)).sum()
    with timer.phase("backward"):
        loss.backward()
    timer.step(0, loss=loss)
    assert [m["rank"] for m in sent] == [0, 1, 2]
    assert [m["values"]["samples"] for m in sent] == [4.0, 4.0, 2.0]
    device0 = sent[0]["values"]
    for name in ("scatter_ms", "replicate_ms", "gather_ms", "apply_ms", "forward_ms", "loss"):
        assert device0[name] is not None, name
    assert all(m["values"]["memory_mib"] > 0 for m in sent)
    assert "loss" not in sent[1]["values"]


def test_replica_state_shows_lost_and_unsynchronised_state():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 4)
            self.bn = nn.BatchNorm1d(4)
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return self.bn(self.lin(x))

    torch.manual_seed(0)
    net = Net()
    model = lab.DataParallel(net, device_ids=[0, 1], keep_replicas=True, placement="cpu")
    model(torch.randn(8, 3) + torch.arange(8.0).unsqueeze(1))  # the two chunks differ
    table = lab.replica_state(model)
    assert table.columns == ["original", "replica 0 (dev 0)", "replica 1 (dev 1)"]
    diverged = {row.name for row in table.diverged()}
    assert {"bn.running_mean", "bn.running_var", "calls"} <= diverged
    assert "lin.weight" not in diverged and "bn.num_batches_tracked" not in diverged
    mean = table.row("bn.running_mean")
    assert mean.digests[0] == mean.digests[1] != mean.digests[2]  # replica 0's update reached the original
    assert table.row("calls").values == [0.0, 1.0, 1.0]
    text = table.render()
    assert "≠" in text and "bn.running_mean" in text and "entries differ" in text


def test_replica_state_needs_kept_replicas():
    model = lab.DataParallel(nn.Linear(2, 2), device_ids=[0, 1], placement="cpu")
    model(torch.randn(4, 2))
    with pytest.raises(ValueError, match="keep_replicas=True"):
        lab.replica_state(model)


def test_heartbeat_frames_are_rate_limited(sent):
    from mgpulab import heartbeat
    heartbeat.configure(frame_interval_s=3600.0)
    try:
        heartbeat._last_frame = float("-inf")
        lab.beat(5)
        lab.beat(6)  # within the interval: no second frame
    finally:
        heartbeat.configure()
    assert sent == [{"type": "metric", "rank": 0, "step": 5, "values": {"heartbeat": 1.0}}]


def test_a_step_timer_names_its_run_s_devices_once_with_the_plan_that_ran(sent_all):
    model = lab.DataParallel(nn.Linear(4, 2), device_ids=[0, 1])
    timer = lab.StepTimer(model, run_id="DataParallel x2 (plan test)")
    lab.StepTimer(model, run_id="DataParallel x2 (plan test)")
    lab.StepTimer(nn.Linear(4, 2), run_id="1 device (plan test)")
    plans = [message for message in sent_all if message["type"] == "device_plan"]
    assert [message["runId"] for message in plans] == ["DataParallel x2 (plan test)", "1 device (plan test)"]
    assert plans[0]["plan"] == model.device_mode.to_dict(), "the plan the model runs, not a second opinion"
    assert plans[0]["plan"]["engine"] == "DataParallel" and plans[0]["plan"]["count"] == 2
    assert plans[1]["plan"]["engine"] == "single" and plans[1]["plan"]["count"] == 1
    assert timer.run_id == "DataParallel x2 (plan test)"
    fixtures = json.load(open(__file__.replace("tests/test_toolkit_metrics.py", "protocol/fixtures.json"), encoding="utf-8"))
    fixture = next(message for message in fixtures["kernelMessages"] if message["type"] == "device_plan")
    assert set(plans[0]["plan"]) == set(fixture["plan"]), "the same fields as the protocol's fixture"
