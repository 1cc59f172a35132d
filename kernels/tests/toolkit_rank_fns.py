"""Rank functions for the toolkit's launcher tests (rank processes import them by name)."""
from __future__ import annotations

import os
import signal
import sys
import threading

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import mgpulab as lab


def make_data(seed: int, batch: int, dim: int):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, dim, generator=g)
    w = torch.randn(dim, 1, generator=g)
    y = x @ w + 0.1 * torch.randn(batch, 1, generator=g)
    return x, y


def initial_linear(seed: int, dim: int) -> nn.Linear:
    torch.manual_seed(seed + 1)
    return nn.Linear(dim, 1)


def train_linear(steps: int, lr: float, seed: int, batch: int, dim: int, comm_delay_ms: float = 0.0) -> dict:
    """DDP on this rank's contiguous shard of one fixed batch; returns params, losses, timer frames."""
    rank, world = dist.get_rank(), dist.get_world_size()
    x, y = make_data(seed, batch, dim)
    per = batch // world
    xs, ys = x[rank * per:(rank + 1) * per], y[rank * per:(rank + 1) * per]
    model = DistributedDataParallel(initial_linear(seed, dim))
    timer = lab.StepTimer(model, comm_delay_ms=comm_delay_ms)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        with timer.phase("forward"):
            loss = F.mse_loss(model(xs), ys)
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step()
            opt.zero_grad()
        timer.step(step, samples=len(xs), loss=loss)
        losses.append(loss.item())
    timer.close()
    return {"weight": model.module.weight.detach().tolist(), "bias": model.module.bias.detach().tolist(),
            "losses": losses, "records": list(timer.records)}


def bn_state_table() -> dict:
    """One DDP forward/backward of Linear+BatchNorm on rank-specific data, then every rank's state."""
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)))
    g = torch.Generator().manual_seed(100 + dist.get_rank())
    model(torch.randn(6, 3, generator=g)).sum().backward()
    table = lab.rank_state(model)
    return {"table": table.to_dict(), "text": table.render()}


def two_rank_checks(steps: int, lr: float, seed: int, batch: int, dim: int) -> dict:
    print(f"rank {lab.rank()} of {lab.world_size()} starting")
    return {"train": train_linear(steps, lr, seed, batch, dim), "bn": bn_state_table()}


def emit_frames(count: int) -> int:
    """``count`` metric frames from this rank as fast as it can, with some plain output in between."""
    for step in range(count):
        lab.log(step, loss=step * 0.5, tag_value=float(lab.rank()))
        if step % 500 == 0:
            print(f"progress {step}")
    return count


def skip_collective(steps_before: int) -> None:
    """Rank 1 skips the all_reduce that rank 0 enters: the classic hang."""
    t = torch.ones(1)
    for step in range(steps_before):
        dist.all_reduce(t)
        lab.log(step, loss=t.item())
    if dist.get_rank() == 1:
        threading.Event().wait(120)  # busy elsewhere (e.g. evaluation), never reaches the collective
    dist.all_reduce(t)


def fail_on_rank(bad: int, how: str) -> None:
    t = torch.ones(1)
    dist.all_reduce(t)
    if dist.get_rank() == bad:
        if how == "raise":
            raise ValueError("boom on purpose")
        if how == "exit":
            os._exit(3)  # no exception, no result: only the exit status says what happened
        os.kill(os.getpid(), signal.SIGKILL)
    dist.all_reduce(t)  # the others wait for the dead rank


def block_forever() -> None:
    lab.log(0, loss=1.0)
    threading.Event().wait(300)


def hello(tag: str) -> dict:
    t = torch.tensor([float(dist.get_rank())])
    dist.all_reduce(t)
    print(f"hello {tag} from rank {dist.get_rank()}")
    return {"rank": lab.rank(), "sum": t.item(), "tag": tag, "world": lab.world_size()}


def dump_own_stack() -> str:
    """What the tty's QUIT character does to a rank: a stack dump, and the run goes on."""
    os.kill(os.getpid(), signal.SIGQUIT)
    t = torch.ones(1)
    dist.all_reduce(t)
    sys.stdout.write("still running\n")
    return "done"


def train_linear_placed(steps: int, lr: float, seed: int, batch: int, dim: int) -> dict:
    """``train_linear`` with the model and data on the device the launch's plan gave this rank."""
    rank, world = dist.get_rank(), dist.get_world_size()
    device = lab.devices.rank_device()
    x, y = make_data(seed, batch, dim)
    per = batch // world
    xs, ys = x[rank * per:(rank + 1) * per].to(device), y[rank * per:(rank + 1) * per].to(device)
    module = initial_linear(seed, dim).to(device)
    model = (DistributedDataParallel(module, device_ids=[device.index]) if device.type == "cuda"
             else DistributedDataParallel(module))
    timer = lab.StepTimer(model)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        with timer.phase("forward"):
            loss = F.mse_loss(model(xs), ys)
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step()
            opt.zero_grad()
        timer.step(step, samples=len(xs), loss=loss)
        losses.append(loss)  # read after the loop: no sync per step
    timer.close()
    return {"weight": model.module.weight.detach().cpu().tolist(), "bias": model.module.bias.detach().cpu().tolist(),
            "losses": [float(v) for v in losses], "records": list(timer.records), "device": str(device),
            "backend": str(dist.get_backend())}
