"""Rank functions for the scenarios' DDP experiments (rank processes import them by name).

Device-aware: on an NCCL process group each rank uses its GPU
(``lab.devices.rank_device()`` = ``cuda:LOCAL_RANK``), on gloo the CPU. With
``emit=True`` (the notebook cells) a rank logs its metrics — tagged with the
launch's ``run_id`` — so charts can draw them per rank, and returns the
metric messages it sent as ``series`` (the cell's evidence recorder adds them:
rank frames go from the rank's process straight to the lab, not through the
kernel).

Loss: ``loss`` is always the mean over the GLOBAL batch, as the one-device and
DataParallel variants log it, so every variant's loss line is comparable on
one chart: each step's ``Σ_r rows_r · loss_r / Σ_r rows_r`` over the ranks,
all-reduced once after the timed loop (a collective per step would change the
step times being measured) and logged by rank 0 only. Each rank also logs
its own shard's loss as ``rank_loss``. Where ranks run different numbers of
steps (the hang experiments) no global loss exists: they log ``rank_loss`` only.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Dict, List, Mapping, Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import mgpulab as lab
from mgpulab_wire import frames

from . import common as c


class _Sent:
    """``with _Sent(emit) as sent:`` — the metric messages this rank sends inside the block (none when
    ``emit`` is off), heartbeats left out."""

    def __init__(self, emit: bool) -> None:
        self.emit = emit
        self.messages: List[Mapping[str, Any]] = []

    def _tap(self, message: Mapping[str, Any]) -> None:
        if message.get("type") == "metric" and set(message["values"]) != {"heartbeat"}:
            self.messages.append(message)

    def __enter__(self) -> List[Mapping[str, Any]]:
        if self.emit:
            frames.add_tap(self._tap)
        return self.messages

    def __exit__(self, *exc: Any) -> None:
        if self.emit:
            lab.metrics.flush_deferred(True)
            frames.remove_tap(self._tap)


def _log_global_loss(losses: List[torch.Tensor], rows: int, first_step: int = 0,
                     run_id: Optional[str] = None) -> List[float]:
    """Each step's loss over the global batch (rows-weighted mean of the ranks' shard losses), from one
    all_reduce after the loop; rank 0 logs it as ``loss``. Returns it (on every rank)."""
    if not losses:
        return []
    device = losses[0].device
    local = torch.stack([loss.detach().float().reshape(()) for loss in losses]) * float(rows)
    total = torch.cat([local, torch.tensor([float(rows)], device=device)])
    dist.all_reduce(total)
    global_loss = (total[:-1] / total[-1]).tolist()
    if dist.get_rank() == 0:
        for i, value in enumerate(global_loss):
            lab.log(first_step + i, loss=value, run_id=run_id)
    return global_loss


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
    xs, ys = _shard(x, rank, world).to(device), _shard(y, rank, world).to(device)
    model = _ddp(c.mlp(seed, d_in, hidden, d_out, layers=layers))
    timer = lab.StepTimer(model, comm_delay_ms=comm_delay_ms, emit=emit)
    opt = (torch.optim.Adam(model.parameters()) if optimizer == "adam"
           else torch.optim.SGD(model.parameters(), lr=lr))
    losses: List[torch.Tensor] = []
    with _Sent(emit) as sent:
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
        global_loss = _log_global_loss(losses, len(xs))
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
    model = _ddp(PythonHeavy(d, depth))
    x = _shard(torch.randn(batch, d), rank, world).to(device)
    times: List[float] = []
    with _Sent(emit) as sent, torch.no_grad():
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
    xs, ys = _shard(x, rank, world).to(device), _shard(y, rank, world).to(device)
    model = _ddp(c.mlp(seed, d_in, hidden))
    timer = lab.StepTimer(model, emit=emit)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    out: Dict[str, Any] = {}
    step = 0
    with _Sent(emit) as sent:
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
            _log_global_loss(losses, len(xs), first, run_id=label)
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


def ddp_uneven_batches(seed: int, d_in: int, steps: int, batches: List[int], emit: bool = False) -> Dict[str, Any]:
    """Each rank trains on its own batch size (the article's 10 vs 20 rows); returns per-rank state.

    Logs ``rank_loss`` per step and rank, and (rank 0) the global ``loss``: the rows-weighted mean.
    """
    rank = dist.get_rank()
    device = lab.devices.rank_device()
    x, y = c.data(seed + rank, batches[rank % len(batches)], d_in)
    x, y = x.to(device), y.to(device)
    model = _ddp(c.mlp(seed, d_in, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    losses: List[torch.Tensor] = []
    with _Sent(emit) as sent:
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
        global_loss = _log_global_loss(losses, len(x)) if emit else []
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
    model = _ddp(c.mlp(seed, d_in, 8))
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

    with _Sent(emit) as sent:
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
    model = _ddp(c.mlp(seed, d_in, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    steps = skipped = 0
    with _Sent(emit) as sent:
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


def ddp_count_collectives(seed: int, d_in: int, batch: int, steps: int, emit: bool = False) -> Dict[str, Any]:
    """DDP training steps with a comm hook that counts the gradient all-reduces (buckets) of each step,
    logged as ``allreduce_buckets`` per step and rank."""
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
    rank, world = dist.get_rank(), dist.get_world_size()
    device = lab.devices.rank_device()
    x, y = c.data(seed, batch, d_in)
    xs, ys = _shard(x, rank, world).to(device), _shard(y, rank, world).to(device)
    model = _ddp(c.mlp(seed, d_in, 64, layers=3))
    count = [0]

    def counting(state, bucket):  # unannotated: DDP rejects annotations other than its own types
        count[0] += 1
        return allreduce_hook(state, bucket)

    ddp: Any = model  # torch 1.13's stubs do not declare DistributedDataParallel.register_comm_hook
    ddp.register_comm_hook(state=None, hook=counting)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with _Sent(emit) as sent:
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
    xs, ys = _shard(x, rank, world).to(device), _shard(y, rank, world).to(device)
    model = _ddp(c.mlp(seed, d_in, hidden))
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


def ddp_dtype_mismatch(seed: int, d_in: int, steps: int, batch: int, emit: bool = False) -> Dict[str, Any]:
    """The last rank's model and data are float64, the others' float32 (the same shapes): DDP then
    broadcasts the parameters and all-reduces the gradients between tensors of different dtypes.
    A rank that stops before its first step has no last step; logs ``rank_loss`` per step. Returns this rank's dtype, steps run and state checksums."""
    rank, world = dist.get_rank(), dist.get_world_size()
    device = lab.devices.rank_device()
    dtype = torch.float64 if rank == world - 1 else torch.float32
    x, y = c.data(seed + rank, batch, d_in)
    x, y = x.to(device=device, dtype=dtype), y.to(device=device, dtype=dtype)
    model = _ddp(c.mlp(seed, d_in, 8).to(dtype))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    done = 0
    with _Sent(emit) as sent:
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
