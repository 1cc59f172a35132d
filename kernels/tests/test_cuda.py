"""The GPU paths, run for real on a CUDA host: no sync inside a step, deferred values, memory from the
allocator, virtual devices sharing a GPU, ranks sharing a GPU over gloo, the backend following the tensors.

Every test here carries the ``cuda`` marker: without a GPU they are skipped and say so (conftest.py).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import mgpulab as lab
import toolkit_rank_fns as fns
from mgpulab import devices, metrics
from mgpulab.plan import PlanError
from mgpulab_wire import frames

pytestmark = pytest.mark.cuda
KERNELS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMITS = {"time_limit_s": 120, "timeout_s": 60}


@pytest.fixture
def sent():
    messages = []
    frames.set_sink(messages.append)
    yield messages
    frames.set_sink(None)


def occupy_gpu(ms: float) -> None:
    """Queue a kernel that keeps the current GPU busy for about ``ms`` (calibrated once)."""
    global _CYCLES_PER_MS
    if _CYCLES_PER_MS is None:
        # The first launch loads the kernel's module (CUDA's lazy loading) between the two events,
        # which made the calibration several times too short on an H200: warm it up first.
        torch.cuda._sleep(1000)
        # The allocator's first small block is a cudaMalloc, which waits for the device: a tensor
        # made after the sleep was queued then waited for it (seen on an H200). Allocate it now.
        torch.ones(1, device="cuda")
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(10_000_000)
        end.record()
        end.synchronize()
        _CYCLES_PER_MS = 10_000_000 / start.elapsed_time(end)
    torch.cuda._sleep(int(_CYCLES_PER_MS * ms))


_CYCLES_PER_MS = None


def test_step_timer_never_waits_for_the_gpu_inside_a_step(sent):
    timer = lab.StepTimer(device="cuda:0", run_id="busy")
    with timer.phase("forward"):
        occupy_gpu(300)
        loss = torch.full((), 0.5, device="cuda:0")
    began = time.perf_counter()
    timer.step(0, samples=1, loss=loss, other=torch.full((1,), 2.0, device="cuda:0"))
    took = time.perf_counter() - began
    assert took < 0.1, f"step() waited {took:.3f} s for the GPU"
    # the metric frame waits for the device, not the host (the run's device plan goes out at once)
    assert [m for m in sent if m.get("runId") == "busy" and m["type"] == "metric"] == []
    timer.close()
    frame = next(m for m in sent if m.get("runId") == "busy" and m["type"] == "metric")
    assert frame["values"]["loss"] == 0.5 and frame["values"]["other"] == 2.0
    assert frame["values"]["forward_ms"] >= 200  # GPU time from the events
    assert frame["values"]["memory_peak_mib"] is not None  # the first step carries a memory sample


def test_a_timer_made_before_any_cuda_work_starts_and_samples_memory():
    # A fresh process: CUDA not initialised yet, as in a new kernel whose first cell makes the timer.
    code = (
        "import torch, mgpulab as lab\n"
        "assert not torch.cuda.is_initialized()\n"
        "timer = lab.StepTimer(device='cuda:0', run_id='fresh', emit=False)\n"
        "with timer.phase('forward'):\n"
        "    loss = torch.ones(1024, 1024, device='cuda:0').sum()\n"
        "timer.step(0, loss=loss)\n"
        "timer.close()\n"
        "print(max(r['values'].get('memory_peak_mib') or 0 for r in timer.records))\n"
    )
    env = dict(os.environ, PYTHONPATH=KERNELS_DIR)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout.strip().splitlines()[-1]) >= 4.0  # the 4 MiB tensor


def test_log_sends_cuda_values_once_the_copy_is_done(sent):
    occupy_gpu(300)
    value = torch.full((), 1.25, device="cuda:0")
    began = time.perf_counter()
    message = lab.log(3, loss=value, rank=0, run_id="deferred", host_value=7)
    assert time.perf_counter() - began < 0.1
    assert message["values"] == {"loss": None, "host_value": 7.0}  # filled in when the copy completes
    assert [m for m in sent if m.get("runId") == "deferred"] == []
    metrics.flush_deferred()
    assert [m["values"] for m in sent if m.get("runId") == "deferred"] == [{"loss": 1.25, "host_value": 7.0}]


def test_memory_is_the_allocators_per_device(sent):
    model = nn.Linear(1024, 1024).cuda()
    timer = lab.StepTimer(model, run_id="memory")
    x = torch.randn(256, 1024, device="cuda")
    for step in range(3):
        with timer.phase("forward"):
            loss = model(x).square().mean()
        with timer.phase("backward"):
            loss.backward()
        timer.step(step, loss=loss)
    timer.close()
    metric_frames = [m for m in sent if m.get("type") == "metric" and m.get("runId") == "memory"]  # not its device plan
    frames = [m["values"] for m in metric_frames if "memory_peak_mib" in m["values"]]
    assert frames, "no memory sample"
    assert max(v["memory_peak_mib"] for v in frames) >= 4.0  # the 4 MiB weight and its gradient at least
    assert devices.detect(1, "single").memory_source.startswith("torch.cuda.memory_allocated")


def test_virtual_devices_share_one_gpu_and_compute_what_one_device_does():
    gpus = devices.cuda_device_count()
    n = gpus + 2  # more devices than GPUs on any host
    torch.manual_seed(0)
    single = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)).cuda()
    torch.manual_seed(0)
    model = lab.DataParallel(nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)).cuda(),
                             device_ids=list(range(n)), keep_replicas=True)
    assert isinstance(model, lab.EmulatedDataParallel)
    assert model.device_mode.kind == "cuda-shared" and f"{n} virtual devices on" in model.device_mode.label
    x, y = torch.randn(4 * n, 8, device="cuda"), torch.randn(4 * n, 1, device="cuda")
    F.mse_loss(single(x), y).backward()
    out = model(x)
    F.mse_loss(out, y).backward()
    assert torch.allclose(out, single(x), atol=1e-5)
    for a, b in zip(single.parameters(), model.module.parameters()):
        assert torch.allclose(a.grad, b.grad, atol=1e-5)
    phases = model.last_phases
    assert phases.samples == [4] * n and all(ms is not None for ms in phases.device_ms())
    assert {str(r[0].weight.device) for r in model.last_replicas} <= {f"cuda:{g}" for g in range(gpus)}


def test_a_plain_tensor_attribute_fails_on_virtual_devices_as_on_gpus():
    class Plain(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.ones(3, device="cuda:0")

        def forward(self, x):
            return x * self.scale

    n = devices.cuda_device_count() + 1
    with pytest.raises(Exception, match="Expected all tensors to be on the same device"):
        lab.DataParallel(Plain().cuda(), device_ids=list(range(n)))(torch.ones(2 * n, 3, device="cuda"))


@pytest.mark.cuda(gpus=2)
def test_real_data_parallel_with_one_gpu_per_device():
    model = lab.DataParallel(nn.Linear(4, 2).cuda(), device_ids=[0, 1])
    assert model.device_mode.kind == "cuda" and model.device_mode.label.endswith("CUDA, DataParallel")
    assert model(torch.randn(8, 4, device="cuda")).shape == (8, 2)
    assert model.last_phases.samples == [4, 4]


def test_ranks_sharing_a_gpu_train_over_gloo_like_one_full_batch():
    n = devices.cuda_device_count() + 1  # one rank more than GPUs: they share
    args = dict(steps=3, lr=0.1, seed=5, batch=4 * n, dim=3)
    result = lab.launch(fns.train_linear_placed, n, kwargs=args, **LIMITS)
    assert result.ok, result.summary
    assert result.backend == "gloo" and result.device_mode["kind"] == "cuda-shared"
    assert [r["device"] for r in result.results] == result.device_mode["devices"]
    x, y = fns.make_data(args["seed"], args["batch"], args["dim"])
    model = fns.initial_linear(args["seed"], args["dim"])
    opt = torch.optim.SGD(model.parameters(), lr=args["lr"])
    for _ in range(args["steps"]):
        F.mse_loss(model(x), y).backward()
        opt.step()
        opt.zero_grad()
    for r in result.results:
        assert torch.allclose(torch.tensor(r["weight"]), model.weight.detach(), atol=1e-5)
        # step frames, not the closing memory samples a CUDA timer sends on their own
        step_frames = [m for m in r["records"] if "step_ms" in m["values"]]
        assert len(step_frames) == args["steps"]
        assert all(m["values"]["comm_ms"] is not None for m in step_frames)


def test_cpu_rank_code_on_a_gpu_host_gets_gloo_or_a_clear_error():
    result = lab.launch(fns.train_linear, 1, kwargs=dict(steps=2, lr=0.1, seed=1, batch=4, dim=2), **LIMITS)
    if devices.backend_map_supported():
        assert result.ok, result.summary  # cpu:gloo,cuda:nccl: the CPU tensors went over gloo
        assert "CPU tensors over gloo" in result.device_mode["label"]
    else:
        assert not result.ok and "placement='cpu'" in result.summary
    on_cpu = lab.launch(fns.train_linear, 2, placement="cpu", kwargs=dict(steps=2, lr=0.1, seed=1, batch=4, dim=2),
                        **LIMITS)
    assert on_cpu.ok and on_cpu.backend == "gloo" and on_cpu.device_mode["devices"] == ["cpu", "cpu"]


def test_nccl_beyond_the_gpus_is_refused_naming_the_largest_world_size():
    gpus = devices.cuda_device_count()
    with pytest.raises(PlanError, match=f"largest world size that works with NCCL here is {gpus}"):
        lab.launch(fns.hello, gpus + 1, args=("x",), backend="nccl")


def test_the_gpu_monitor_reads_nvml():
    from mgpulab import gpu_monitor
    monitor = gpu_monitor.ensure_started()
    if monitor is None:
        pytest.skip("neither pynvml nor nvidia-smi is available on this GPU host")
    assert gpu_monitor.source() in (gpu_monitor.SOURCE_NVML, gpu_monitor.SOURCE_SMI)


def test_captured_values_reuse_pinned_slots_and_events(sent):
    """A launch-bound loop pays for everything the timer does on the host: `loss=` copies into pinned slots made
    once and records a pooled event, so a long run allocates no pinned memory and no event after its first steps."""
    from mgpulab import _deferred
    model = nn.Linear(64, 1).cuda()
    x = torch.randn(32, 64, device="cuda")
    timer = lab.StepTimer(model, run_id="pooled")
    expected = []
    for step in range(3 * _deferred._PinnedSlots.PAGE):
        with timer.phase("forward"):
            loss = model(x).square().mean()
        with timer.phase("backward"):
            loss.backward()
        timer.step(step, loss=loss)
        expected.append(loss.detach())
    pages = len(_deferred._slots._pages)
    events = len(_deferred._events._free)
    timer.close()
    assert pages <= 2  # slots go back as their values are read: never a page per step
    assert len(_deferred._events._free) >= events  # and events go back to the pool
    got = [m["values"]["loss"] for m in sent  # metric frames (the timer also names its device plan)
           if m["type"] == "metric" and m.get("runId") == "pooled" and "loss" in m["values"]]
    assert got == pytest.approx([float(v) for v in expected], rel=1e-6)


def test_a_dropped_capture_gives_its_slot_back_once_its_copy_is_done():
    from mgpulab import _deferred
    occupy_gpu(200)
    lab.log(0, loss=torch.full((), 3.0, device="cuda:0"), run_id="dropped")
    metrics.flush_deferred(False)  # as after an interrupt: the copy may still be in flight
    assert len(_deferred._slots._limbo) == 1
    torch.cuda.synchronize()
    with _deferred._pool_lock:
        _deferred._slots._reclaim()
    assert _deferred._slots._limbo == []
