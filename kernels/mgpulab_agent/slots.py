"""The host's GPU slots: which GPUs the agent offers, which kernel holds each and since
when, and what a changed hosts file does to them. A GPU that leaves the file while a
kernel holds it is not taken from that kernel: it is "retiring", offered to nobody, and
goes when its holder releases it. Pure bookkeeping: no processes, no I/O."""
from __future__ import annotations

import time
from typing import Dict, List, Optional, Set, Tuple

from mgpulab_wire import agent_protocol_generated as wire

from .host import GpuSource


class GpuSlots:
    def __init__(self, gpus: List[wire.HostGpu], source: GpuSource) -> None:
        self.gpus: List[wire.HostGpu] = list(gpus)
        self.source = source
        self.holders: Dict[str, str] = {}
        """GPU UUID → the kernel id holding it."""
        self.leased_at: Dict[str, float] = {}
        """GPU UUID → epoch ms its holder leased it."""
        self.retiring: Set[str] = set()

    def offered(self) -> List[wire.HostGpu]:
        """The GPUs a kernel may be given: all but the retiring ones."""
        return [gpu for gpu in self.gpus if gpu["uuid"] not in self.retiring]

    @property
    def total(self) -> int:
        return len(self.offered())

    def free(self) -> List[str]:
        return [gpu["uuid"] for gpu in self.offered() if gpu["uuid"] not in self.holders]

    def lease(self, kernel_id: str, count: int) -> List[str]:
        chosen = self.free()[:count]
        now = time.time() * 1000
        for uuid in chosen:
            self.holders[uuid] = kernel_id
            self.leased_at[uuid] = now
        return chosen

    def release(self, uuids: List[str]) -> List[str]:
        """Frees the GPUs; returns the retiring ones this removed from the host for good."""
        gone: List[str] = []
        for uuid in uuids:
            self.holders.pop(uuid, None)
            self.leased_at.pop(uuid, None)
            if uuid in self.retiring:
                self.retiring.discard(uuid)
                self.gpus = [gpu for gpu in self.gpus if gpu["uuid"] != uuid]
                gone.append(uuid)
        return gone

    def held(self) -> Dict[str, Tuple[int, Optional[float]]]:
        """Kernel id → (GPUs it holds, since when), in the order of the GPUs."""
        out: Dict[str, Tuple[int, Optional[float]]] = {}
        for gpu in self.gpus:
            holder = self.holders.get(gpu["uuid"])
            if holder is None:
                continue
            count, since = out.get(holder, (0, None))
            leased = self.leased_at.get(gpu["uuid"])
            out[holder] = (count + 1, leased if since is None else (since if leased is None else min(since, leased)))
        return out

    def redeclare(self, gpus: List[wire.HostGpu], source: GpuSource) -> List[Tuple[str, str]]:
        """Takes a new GPU list; GPUs it drops that a kernel holds stay, retiring.
        Returns those (uuid, holder) pairs."""
        wanted = {gpu["uuid"] for gpu in gpus}
        kept = [(gpu, self.holders[gpu["uuid"]]) for gpu in self.gpus if gpu["uuid"] not in wanted and gpu["uuid"] in self.holders]
        self.gpus = list(gpus) + [gpu for gpu, _ in kept]
        self.retiring = {gpu["uuid"] for gpu, _ in kept}
        self.source = source
        return [(gpu["uuid"], holder) for gpu, holder in kept]
