"""mgpulab_agent.agent_settings: what a running agent takes from new settings, what it keeps, and
the note it gives for each (test_agent_settings.py drives the same through a real agent)."""
import sys

import pytest

from agent_parts import gpus, holding, kernel, quiet_queue, waiting
from mgpulab_agent import agent_settings, host


class Agent:
    """An agent's configurable state, nothing more."""

    def __init__(self, settings):
        self.settings = settings
        self.lease_seconds = settings["leaseSeconds"]
        self.python = sys.executable
        self.probe = host.VersionProbe(self.python)
        self.kernels = {}
        self.queue = quiet_queue(settings["gpus"], self.kernels)
        self.samplers_started = 0

    def start_sampler(self):
        self.samplers_started += 1


SETTINGS = {"leaseSeconds": 600, "bufferBytes": 1 << 20, "gpus": gpus(2), "whenFull": "queue", "interruptGraceMs": 2000, "python": None}


@pytest.fixture
def agent():
    return Agent(dict(SETTINGS))


def test_the_same_settings_change_nothing_and_say_nothing(agent):
    assert agent_settings.adopt(agent, dict(SETTINGS)) == []


def test_lease_and_grace_apply_at_once(agent):
    notes = agent_settings.adopt(agent, {**SETTINGS, "leaseSeconds": 60, "interruptGraceMs": 500})
    assert [(n["setting"], n["applied"], n["message"]) for n in notes] == [
        ("leaseSeconds", True, "lease 60 s (was 600 s)"), ("interruptGraceMs", True, "interrupt grace 0.5 s (was 2 s)")]
    assert agent.lease_seconds == 60 and agent.settings["interruptGraceMs"] == 500


def test_buffer_and_python_are_for_kernels_started_from_now_on(agent):
    running = kernel("a")
    running.state = "running"
    agent.kernels["a"] = running
    notes = agent_settings.adopt(agent, {**SETTINGS, "bufferBytes": 4096, "python": "/usr/bin/python3"})
    assert [n["message"] for n in notes] == [
        "output buffer 4096 bytes for kernels started from now on; the 1 running kernel keeps theirs",
        "kernels started from now on run /usr/bin/python3; the 1 running kernel keeps theirs"]
    assert agent.python == "/usr/bin/python3" and agent.probe.python == "/usr/bin/python3"


def test_a_gpu_that_left_the_file_stays_with_its_holder(agent):
    holding(agent.queue, "a", 2)
    notes = agent_settings.adopt(agent, {**SETTINGS, "gpus": gpus(1)})
    assert [(n["applied"], n["message"]) for n in notes] == [
        (True, "1 GPU as the hosts file declares (was 2)"),
        (False, "GPU GPU-1 is no longer in the hosts file; kernel a holds it, so it stays until that kernel ends")]
    assert agent_settings.kept(agent.queue.slots) == ["GPU GPU-1 is no longer in the hosts file; kernel a holds it until it ends"]
    assert agent.samplers_started == 1


def test_refuse_when_full_refuses_the_queued_kernels_at_once(agent):
    holding(agent.queue, "a", 2)
    queued = waiting(agent.queue, "b", 1)
    notes = agent_settings.adopt(agent, {**SETTINGS, "whenFull": "refuse"})
    assert [n["message"] for n in notes] == ["when full: refuse (was queue)"]
    assert agent.queue.ids == [] and queued.state == "exited" and queued.refusal is not None


def test_a_first_line_with_settings_adopts_them_and_one_the_protocol_refuses_changes_nothing(agent):
    notes = agent_settings.adopt_first_line(agent, {"nonce": "n", "settings": {**SETTINGS, "leaseSeconds": 90}})
    assert [n["setting"] for n in notes] == ["leaseSeconds"] and agent.lease_seconds == 90
    assert agent_settings.adopt_first_line(agent, {"nonce": "n", "settings": {"leaseSeconds": "soon"}}) == []
    assert agent.settings["leaseSeconds"] == 90


def test_an_older_lab_sends_its_lease_alone_and_only_a_sane_one_is_taken(agent):
    assert agent_settings.adopt_first_line(agent, {"nonce": "n", "leaseSeconds": True}) == []
    assert agent_settings.adopt_first_line(agent, {"nonce": "n", "leaseSeconds": 8 * 24 * 3600}) == []
    assert agent_settings.adopt_first_line(agent, {"nonce": "n"}) == []
    [note] = agent_settings.adopt_first_line(agent, {"nonce": "n", "leaseSeconds": 30})
    assert note["message"] == "lease 30 s (was 600 s)" and agent.lease_seconds == 30
