"""mgpulab_agent.health: a kernel's description and the health reply, read off the agent's state."""
import os
import selectors
import sys

from agent_parts import gpus, holding, quiet_queue, waiting
from mgpulab_agent import health, host
from mgpulab_agent.links import Links


class Agent:
    def __init__(self):
        self.boot = {"codeHash": "c" * 16}
        self.settings = {"leaseSeconds": 600, "bufferBytes": 1 << 20, "gpus": gpus(3), "whenFull": "queue", "interruptGraceMs": 2000, "python": None}
        self.lease_seconds = 600
        self.started_mono = 0.0
        self.kernels = {}
        self.queue = quiet_queue(gpus(3), self.kernels)
        self.links = Links(selectors.DefaultSelector(), self.kernels, None)
        self.sampler = host.Sampler()
        self.probe = host.VersionProbe(sys.executable)


def test_a_kernel_is_described_with_its_busiest_gpu_and_its_wait_while_queued():
    agent = Agent()
    running = holding(agent.queue, "a", 2)
    agent.sampler.latest = {"GPU-0": (100, 20.0), "GPU-1": (100, 75.0), "GPU-2": (0, 99.0)}
    assert health.describe(running, agent.sampler, agent.queue)["gpuUtilization"] == 75.0
    assert "wait" not in health.describe(running, agent.sampler, agent.queue)
    described = health.describe(waiting(agent.queue, "b", 2), agent.sampler, agent.queue)
    assert described["gpuUtilization"] is None and described["wait"]["free"] == 1


def test_the_health_reply_marks_held_and_reserved_gpus():
    agent = Agent()
    holding(agent.queue, "a", 2)
    waiting(agent.queue, "b", 2)
    reply = health.health_message(agent, "h1")
    by_uuid = {g["gpu"]["uuid"]: g for g in reply["gpus"]}
    assert by_uuid["GPU-0"]["kernel"] == "a" and "since" in by_uuid["GPU-0"]
    assert by_uuid["GPU-2"]["reservedFor"] == "b" and by_uuid["GPU-2"]["kernel"] is None
    assert (reply["kernels"], reply["queued"], reply["links"]) == (1, 1, 0)
    assert [q["kernel"] for q in reply["queue"]] == ["b"]
    assert (reply["type"], reply["requestId"], reply["codeHash"]) == ("health", "h1", "c" * 16)


def _children_niceness(parent: int, marker: str) -> dict:
    """Niceness of each live child of ``parent`` whose command line contains ``marker``."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == parent and marker.encode() in cmdline:
            found[int(entry)] = int(fields[16])  # stat's 19th field: nice
    return found


def test_the_version_probe_imports_torch_at_the_lowest_priority_and_reports_it():
    # It starts with the agent, beside the first kernels: at normal priority its torch import took half a
    # second of CPU from the first cell's output on two cores (BENCHMARKS.md, output through the agent).
    assert os.nice(0) < 19, "the test needs to run above the lowest priority to see the probe lower its own"
    probe = host.VersionProbe(sys.executable)
    probe.start()
    seen = set()
    while not probe.finished.is_set():
        seen.update(_children_niceness(os.getpid(), "facts = {").values())
        if 19 in seen:
            break
        probe.finished.wait(0.001)
    assert probe.finished.wait(180)
    assert 19 in seen, f"the probe ran at niceness {sorted(seen)}, not 19"
    import torch
    assert probe.state == "done" and probe.facts["torch"] == torch.__version__
