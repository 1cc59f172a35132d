"""Rank functions for the scenarios' DDP experiments (rank processes import them by name)."""
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


def ddp_train(seed: int, batch: int, d_in: int, hidden: int, steps: int, lr: float,
              layers: int = 2, comm_delay_ms: float = 0.0) -> Dict[str, Any]:
    """DDP on this rank's chunk of one fixed batch; median step ms (after a warm-up step)."""
    rank, world = dist.get_rank(), dist.get_world_size()
    x, y = c.data(seed, batch, d_in)
    xs, ys = _shard(x, rank, world), _shard(y, rank, world)
    model = DistributedDataParallel(c.mlp(seed, d_in, hidden, layers=layers))
    timer = lab.StepTimer(model, comm_delay_ms=comm_delay_ms, emit=False)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for step in range(steps):
        with timer.phase("forward"):
            loss = F.mse_loss(model(xs), ys)
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step()
            opt.zero_grad()
        timer.step(step, samples=len(xs), loss=loss)
    timer.close()
    skip = 1 if steps > 1 else 0
    return {"rank": rank, "step_ms": timer.mean("step_ms", skip=skip), "forward_ms": timer.mean("forward_ms", skip=skip),
            "comm_ms": timer.mean("comm_ms", skip=skip), "samples": len(xs),
            "params": [p.detach().tolist() for p in model.module.parameters()]}


class PythonHeavy(nn.Module):
    """Many tiny layers: the forward's cost is Python/dispatch overhead, not arithmetic."""

    def __init__(self, d: int, depth: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(d, d) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


def ddp_forward_overhead(seed: int, batch: int, d: int, depth: int, repeats: int) -> Dict[str, Any]:
    """Median forward ms of a Python-heavy model on this rank's chunk, in its own process."""
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(seed)
    model = DistributedDataParallel(PythonHeavy(d, depth))
    x = _shard(torch.randn(batch, d), rank, world)
    with torch.no_grad():
        ms = c.median_ms(lambda: model(x), repeats)
    t = torch.tensor([ms])
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return {"rank": rank, "forward_ms": ms, "max_forward_ms": float(t)}


def ddp_comm(seed: int, batch: int, d_in: int, hidden: int, steps: int, comm_delay_ms: float) -> Dict[str, Any]:
    """Steps with no delay, then the same steps with ``comm_delay_ms`` on every gradient bucket."""
    rank, world = dist.get_rank(), dist.get_world_size()
    x, y = c.data(seed, batch, d_in)
    xs, ys = _shard(x, rank, world), _shard(y, rank, world)
    model = DistributedDataParallel(c.mlp(seed, d_in, hidden))
    timer = lab.StepTimer(model, emit=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    out = {}
    step = 0
    for label, delay in (("baseline", 0.0), ("delayed", comm_delay_ms)):
        timer.comm_delay_ms = delay
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
        timer.close()
        rows = [m["values"] for m in timer.records if m["rank"] == rank and first + 1 <= m["step"] < step]
        step_ms = sum(v["step_ms"] for v in rows) / len(rows)
        comm_ms = sum(v.get("comm_ms") or 0.0 for v in rows) / len(rows)
        out[label] = {"step_ms": step_ms, "comm_ms": comm_ms, "comm_share": comm_ms / step_ms if step_ms else 0.0}
    out["rank"] = rank
    return out


def ddp_uneven_batches(seed: int, d_in: int, steps: int, batches: List[int]) -> Dict[str, Any]:
    """Each rank trains on its own batch size (the article's 10 vs 20 rows); returns per-rank state."""
    rank = dist.get_rank()
    x, y = c.data(seed + rank, batches[rank % len(batches)], d_in)
    model = DistributedDataParallel(c.mlp(seed, d_in, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for step in range(steps):
        losses.append(c.train_step(model, opt, x, y))
        lab.beat(step)
    table = lab.rank_state(model)
    return {"rank": rank, "rows": len(x), "losses": losses, "diverged": [row.name for row in table.diverged()],
            "rows_compared": len(table.rows)}


def ddp_collective_fault(seed: int, d_in: int, rows: int, batch: int, fault: str, fix: str,
                         sleep_s: float) -> Dict[str, Any]:
    """Train over this rank's shard; ``fault`` breaks the lockstep, ``fix`` repairs it.

    fault: none | uneven_steps (rank r gets a naive shard of a dataset whose size does not
    divide, so ranks run different numbers of steps) | skip_collective (rank 1 skips the
    final metric all_reduce) | slow_rank (rank 1 sleeps ``sleep_s`` before its first step).
    fix: none | distributed_sampler | join.
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
    model = DistributedDataParallel(c.mlp(seed, d_in, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    if fault == "slow_rank" and rank == 1:
        time.sleep(sleep_s)
    steps = 0
    t0 = time.perf_counter()

    def loop() -> None:
        nonlocal steps
        for xb, yb in loader:
            c.train_step(model, opt, xb, yb)
            lab.beat(steps)
            steps += 1

    if fix == "join":
        from torch.distributed.algorithms.join import Join
        with Join([model]):
            loop()
    else:
        loop()
    metric = torch.tensor([float(steps)])
    if fault == "skip_collective" and rank == 1:
        threading.Event().wait(120)  # busy elsewhere: never reaches the metric all_reduce
    dist.all_reduce(metric)
    return {"rank": rank, "steps": steps, "seconds": time.perf_counter() - t0, "total_steps": float(metric)}
