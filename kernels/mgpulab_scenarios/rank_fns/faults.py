"""Rank functions of the experiments that break DDP's lockstep on purpose: uneven batches, a skipped or
slow collective, an OOM on one rank, mixed dtypes, DDP without a process group.

Separate from :mod:`.training`: each provokes an outcome (a hang, a failed collective) the launcher must
survive and the experiment records; rank processes import them by name.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Dict, List

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import mgpulab as lab

from .. import common as c
from .rank_kit import Sent, ddp_on_rank_device, log_global_loss


def ddp_uneven_batches(seed: int, d_in: int, steps: int, batches: List[int], emit: bool = False) -> Dict[str, Any]:
    """Each rank trains on its own batch size (the article's 10 vs 20 rows); returns per-rank state.

    Logs ``rank_loss`` per step and rank, and (rank 0) the global ``loss``: the rows-weighted mean.
    """
    rank = dist.get_rank()
    device = lab.devices.rank_device()
    x, y = c.data(seed + rank, batches[rank % len(batches)], d_in)
    x, y = x.to(device), y.to(device)
    model = ddp_on_rank_device(c.mlp(seed, d_in, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    losses: List[torch.Tensor] = []
    with Sent(emit) as sent:
        for step in range(steps):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
            if emit:
                lab.log(step, rank_loss=loss, samples=len(x))
            else:
                lab.beat(step)
        global_loss = log_global_loss(losses, len(x)) if emit else []
    table = lab.rank_state(model)
    return {"rank": rank, "rows": len(x), "losses": [float(v) for v in losses], "global_loss": global_loss,
            "diverged": [row.name for row in table.diverged()], "rows_compared": len(table.rows), "series": sent}


def ddp_collective_fault(seed: int, d_in: int, rows: int, batch: int, fault: str, fix: str,
                         sleep_s: float, emit: bool = False) -> Dict[str, Any]:
    """Train over this rank's shard; ``fault`` breaks the lockstep, ``fix`` repairs it.

    fault: none | uneven_steps (rank r gets a naive shard of a dataset whose size does not
    divide, so ranks run different numbers of steps) | skip_collective (rank 1 skips the
    final metric all_reduce) | slow_rank (rank 1 sleeps ``sleep_s`` after its first step: a rank slow in the
    middle of training, as one writing a checkpoint is; before the first step it would be start-up).
    fix: none | distributed_sampler | join. ``emit=True`` logs each step's shard loss as ``rank_loss``
    (a rank that stops or runs extra steps shows in the per-rank series; ranks out of step have no
    global loss).
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
    model = ddp_on_rank_device(c.mlp(seed, d_in, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    steps = 0
    t0 = time.perf_counter()

    def loop() -> None:
        nonlocal steps
        for xb, yb in loader:
            loss = c.train_step(model, opt, xb.to(device), yb.to(device))
            if emit:
                lab.log(steps, rank_loss=loss, samples=len(xb))
            else:
                lab.beat(steps)
            steps += 1
            if fault == "slow_rank" and rank == 1 and steps == 1:
                time.sleep(sleep_s)

    with Sent(emit) as sent:
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
    return {"rank": rank, "steps": steps, "seconds": time.perf_counter() - t0, "total_steps": float(metric),
            "series": sent}


def ddp_oom_on_one_rank(seed: int, d_in: int, rows: int, batch: int, oom_step: int, action: str,
                        budget_mib: float, emit: bool = False) -> Dict[str, Any]:
    """Train in lockstep; at ``oom_step`` rank 1's batch does not fit its (emulated) device memory.

    action: ``raise`` (the out-of-memory error ends rank 1) | ``skip_batch`` (rank 1 catches it and
    goes on with its next batch, as a "robust" loop might — from then on it runs one gradient
    all-reduce fewer than the others). After the loop every rank meets at a barrier (a checkpoint).
    """
    from torch.utils.data import DataLoader, TensorDataset
    rank = dist.get_rank()
    device = lab.devices.rank_device()
    x, y = c.data(seed + rank, rows, d_in)
    loader = DataLoader(TensorDataset(x, y), batch_size=batch)
    model = ddp_on_rank_device(c.mlp(seed, d_in, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    steps = skipped = 0
    with Sent(emit) as sent:
        for step, (xb, yb) in enumerate(loader):
            if rank == 1 and step == oom_step:
                try:
                    c.check_budget(model.module, [len(xb) * 100_000], budget_mib)  # this batch's activations
                except c.EmulatedOOM as err:
                    if action == "raise":
                        raise
                    print(f"rank {rank}: skipping batch {step}: {err}", flush=True)
                    skipped += 1
                    continue
            loss = c.train_step(model, opt, xb.to(device), yb.to(device))
            if emit:
                lab.log(step, rank_loss=loss, samples=len(xb))
            else:
                lab.beat(step)
            steps += 1
    dist.barrier()
    return {"rank": rank, "steps": steps, "skipped": skipped, "series": sent}


def ddp_dtype_mismatch(seed: int, d_in: int, steps: int, batch: int, emit: bool = False) -> Dict[str, Any]:
    """The last rank's model and data are float64, the others' float32 (the same shapes): DDP then
    broadcasts the parameters and all-reduces the gradients between tensors of different dtypes.
    A rank that stops before its first step has no last step; logs ``rank_loss`` per step. Returns this rank's dtype, steps run and state checksums."""
    rank, world = dist.get_rank(), dist.get_world_size()
    device = lab.devices.rank_device()
    dtype = torch.float64 if rank == world - 1 else torch.float32
    x, y = c.data(seed + rank, batch, d_in)
    x, y = x.to(device=device, dtype=dtype), y.to(device=device, dtype=dtype)
    model = ddp_on_rank_device(c.mlp(seed, d_in, 8).to(dtype))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    done = 0
    with Sent(emit) as sent:
        for step in range(steps):
            loss = c.train_step(model, opt, x, y)
            done += 1
            if emit:
                lab.log(step, rank_loss=loss, samples=len(x))
            else:
                lab.beat(step)
    table = lab.rank_state(model)
    return {"rank": rank, "dtype": str(dtype).replace("torch.", ""), "steps_done": done,
            "diverged": [row.name for row in table.diverged()], "rows_compared": len(table.rows), "series": sent}


def ddp_without_init(seed: int, d_in: int, batch: int) -> Dict[str, Any]:
    """Build DistributedDataParallel in a rank process whose launcher did NOT initialise a process group
    (``lab.launch(..., init_process_group=False)``), then initialise one (gloo, from the launcher's
    RANK/WORLD_SIZE/MASTER_* environment) and build it again with one training step. Returns both attempts."""
    from datetime import timedelta
    model = c.mlp(seed, d_in, 8)  # CPU over gloo: the check is about the process group, not the device
    attempts: Dict[str, Any] = {"initialized_before": dist.is_initialized()}
    try:
        DistributedDataParallel(model)
        attempts["without_init"] = {"ok": True, "error": None}
    except Exception as exc:  # the error itself is what is measured
        attempts["without_init"] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=30))
    rank = dist.get_rank()
    try:
        x, y = c.data(seed + rank, batch, d_in)
        ddp = DistributedDataParallel(model)
        loss = c.train_step(ddp, torch.optim.SGD(ddp.parameters(), lr=0.01), x, y)
        attempts["with_init"] = {"ok": True, "error": None, "loss": loss, "world_size": dist.get_world_size()}
    except Exception as exc:
        attempts["with_init"] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        dist.destroy_process_group()
    return {"rank": rank, **attempts}
