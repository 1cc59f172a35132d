"""mgpulab_agent.health: a kernel's description and the health reply, read off the agent's state."""
import selectors
import sys

from agent_parts import Clock, gpus, kernel
from mgpulab_agent import health, host
from mgpulab_agent.gpu_queue import GpuQueue
from mgpulab_agent.links import Links
from mgpulab_agent.slots import GpuSlots
from mgpulab_agent.timers import Timers


class Host:
    def announce(self, kernel, requester=None, request_id=None):
        pass

    def pump(self, kernel):
        pass

    def start(self, kernel):
        return None


class Agent:
    def __init__(self):
        self.boot = {"codeHash": "c" * 16}
        self.settings = {"leaseSeconds": 600, "bufferBytes": 1 << 20, "gpus": gpus(3), "whenFull": "queue", "interruptGraceMs": 2000, "python": None}
        self.lease_seconds = 600
        self.started_mono = 0.0
        self.kernels = {}
        self.queue = GpuQueue(GpuSlots(gpus(3), "declared"), self.kernels, Timers(Clock()), Host())
        self.links = Links(selectors.DefaultSelector(), self.kernels, None)
        self.sampler = host.Sampler()
        self.probe = host.VersionProbe(sys.executable)


def test_a_kernel_is_described_with_its_busiest_gpu_and_its_wait_while_queued():
    agent = Agent()
    running = kernel("a", 2)
    agent.kernels["a"] = running
    agent.queue.lease_gpus(running)
    running.state = "running"
    agent.sampler.latest = {"GPU-0": (100, 20.0), "GPU-1": (100, 75.0), "GPU-2": (0, 99.0)}
    assert health.describe(running, agent.sampler, agent.queue)["gpuUtilization"] == 75.0
    assert "wait" not in health.describe(running, agent.sampler, agent.queue)
    waiting = kernel("b", 2)
    agent.kernels["b"] = waiting
    agent.queue.join(waiting)
    described = health.describe(waiting, agent.sampler, agent.queue)
    assert described["gpuUtilization"] is None and described["wait"]["free"] == 1


def test_the_health_reply_marks_held_and_reserved_gpus():
    agent = Agent()
    running = kernel("a", 2)
    agent.kernels["a"] = running
    agent.queue.lease_gpus(running)
    running.state = "running"
    waiting = kernel("b", 2)
    agent.kernels["b"] = waiting
    agent.queue.join(waiting)
    reply = health.health_message(agent, "h1")
    by_uuid = {g["gpu"]["uuid"]: g for g in reply["gpus"]}
    assert by_uuid["GPU-0"]["kernel"] == "a" and "since" in by_uuid["GPU-0"]
    assert by_uuid["GPU-2"]["reservedFor"] == "b" and by_uuid["GPU-2"]["kernel"] is None
    assert (reply["kernels"], reply["queued"], reply["links"]) == (1, 1, 0)
    assert [q["kernel"] for q in reply["queue"]] == ["b"]
    assert (reply["type"], reply["requestId"], reply["codeHash"]) == ("health", "h1", "c" * 16)
