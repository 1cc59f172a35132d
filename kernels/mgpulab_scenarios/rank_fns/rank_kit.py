"""What every scenario rank function does the same way: collect the metric messages it sent, log the
global-batch loss once after its loop, take its shard of the batch, wrap its model in DDP on its device.

Separate from the rank functions (:mod:`.training`, :mod:`.faults`) so those read as their experiment only.
"""
from __future__ import annotations

from typing import Any, List, Mapping, Optional

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import mgpulab as lab
from mgpulab import metrics
from mgpulab_wire import frames


class Sent:
    """``with Sent(emit) as sent:`` — the metric messages this rank sends inside the block (none when
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
            metrics.flush_deferred(True)
            frames.remove_tap(self._tap)


def log_global_loss(losses: List[torch.Tensor], rows: int, first_step: int = 0,
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


def shard(x: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    return x.chunk(world)[rank] if rank < len(x.chunk(world)) else x[:0]


def ddp_on_rank_device(module: nn.Module) -> DistributedDataParallel:
    """``module`` on this rank's device, wrapped in DDP (one GPU per rank on NCCL)."""
    device = lab.devices.rank_device()
    module = module.to(device)
    if device.type == "cuda":
        return DistributedDataParallel(module, device_ids=[device.index], output_device=device.index)
    return DistributedDataParallel(module)
