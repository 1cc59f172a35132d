"""CPU emulation of DataParallel: same splits, same results, same losses of state, real threads."""
from __future__ import annotations

import collections
import copy
import threading
import warnings

import pytest
import torch
from torch import nn

import mgpulab as lab
from mgpulab import _scatter_gather, data_parallel


def mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))


def emulated(module: nn.Module, n: int, **options) -> data_parallel.EmulatedDataParallel:
    # The CPU emulation on any host: a GPU host would plan CUDA devices otherwise.
    model = lab.DataParallel(module, device_ids=list(range(n)), placement="cpu", **options)
    assert isinstance(model, data_parallel.EmulatedDataParallel)
    return model


@pytest.mark.parametrize("devices", [1, 2, 3, 4, 6])
def test_chunk_sizes_follow_torch_chunk(devices):
    model = emulated(nn.Identity(), devices)
    for batch in range(1, 18):
        x = torch.arange(batch * 2.0).reshape(batch, 2)
        expected = [len(c) for c in torch.chunk(x, devices)]
        assert [len(c[0]) for c in _scatter_gather.scatter((x,), list(range(devices)))] == expected
        out = model(x)
        assert model.last_phases.samples == expected, (batch, devices)
        assert len(model.last_phases.apply_ms) == len(expected)  # fewer replicas when fewer chunks
        assert torch.equal(out, x)


def test_uneven_and_small_batches_use_fewer_devices():
    model = emulated(nn.Identity(), 4)
    model(torch.zeros(64, 1))
    assert model.last_phases.samples == [16, 16, 16, 16]
    model(torch.zeros(6, 1))
    assert model.last_phases.samples == [2, 2, 2]  # ceil(6/4)=2: device 3 idle
    model(torch.zeros(1, 1))
    assert model.last_phases.samples == [1]


class WithKwargs(nn.Module):
    def forward(self, x, mask=None, scale=1.0, meta=None):
        assert mask.shape[0] == x.shape[0]
        return {"y": x * mask * scale, "n": torch.tensor([x.shape[0]]), "meta": (x.sum(0, keepdim=True),)}


def test_kwargs_are_scattered_and_structures_gathered():
    model = emulated(WithKwargs(), 3)
    x, mask = torch.randn(7, 2), torch.randint(0, 2, (7, 2)).float()
    out = model(x, mask=mask, scale=2.0, meta="same for all")
    assert torch.allclose(out["y"], x * mask * 2.0)
    assert out["n"].tolist() == [3, 3, 1]
    assert out["meta"][0].shape == (3, 2)


def test_scalar_outputs_are_unsqueezed_with_torchs_warning():
    class Loss(nn.Module):
        def forward(self, x):
            return x.sum()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = emulated(Loss(), 3)(torch.ones(9, 2))
    assert out.tolist() == [6.0, 6.0, 6.0]
    assert any("all input tensors were scalars" in str(w.message) for w in caught)


def test_namedtuple_outputs_and_gather_size_errors():
    Pair = collections.namedtuple("Pair", "a b")

    class Named(nn.Module):
        def forward(self, x):
            return Pair(x, x * 2)

    class Trim(nn.Module):  # per-chunk "trimmed padding": lengths differ between devices
        def forward(self, x):
            return x[:, : int(x[0, 0])]

    out = emulated(Named(), 2)(torch.ones(4, 1))
    assert isinstance(out, Pair) and out.b.sum() == 8
    x = torch.ones(4, 5)
    x[2:, 0] = 3.0
    with pytest.raises(RuntimeError, match="Gather got an input of invalid size"):
        emulated(Trim(), 2)(x)


def test_output_and_gradients_match_single_device():
    single, parallel = mlp(), mlp()
    model = emulated(parallel, 3)
    opt_single = torch.optim.SGD(single.parameters(), lr=0.1)
    opt_parallel = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        g = torch.Generator().manual_seed(step)
        x, y = torch.randn(10, 5, generator=g), torch.randn(10, 3, generator=g)
        out_single, out_parallel = single(x), model(x)
        assert torch.allclose(out_single, out_parallel, atol=1e-6)
        nn.functional.mse_loss(out_single, y).backward()
        nn.functional.mse_loss(out_parallel, y).backward()
        for a, b in zip(single.parameters(), parallel.parameters()):
            assert b.grad is not None and torch.allclose(a.grad, b.grad, atol=1e-6)
        opt_single.step(), opt_parallel.step()
        opt_single.zero_grad(), opt_parallel.zero_grad()
    for a, b in zip(single.parameters(), parallel.parameters()):
        assert torch.allclose(a, b, atol=1e-6)


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.register_buffer("inplace_count", torch.zeros(()))
        self.register_buffer("rebound_count", torch.zeros(()))
        self.calls = 0

    def forward(self, x):
        self.inplace_count += 1  # in place on the buffer tensor
        self.rebound_count = self.rebound_count + 1  # a new tensor bound on the replica
        self.calls += 1  # a plain Python attribute
        return self.lin(x)


def test_updates_in_forward_are_lost_except_in_place_on_replica_0():
    module = Counting()
    model = emulated(module, 3)
    model(torch.randn(6, 2)).sum().backward()
    # Rebinding, on any replica, is lost; in-place buffer updates on replica 0 reach the
    # original (replica 0 shares its buffers, as torch documents) — once, not 3 times.
    assert module.calls == 0
    assert module.rebound_count.item() == 0
    assert module.inplace_count.item() == 1
    single = Counting()
    single(torch.randn(6, 2))
    assert (single.calls, single.rebound_count.item(), single.inplace_count.item()) == (1, 1, 1)


def test_one_device_runs_the_original_module():
    module = Counting()
    emulated(module, 1)(torch.randn(4, 2))
    assert module.calls == 1 and module.rebound_count.item() == 1


def test_replica_0_shares_storage_other_replicas_are_copies():
    module = mlp()
    model = emulated(module, 3, keep_replicas=True)
    model(torch.randn(6, 5))
    first, second = model.last_replicas[0], model.last_replicas[2]
    assert first is not module and second is not module
    assert first[0].weight.data_ptr() == module[0].weight.data_ptr()
    assert second[0].weight.data_ptr() != module[0].weight.data_ptr()
    assert torch.equal(second[0].weight, module[0].weight)
    assert not any(True for _ in first.parameters())  # replica params are plain tensors, as in torch


class Rendezvous(nn.Module):
    """Each replica's forward waits until all replicas are inside forward at once."""

    def __init__(self, parties: int):
        super().__init__()
        self.barrier = threading.Barrier(parties, timeout=10)
        self.lin = nn.Linear(1, 1)

    def forward(self, x):
        self.barrier.wait()  # BrokenBarrierError after 10 s if replicas ran one after another
        return self.lin(x)


def test_replicas_run_concurrently_on_their_own_threads():
    model = emulated(Rendezvous(4), 4)
    model(torch.randn(8, 1))
    phases = model.last_phases
    assert sorted(phases.threads) == [f"dp-replica-{i}" for i in range(4)]
    starts, ends = zip(*phases.intervals)
    assert max(starts) < min(ends)  # every replica was inside forward at one moment


def test_phase_times_are_recorded():
    model = emulated(mlp(), 2)
    model(torch.randn(8, 5))
    p = model.last_phases
    assert p.emulated and p.devices == [0, 1]
    for value in (p.scatter_ms, p.replicate_ms, p.parallel_apply_ms, p.gather_ms):
        assert value >= 0
    assert p.total_ms >= p.parallel_apply_ms >= max(p.apply_ms) * 0.99
    assert all(b > 0 for b in p.memory_bytes)
    assert p.to_dict()["samples"] == [4, 4]


class Plain(nn.Module):
    def __init__(self, fix: str = ""):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3, 3))
        if fix == "buffer":
            self.register_buffer("scale", torch.full((3,), 2.0))
        else:
            self.scale = torch.full((3,), 2.0)  # NOT registered: stays on device 0
        self.fix = fix

    def forward(self, x):
        scale = self.scale.to(x.device) if self.fix == "move" else self.scale
        return (x @ self.weight) * scale


def test_unregistered_tensor_attribute_fails_like_on_gpus():
    with pytest.raises(RuntimeError) as caught:
        emulated(Plain(), 2)(torch.randn(4, 3))
    message = str(caught.value)
    assert isinstance(caught.value, lab.EmulatedDeviceMismatch)
    assert "in replica 1 on device 1" in message
    assert "Expected all tensors to be on the same device" in message
    assert "Plain.scale" in message and "register_buffer" in message


@pytest.mark.parametrize("fix", ["buffer", "move"])
def test_registered_or_moved_attribute_works(fix):
    module = Plain(fix)
    reference = copy.deepcopy(module)
    x = torch.randn(4, 3)
    assert torch.allclose(emulated(module, 2)(x), reference(x))


def test_device_mode_is_honest():
    model = emulated(mlp(), 2)
    mode = model.device_mode.to_dict()
    assert mode["kind"] == "cpu-emulated" and mode["count"] == 2
    assert mode["label"].startswith("2× cpu, emulated DataParallel")
    assert lab.device_mode(4, "DDP", placement="cpu")["label"].startswith("4× cpu, DDP over gloo")
