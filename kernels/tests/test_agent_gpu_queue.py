"""mgpulab_agent.gpu_queue: first come first served, the free GPUs reserved for the head, each
waiting kernel told its place and wait when either changes, and orphans let go."""
import pytest

from agent_parts import Clock, gpus, holding, waiting
from mgpulab_agent.gpu_queue import GpuQueue, plural
from mgpulab_agent.slots import GpuSlots
from mgpulab_agent.timers import Timers


class Host:
    """The daemon's side: records what the queue asks of it; starting "fails" for ids in ``broken``."""

    def __init__(self):
        self.announced = []
        self.started = []
        self.broken = set()

    def announce(self, kernel, requester=None, request_id=None):
        self.announced.append((kernel.kernel_id, kernel.state, kernel.position, request_id))

    def pump(self, kernel):
        pass

    def start(self, kernel):
        if kernel.kernel_id in self.broken:
            return f"could not start kernel {kernel.kernel_id}: broken"
        kernel.state = "running"
        self.started.append((kernel.kernel_id, list(kernel.gpus)))
        return None


@pytest.fixture
def world():
    clock = Clock()
    host = Host()
    kernels = {}
    queue = GpuQueue(GpuSlots(gpus(2), "declared"), kernels, Timers(clock), host)
    return queue, kernels, host, clock


def test_a_request_waits_when_too_few_are_free_or_others_wait_before_it(world):
    queue, kernels, _, _ = world
    assert not queue.must_wait(2) and not queue.must_wait(0)
    assert queue.must_wait(3)
    holding(queue, "a", 1)
    assert queue.must_wait(2) and not queue.must_wait(1)
    waiting(queue, "b", 2)
    assert queue.must_wait(1), "the free GPU is reserved for the head"
    assert not queue.must_wait(0)


def test_the_head_starts_when_its_gpus_are_free_and_the_rest_move_up(world):
    queue, kernels, host, _ = world
    a = holding(queue, "a", 2)
    waiting(queue, "b", 1)
    c = waiting(queue, "c", 2)
    a.state = "exited"
    queue.release(a)
    queue.advance()
    assert host.started == [("b", ["GPU-0"])]
    assert queue.ids == ["c"] and c.position == 1
    assert ("c", "queued", 1, None) in host.announced


def test_a_head_that_fails_to_start_leaves_the_queue_with_the_error(world):
    queue, kernels, host, _ = world
    host.broken.add("b")
    b = waiting(queue, "b", 1)
    queue.advance()
    assert b.state == "exited" and "broken" in b.exit["reason"] and queue.ids == []


def test_the_wait_names_holders_and_those_ahead_and_the_refusal_says_why(world):
    queue, kernels, _, _ = world
    holding(queue, "a", 2)
    waiting(queue, "b", 1)
    c = waiting(queue, "c", 2)
    wait = queue.wait(c)
    assert (wait["asked"], wait["free"], wait["total"]) == (2, 0, 2)
    assert [h["kernel"] for h in wait["holders"]] == ["a"] and [h["kernel"] for h in wait["ahead"]] == ["b"]
    assert queue.refusal_text(3) == "the kernel asks for 3 GPUs; this host has 2"
    assert queue.refusal_text(1) == "no GPU free: it asks for 1, 0 of 2 are free; 2 kernel(s) wait before it (held: GPU-0 by a, GPU-1 by a)"
    assert queue.described() == [{"kernel": "b", "gpus": 1, "since": kernels["b"].queued_at},
                                 {"kernel": "c", "gpus": 2, "since": c.queued_at}]


def test_leaving_renumbers_those_behind_and_refuse_all_empties_the_queue_with_refusals(world):
    queue, kernels, host, _ = world
    holding(queue, "a", 2)
    b = waiting(queue, "b", 1)
    c = waiting(queue, "c", 1)
    queue.leave(b, "removed from the GPU queue", None, "r1")
    assert ("b", "exited", None, "r1") in host.announced and c.position == 1
    queue.refuse_all()
    assert queue.ids == [] and c.state == "exited" and c.refusal is not None and "no GPU free" in c.exit["reason"]


def test_a_closed_queue_lets_everyone_go_and_starts_nobody(world):
    queue, kernels, host, _ = world
    b = waiting(queue, "b", 1)
    queue.close("lease expired")
    queue.advance()
    assert b.exit["reason"] == "removed from the GPU queue: lease expired" and host.started == []


def test_an_orphaned_queued_kernel_leaves_after_the_wait_unless_a_link_took_it(world, monkeypatch):
    monkeypatch.setenv("MGPULAB_AGENT_ORPHAN_SECONDS", "5")
    queue, kernels, _, clock = world
    holding(queue, "a", 2)
    kept = waiting(queue, "kept", 1)
    orphan = waiting(queue, "orphan", 1)
    queue.forget_if_orphaned(kept)
    queue.forget_if_orphaned(orphan)
    kept.link = object()  # a link resumed it meanwhile
    clock.now += 5
    queue.timers.run_due()
    assert queue.ids == ["kept"] and "went away" in orphan.exit["reason"]


def test_plural():
    assert (plural(1, "GPU"), plural(0, "GPU"), plural(3, "GPU")) == ("1 GPU", "0 GPUs", "3 GPUs")
