"""Adopting the hosts file's settings in a running agent: what changes now, what waits, and why.

Separate from the daemon because it is one policy, stated once: nothing running is taken from
anyone. A new buffer size or Python applies to kernels started from now on; a GPU that left the
file stays with the kernel holding it until that kernel ends; switching to "refuse" when full
refuses the queued kernels at once. Every change and every thing kept becomes a SettingsNote the
lab shows on the hosts page (and a line in the agent's log)."""
from __future__ import annotations

import sys
from typing import Any, Callable, Dict, List, Literal, Optional, Protocol

from mgpulab_wire import agent_protocol_generated as wire

from . import host, runtime_dir
from .gpu_queue import GpuQueue, plural
from .kernel_proc import KernelProc
from .slots import GpuSlots

Setting = Literal["leaseSeconds", "bufferBytes", "gpus", "whenFull", "interruptGraceMs", "python"]
Note = Callable[[Setting, bool, str], None]


class Configurable(Protocol):
    """What adopting settings changes in the agent (the daemon's Agent is one)."""
    settings: wire.AgentSettings
    lease_seconds: int
    python: str
    probe: host.VersionProbe
    kernels: Dict[str, KernelProc]
    queue: GpuQueue

    def start_sampler(self) -> None: ...


def adopt(agent: Configurable, wanted: wire.AgentSettings) -> List[wire.SettingsNote]:
    """Takes the hosts file's settings where that is safe; says what changed and what was kept, and why."""
    notes: List[wire.SettingsNote] = []
    was = agent.settings

    def note(setting: Setting, applied: bool, message: str) -> None:
        notes.append({"setting": setting, "applied": applied, "message": message[:4000]})
        runtime_dir.log(("settings: " if applied else "settings kept: ") + message)

    if wanted["leaseSeconds"] != was["leaseSeconds"]:
        agent.lease_seconds = wanted["leaseSeconds"]
        note("leaseSeconds", True, f"lease {wanted['leaseSeconds']} s (was {was['leaseSeconds']} s)")
    if wanted["interruptGraceMs"] != was["interruptGraceMs"]:
        note("interruptGraceMs", True, f"interrupt grace {wanted['interruptGraceMs'] / 1000:g} s (was {was['interruptGraceMs'] / 1000:g} s)")
    running = sum(1 for k in agent.kernels.values() if k.state == "running")
    later = f"; the {plural(running, 'running kernel')} keep{'s' if running == 1 else ''} theirs" if running else ""
    if wanted["bufferBytes"] != was["bufferBytes"]:
        note("bufferBytes", True, f"output buffer {wanted['bufferBytes']} bytes for kernels started from now on{later}")
    if wanted["python"] != was["python"]:
        agent.python = wanted["python"] or sys.executable
        agent.probe = host.VersionProbe(agent.python)
        agent.probe.start()
        note("python", True, f"kernels started from now on run {agent.python}{later}")
    agent.settings = wanted.copy()
    if wanted["gpus"] != was["gpus"]:
        _adopt_gpus(agent.queue.slots, wanted["gpus"], note)
        agent.start_sampler()
    if wanted["whenFull"] != was["whenFull"]:
        note("whenFull", True, f"when full: {wanted['whenFull']} (was {was['whenFull']})")
        if wanted["whenFull"] == "refuse":
            agent.queue.refuse_all()
    return notes


def adopt_first_line(agent: Configurable, first: Dict[str, Any]) -> List[wire.SettingsNote]:
    """The settings a link's first line carries, adopted. Settings the protocol does not define are
    not taken (the agent keeps its own and logs why); a lab from before settings sends its lease alone."""
    if "settings" in first:
        try:
            return adopt(agent, wire.check_agent_settings(first["settings"], "the link's settings"))
        except wire.ProtocolError as exc:
            runtime_dir.log(f"a link sent settings the protocol does not define; kept mine: {exc}")
            return []
    lease = first.get("leaseSeconds")
    if isinstance(lease, int) and not isinstance(lease, bool) and 0 < lease <= 7 * 24 * 3600 and lease != agent.lease_seconds:
        wanted = agent.settings.copy()
        wanted["leaseSeconds"] = lease
        return adopt(agent, wanted)
    return []


def _adopt_gpus(slots: GpuSlots, declared: Optional[List[wire.HostGpu]], note: Note) -> None:
    before = len(slots.offered())
    gpus, source = host.discover_gpus(declared)
    kept_by = slots.redeclare(gpus, source)
    where = "as the hosts file declares" if source == "declared" else f"found by {source}"
    note("gpus", True, f"{plural(len(gpus), 'GPU')} {where} (was {before})")
    for uuid, holder in kept_by:
        note("gpus", False, f"GPU {uuid} is no longer in the hosts file; kernel {holder} holds it, so it stays until that kernel ends")


def kept(slots: GpuSlots) -> List[str]:
    """What differs from the settings now, and why (for the hosts page)."""
    return [f"GPU {uuid} is no longer in the hosts file; kernel {slots.holders.get(uuid)} holds it until it ends"
            for uuid in sorted(slots.retiring)]
