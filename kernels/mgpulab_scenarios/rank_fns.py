"""Rank functions for the scenarios' DDP experiments (rank processes import them by name).

Device-aware: on an NCCL process group each rank uses its GPU
(``lab.devices.rank_device()`` = ``cuda:LOCAL_RANK``), on gloo the CPU. With
``emit=True`` (the notebook cells) a rank logs its metrics — tagged with the
launch's ``run_id`` — so charts can draw them per rank; the headless
experiments leave it off.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Dict, List

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import mgpulab as lab

from . import common as c


def _shard(x: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    return x.chunk(world)[rank] if rank < len(x.chunk(world)) else x[:0]


def _ddp(module: nn.Module) -> DistributedDataParallel:
    """``module`` on this rank's device, wrapped in DDP (one GPU per rank on NCCL)."""
    device = lab.devices.rank_device()
    module = module.to(device)
    if device.type == "cuda":
        return DistributedDataParallel(module, device_ids=[device.index], output_device=device.index)
    return DistributedDataParallel(module)


def ddp_train(seed: int, batch: int, d_in: int, hidden: int, steps: int, lr: float,
              layers: int = 2, comm_delay_ms: float = 0.0, d_out: int = 1, optimizer: str = "sgd",
              emit: bool = False) -> Dict[str, Any]:
    """DDP on this rank's chunk of one fixed batch; median step ms (after a warm-up step).

    ``emit=True`` sends one StepTimer frame per step (rank = DDP rank; tagged
    with the launch's ``run_id``): loss, step/data/forward/backward/comm/
    optimizer ms, samples, memory.
    """
    rank, world = dist.get_rank(), dist.get_world_size()
    device = lab.devices.rank_device()
    x, y = c.data(seed, batch, d_in, d_out)
    xs, ys = _shard(x, rank, world).to(device), _shard(y, rank, world).to(device)
    model = _ddp(c.mlp(seed, d_in, hidden, d_out, layers=layers))
    timer = lab.StepTimer(model, comm_delay_ms=comm_delay_ms, emit=emit)
    opt = (torch.optim.Adam(model.parameters()) if optimizer == "adam"
           else torch.optim.SGD(model.parameters(), lr=lr))
    for step, (xb, yb) in enumerate(timer.data([(xs, ys)] * steps)):
        with timer.phase("forward"):
            loss = F.mse_loss(model(xb), yb)
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step()
            opt.zero_grad()
        timer.step(step, samples=len(xb), loss=loss)
    timer.close()
    skip = 1 if steps > 1 else 0
    return {"rank": rank, "step_ms": timer.mean("step_ms", skip=skip), "forward_ms": timer.mean("forward_ms", skip=skip),
            "comm_ms": timer.mean("comm_ms", skip=skip), "samples": len(xs),
            "params": [p.detach().cpu().tolist() for p in model.module.parameters()]}


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
    """Median forward ms of a Python-heavy model on this rank's chunk, in its own process.

    ``emit=True`` logs each timed forward as ``forward_ms`` (step = repeat index).
    """
    rank, world = dist.get_rank(), dist.get_world_size()
    device = lab.devices.rank_device()
    torch.manual_seed(seed)
    model = _ddp(PythonHeavy(d, depth))
    x = _shard(torch.randn(batch, d), rank, world).to(device)
    times: List[float] = []

    def forward() -> None:
        t0 = time.perf_counter()
        model(x)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append((time.perf_counter() - t0) * 1000.0)

    with torch.no_grad():
        ms = c.median_ms(forward, repeats)
    if emit:
        for i, value in enumerate(times[-repeats:]):
            lab.log(i, forward_ms=value, samples=len(x))
    t = torch.tensor([ms], device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return {"rank": rank, "forward_ms": ms, "max_forward_ms": float(t)}


def ddp_comm(seed: int, batch: int, d_in: int, hidden: int, steps: int, comm_delay_ms: float,
             emit: bool = False) -> Dict[str, Any]:
    """Steps with no delay, then the same steps with ``comm_delay_ms`` on every gradient bucket.

    ``emit=True`` sends the StepTimer frames tagged "baseline" and "delayed".
    """
    rank, world = dist.get_rank(), dist.get_world_size()
    device = lab.devices.rank_device()
    x, y = c.data(seed, batch, d_in)
    xs, ys = _shard(x, rank, world).to(device), _shard(y, rank, world).to(device)
    model = _ddp(c.mlp(seed, d_in, hidden))
    timer = lab.StepTimer(model, emit=emit)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    out: Dict[str, Any] = {}
    step = 0
    for label, delay in (("baseline", 0.0), ("delayed", comm_delay_ms)):
        timer.comm_delay_ms = delay
        timer.run_id = label
        first = step
        for _ in range(steps + 1):
            with timer.phase("forward"):
                loss = F.mse_loss(model(xs), ys)
            with timer.phase("backward"):
                loss.backward()
            with timer.phase("optimizer"):
                opt.step()
                opt.zero_grad()
            timer.step(step, samples=len(xs), loss=loss)
            step += 1
        timer.close()  # every frame of this label is out before the next label
        rows = [m["values"] for m in timer.records if m["rank"] == rank and first + 1 <= m["step"] < step]
        step_ms = sum(v["step_ms"] for v in rows) / len(rows)
        comm_ms = sum(v.get("comm_ms") or 0.0 for v in rows) / len(rows)
        out[label] = {"step_ms": step_ms, "comm_ms": comm_ms, "comm_share": comm_ms / step_ms if step_ms else 0.0}
    out["rank"] = rank
    return out


def ddp_uneven_batches(seed: int, d_in: int, steps: int, batches: List[int], emit: bool = False) -> Dict[str, Any]:
    """Each rank trains on its own batch size (the article's 10 vs 20 rows); returns per-rank state."""
    rank = dist.get_rank()
    device = lab.devices.rank_device()
    x, y = c.data(seed + rank, batches[rank % len(batches)], d_in)
    x, y = x.to(device), y.to(device)
    model = _ddp(c.mlp(seed, d_in, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for step in range(steps):
        losses.append(c.train_step(model, opt, x, y))
        if emit:
            lab.log(step, loss=losses[-1], samples=len(x))
        else:
            lab.beat(step)
    table = lab.rank_state(model)
    return {"rank": rank, "rows": len(x), "losses": losses, "diverged": [row.name for row in table.diverged()],
            "rows_compared": len(table.rows)}


def ddp_collective_fault(seed: int, d_in: int, rows: int, batch: int, fault: str, fix: str,
                         sleep_s: float, emit: bool = False) -> Dict[str, Any]:
    """Train over this rank's shard; ``fault`` breaks the lockstep, ``fix`` repairs it.

    fault: none | uneven_steps (rank r gets a naive shard of a dataset whose size does not
    divide, so ranks run different numbers of steps) | skip_collective (rank 1 skips the
    final metric all_reduce) | slow_rank (rank 1 sleeps ``sleep_s`` before its first step).
    fix: none | distributed_sampler | join. ``emit=True`` logs each step's loss (a rank
    that stops or runs extra steps shows in the per-rank loss series).
    """
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler
    rank, world = dist.get_rank(), dist.get_world_size()
    n = rows + (rank if fault == "uneven_steps" else 0) * batch  # rank r has r extra batches
    x, y = c.data(seed, rows + (world - 1) * batch, d_in)
    dataset = TensorDataset(x[:n], y[:n])
    if fix == "distributed_sampler":
        full = TensorDataset(x[:rows + (world - 1) * batch], y[:rows + (world - 1) * batch])
        loader = DataLoader(full, batch_size=batch, sampler=DistributedSampler(full, world, rank, shuffle=False))
    else:
        loader = DataLoader(dataset, batch_size=batch)
    device = lab.devices.rank_device()
    model = _ddp(c.mlp(seed, d_in, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    if fault == "slow_rank" and rank == 1:
        time.sleep(sleep_s)
    steps = 0
    t0 = time.perf_counter()

    def loop() -> None:
        nonlocal steps
        for xb, yb in loader:
            loss = c.train_step(model, opt, xb.to(device), yb.to(device))
            if emit:
                lab.log(steps, loss=loss, samples=len(xb))
            else:
                lab.beat(steps)
            steps += 1

    if fix == "join":
        from torch.distributed.algorithms.join import Join
        with Join([model]):  # type: ignore[list-item]  # DDP is a Joinable; torch 1.13's stubs do not say so
            loop()
    else:
        loop()
    metric = torch.tensor([float(steps)], device=device)
    if fault == "skip_collective" and rank == 1:
        threading.Event().wait(120)  # busy elsewhere: never reaches the metric all_reduce
    dist.all_reduce(metric)
    return {"rank": rank, "steps": steps, "seconds": time.perf_counter() - t0, "total_steps": float(metric)}
