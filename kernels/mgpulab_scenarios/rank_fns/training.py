"""Rank functions of the experiments that train and time: DDP steps, Python-heavy forwards, a delayed
link, gradient buckets and the model's identity across steps (rank processes import them by name).

Separate from :mod:`.faults`: these runs are meant to finish in lockstep; what they return is measured.
"""
from __future__ import annotations

import time
from typing import Any, Dict, List

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

import mgpulab as lab

from .. import common as c
from .rank_kit import Sent, ddp_on_rank_device, log_global_loss, shard


def ddp_train(seed: int, batch: int, d_in: int, hidden: int, steps: int, lr: float,
              layers: int = 2, comm_delay_ms: float = 0.0, d_out: int = 1, optimizer: str = "sgd",
              emit: bool = False) -> Dict[str, Any]:
    """DDP on this rank's chunk of one fixed batch (``common.data``: the batch the one-device and
    DataParallel variants use), the model ``common.mlp`` (their model, same seed).

    ``emit=True`` sends one StepTimer frame per step (rank = DDP rank; tagged
    with the launch's ``run_id``): step/data/forward/backward/comm/optimizer
    ms, samples, memory, ``rank_loss``; then rank 0 sends the global ``loss``
    per step. Returns the mean step/forward/comm ms (warm-up left out as the
    charts do) and, with ``emit``, the messages sent (``series``).
    """
    rank, world = dist.get_rank(), dist.get_world_size()
    device = lab.devices.rank_device()
    x, y = c.data(seed, batch, d_in, d_out)
    xs, ys = shard(x, rank, world).to(device), shard(y, rank, world).to(device)
    model = ddp_on_rank_device(c.mlp(seed, d_in, hidden, d_out, layers=layers))
    timer = lab.StepTimer(model, comm_delay_ms=comm_delay_ms, emit=emit)
    opt = (torch.optim.Adam(model.parameters()) if optimizer == "adam"
           else torch.optim.SGD(model.parameters(), lr=lr))
    losses: List[torch.Tensor] = []
    with Sent(emit) as sent:
        for step, (xb, yb) in enumerate(timer.data([(xs, ys)] * steps)):
            with timer.phase("forward"):
                loss = F.mse_loss(model(xb), yb)
            with timer.phase("backward"):
                loss.backward()
            with timer.phase("optimizer"):
                opt.step()
                opt.zero_grad()
            timer.step(step, samples=len(xb), rank_loss=loss)
            losses.append(loss.detach())
        timer.close()
        global_loss = log_global_loss(losses, len(xs))
    skip = 1 if steps > 2 else 0  # the charts' warm-up rule
    return {"rank": rank, "step_ms": timer.mean("step_ms", skip=skip), "forward_ms": timer.mean("forward_ms", skip=skip),
            "comm_ms": timer.mean("comm_ms", skip=skip), "samples": len(xs), "loss": global_loss,
            "series": sent}


class PythonHeavy(nn.Module):
    """Many tiny layers: the forward's cost is Python/dispatch overhead, not arithmetic."""

    def __init__(self, d: int, depth: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(d, d) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


def ddp_forward_overhead(seed: int, batch: int, d: int, depth: int, repeats: int,
                         emit: bool = False) -> Dict[str, Any]:
    """Forward times of a Python-heavy model on this rank's chunk, in its own process (own interpreter and GIL).

    ``repeats + 1`` forwards, the first a warm-up; ``emit=True`` logs each as
    ``forward_ms`` with ``samples`` (step = forward index, so the charts' rule
    leaves out exactly the warm-up).
    """
    rank, world = dist.get_rank(), dist.get_world_size()
    device = lab.devices.rank_device()
    torch.manual_seed(seed)
    model = ddp_on_rank_device(PythonHeavy(d, depth))
    x = shard(torch.randn(batch, d), rank, world).to(device)
    times: List[float] = []
    with Sent(emit) as sent, torch.no_grad():
        for i in range(repeats + 1):
            t0 = time.perf_counter()
            model(x)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            times.append((time.perf_counter() - t0) * 1000.0)
            if emit:
                lab.log(i, forward_ms=times[-1], samples=len(x))
    timed = times[1:] if len(times) > 2 else times
    return {"rank": rank, "forward_ms": sum(timed) / len(timed), "series": sent}


def ddp_comm(seed: int, batch: int, d_in: int, hidden: int, steps: int, comm_delay_ms: float,
             emit: bool = False) -> Dict[str, Any]:
    """Steps with no delay, then the same steps with ``comm_delay_ms`` on every gradient bucket.

    ``emit=True`` sends the StepTimer frames tagged "baseline" and "delayed" (``steps + 1`` each, the
    first a warm-up) and each phase's global ``loss`` from rank 0.
    """
    rank, world = dist.get_rank(), dist.get_world_size()
    device = lab.devices.rank_device()
    x, y = c.data(seed, batch, d_in)
    xs, ys = shard(x, rank, world).to(device), shard(y, rank, world).to(device)
    model = ddp_on_rank_device(c.mlp(seed, d_in, hidden))
    timer = lab.StepTimer(model, emit=emit)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    out: Dict[str, Any] = {}
    step = 0
    with Sent(emit) as sent:
        for label, delay in (("baseline", 0.0), ("delayed", comm_delay_ms)):
            timer.comm_delay_ms = delay
            timer.run_id = label
            first = step
            losses: List[torch.Tensor] = []
            for _ in range(steps + 1):
                with timer.phase("forward"):
                    loss = F.mse_loss(model(xs), ys)
                with timer.phase("backward"):
                    loss.backward()
                with timer.phase("optimizer"):
                    opt.step()
                    opt.zero_grad()
                timer.step(step, samples=len(xs), rank_loss=loss)
                losses.append(loss.detach())
                step += 1
            timer.close()  # every frame of this label is out before the next label
            log_global_loss(losses, len(xs), first, run_id=label)
            out[label] = comm_share(timer.records, rank, range(first + 1, step))
    out["rank"] = rank
    out["series"] = sent
    return out


def comm_share(records: Any, rank: int, steps: range) -> Dict[str, float]:
    """Mean step and communication time of ``rank`` over ``steps`` from a StepTimer's records, and the share.

    Only the step frames count: on CUDA the timer also sends a memory sample of its own for the last
    step when it closes (memory is sampled at most every 0.1 s), which has no step time."""
    rows = [m["values"] for m in records if m["rank"] == rank and m["step"] in steps and "step_ms" in m["values"]]
    if not rows:
        return {"step_ms": 0.0, "comm_ms": 0.0, "comm_share": 0.0}
    step_ms = sum(v["step_ms"] for v in rows) / len(rows)
    comm_ms = sum(v.get("comm_ms") or 0.0 for v in rows) / len(rows)
    return {"step_ms": step_ms, "comm_ms": comm_ms, "comm_share": comm_ms / step_ms if step_ms else 0.0}


def ddp_count_collectives(seed: int, d_in: int, batch: int, steps: int, emit: bool = False) -> Dict[str, Any]:
    """DDP training steps with a comm hook that counts the gradient all-reduces (buckets) of each step,
    logged as ``allreduce_buckets`` per step and rank."""
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
    rank, world = dist.get_rank(), dist.get_world_size()
    device = lab.devices.rank_device()
    x, y = c.data(seed, batch, d_in)
    xs, ys = shard(x, rank, world).to(device), shard(y, rank, world).to(device)
    model = ddp_on_rank_device(c.mlp(seed, d_in, 64, layers=3))
    count = [0]

    def counting(state, bucket):  # unannotated: DDP rejects annotations other than its own types
        count[0] += 1
        return allreduce_hook(state, bucket)

    ddp: Any = model  # torch 1.13's stubs do not declare DistributedDataParallel.register_comm_hook
    ddp.register_comm_hook(state=None, hook=counting)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with Sent(emit) as sent:
        for step in range(steps):
            count[0] = 0
            c.train_step(model, opt, xs, ys)
            if emit:
                lab.log(step, allreduce_buckets=count[0], samples=len(xs))
    return {"rank": rank, "buckets_last_step": count[0], "series": sent}


def ddp_replica_identity(seed: int, batch: int, d_in: int, hidden: int, steps: int, lr: float) -> Dict[str, Any]:
    """How often DDP copies the model: each training step records which module object and which parameter
    objects (and storages) this rank's DDP runs, so a copy made per step would show as a new identity.
    Returns the number of distinct identities over ``steps`` and the model's tensor count."""
    rank, world = dist.get_rank(), dist.get_world_size()
    device = lab.devices.rank_device()
    x, y = c.data(seed, batch, d_in)
    xs, ys = shard(x, rank, world).to(device), shard(y, rank, world).to(device)
    model = ddp_on_rank_device(c.mlp(seed, d_in, hidden))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    modules, params, storages = set(), set(), set()
    for _ in range(steps):
        opt.zero_grad()
        F.mse_loss(model(xs), ys).backward()
        opt.step()
        modules.add(id(model.module))
        params.add(tuple(id(p) for p in model.module.parameters()))
        storages.add(tuple(p.data_ptr() for p in model.module.parameters()))
    return {"rank": rank, "steps": steps, "distinct_modules": len(modules), "distinct_parameter_sets": len(params),
            "distinct_storages": len(storages), "tensors": len(list(model.module.parameters())),
            "device": str(device)}
