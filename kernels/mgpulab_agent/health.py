"""What the agent says about itself and its kernels: a kernel's description and the health reply.

Separate from the daemon because these are read-only views over the agent's state (the GPU slots
and queue, the sampler's latest readings, the version probe), built in one place so that the
hosts page, the hello and every kernel_state describe things the same way."""
from __future__ import annotations

import os
import platform
import time
from typing import Dict, List, Protocol

from mgpulab_wire import agent_protocol_generated as wire

from . import agent_settings, host
from .gpu_queue import GpuQueue
from .kernel_proc import KernelProc
from .links import Links


class Observed(Protocol):
    """What the health reply reads of the agent (the daemon's Agent is one)."""
    boot: wire.AgentBoot
    settings: wire.AgentSettings
    lease_seconds: int
    started_mono: float
    kernels: Dict[str, KernelProc]
    queue: GpuQueue
    links: Links
    sampler: host.Sampler
    probe: host.VersionProbe


def describe(kernel: KernelProc, sampler: host.Sampler, queue: GpuQueue) -> wire.AgentKernel:
    """The kernel as the lab shows it: the busiest of its GPUs, and what it waits for while queued."""
    utils = [sampler.latest[uuid][1] for uuid in kernel.gpus if uuid in sampler.latest]
    known = [u for u in utils if u is not None]
    return kernel.describe(max(known) if known else None, queue.wait(kernel) if kernel.state == "queued" else None)


def health_message(agent: Observed, request_id: str) -> wire.HealthMessage:
    slots = agent.queue.slots
    gpus: List[wire.HealthMessageGpusItem] = []
    reserved_for = agent.queue.ids[0] if agent.queue.ids else None
    for gpu in slots.gpus:
        uuid = gpu["uuid"]
        used, util = agent.sampler.latest.get(uuid, (None, None))
        item: wire.HealthMessageGpusItem = {"gpu": gpu, "memoryUsedMiB": used, "utilization": util, "kernel": slots.holders.get(uuid)}
        if uuid in slots.leased_at:
            item["since"] = slots.leased_at[uuid]
        if uuid in slots.retiring:
            item["retiring"] = True
        elif reserved_for is not None and uuid not in slots.holders:
            item["reservedFor"] = reserved_for
        gpus.append(item)
    facts = agent.probe.facts
    return wire.health_message(
        request_id=request_id, hostname=platform.node()[:4000], pid=os.getpid(),
        uptime_seconds=time.monotonic() - agent.started_mono,
        python=facts.get("python") or platform.python_version(), torch=facts.get("torch"), cuda=facts.get("cuda"),
        probe=agent.probe.state, gpu_source=slots.source, gpus=gpus,
        kernels=sum(1 for k in agent.kernels.values() if k.state == "running"), queued=len(agent.queue.ids),
        lease_seconds=agent.lease_seconds, links=len(agent.links.open), code_hash=agent.boot["codeHash"],
        queue=agent.queue.described()[:1024], settings=agent.settings, kept=agent_settings.kept(slots)[:64])
