"""A running agent and a changed hosts file: a new link (or `configure`) brings the file's
settings, and the agent takes them where it safely can — the queue policy, the interrupt
grace, the GPU list (a GPU a kernel holds stays until it ends) — and says what it kept.
Scheduling that can be read: who holds GPUs since when, who waits before whom, and which
free GPU is reserved for the first in the queue. An agent that ends leaves only its log."""
import os
import subprocess
import sys

import pytest

from agent_harness import KERNELS, AgentSession, execute_line, frame_json, stream_text, wait_gone


@pytest.fixture
def agent():
    session = AgentSession()
    yield session
    session.close()


GPUS = [{"index": 0, "uuid": "GPU-fake-0", "name": "Fake GPU", "memoryTotalMiB": 1024},
        {"index": 1, "uuid": "GPU-fake-1", "name": "Fake GPU", "memoryTotalMiB": 1024}]


def _start(link, kernel, gpus=0):
    link.send({"type": "start_kernel", "requestId": f"start-{kernel}", "kernel": kernel, "gpus": gpus, "cwd": None, "env": {}})
    return link.next(lambda m: m.get("requestId") == f"start-{kernel}", what=f"the answer to start {kernel}")


def _health(link, request_id):
    link.send({"type": "health", "requestId": request_id})
    return link.of_type("health", requestId=request_id)


def _cell_output(link, kernel, cell_id, code):
    link.send({"type": "kernel_input", "kernel": kernel, "line": execute_line(cell_id, code)})
    messages = link.kernel_frames(kernel, until=lambda m: (frame_json(m) or {}).get("type") == "execute_reply")
    return stream_text(messages)


def test_a_new_link_brings_the_files_queue_policy_and_gpu_list(agent):
    first, hello = agent.connect(gpus=GPUS, whenFull="queue")
    assert hello["settings"]["whenFull"] == "queue" and hello["notes"] == []
    assert _start(first, "ka", gpus=1)["kernel"]["gpus"] == ["GPU-fake-0"]
    assert _start(first, "kb", gpus=2)["kernel"]["state"] == "queued"
    first.kill()
    # The lab restarts with a file that refuses when full and lists only GPU 1.
    second, hello = agent.connect(gpus=GPUS[1:], whenFull="refuse", interruptGraceMs=1000)
    notes = {(note["setting"], note["applied"]): note["message"] for note in hello["notes"]}
    assert notes[("whenFull", True)] == "when full: refuse (was queue)"
    assert notes[("interruptGraceMs", True)] == "interrupt grace 1 s (was 5 s)"
    assert "1 GPU as the hosts file declares (was 2)" in notes[("gpus", True)]
    assert "GPU GPU-fake-0 is no longer in the hosts file; kernel ka holds it" in notes[("gpus", False)]
    assert hello["settings"]["whenFull"] == "refuse" and hello["settings"]["gpus"] == GPUS[1:]
    # The kernel that waited is refused now, with who holds what.
    kb = {k["kernel"]: k for k in hello["kernels"]}["kb"]
    assert kb["state"] == "exited" and kb["refusal"]["asked"] == 2 and kb["refusal"]["total"] == 1
    assert kb["refusal"]["holders"] == [{"kernel": "ka", "gpus": 1, "since": kb["refusal"]["holders"][0]["since"]}]
    health = _health(second, "h1")
    assert [(g["gpu"]["uuid"], g["kernel"], g.get("retiring", False)) for g in health["gpus"]] == [
        ("GPU-fake-1", None, False), ("GPU-fake-0", "ka", True)]
    assert health["kept"] == ["GPU GPU-fake-0 is no longer in the hosts file; kernel ka holds it until it ends"]
    # The retiring GPU is offered to nobody: one more kernel gets GPU 1, the next is refused.
    assert _start(second, "kc", gpus=1)["kernel"]["gpus"] == ["GPU-fake-1"]
    refused = _start(second, "kd", gpus=1)
    assert refused["type"] == "request_failed" and refused["refusal"]["free"] == 0 and refused["refusal"]["total"] == 1
    assert sorted(holder["kernel"] for holder in refused["refusal"]["holders"]) == ["ka", "kc"]
    # Once its holder ends, the GPU that left the file is gone.
    second.send({"type": "stop_kernel", "requestId": "stop-a", "kernel": "ka", "graceMs": 1000})
    second.next(lambda m: m["type"] == "kernel_state" and m["kernel"]["kernel"] == "ka" and m["kernel"]["state"] == "exited")
    health = _health(second, "h2")
    assert [g["gpu"]["uuid"] for g in health["gpus"]] == ["GPU-fake-1"] and health["kept"] == []


def test_configure_applies_a_reloaded_file_without_a_new_link(agent):
    link, _ = agent.connect(gpus=GPUS[:1])
    assert _start(link, "ka", gpus=1)["kernel"]["state"] == "running"
    assert _start(link, "kb", gpus=1)["kernel"]["state"] == "queued"
    settings = {"leaseSeconds": 600, "bufferBytes": 64 * 1024 * 1024, "gpus": GPUS, "whenFull": "queue", "interruptGraceMs": 5000, "python": None}
    link.send({"type": "configure", "requestId": "c1", "settings": settings})
    answer = link.of_type("configured", requestId="c1")
    assert answer["settings"]["gpus"] == GPUS
    assert [(n["setting"], n["applied"]) for n in answer["notes"]] == [("gpus", True)]
    # The GPU the reload added goes to the kernel that waited.
    started = link.next(lambda m: m["type"] == "kernel_state" and m["kernel"]["kernel"] == "kb" and m["kernel"]["state"] == "running")
    assert started["kernel"]["gpus"] == ["GPU-fake-1"]


def test_a_queued_kernel_asking_more_than_a_shrunk_host_has_is_refused(agent):
    link, _ = agent.connect(gpus=GPUS)
    _start(link, "ka", gpus=1)
    assert _start(link, "kb", gpus=2)["kernel"]["state"] == "queued"
    settings = {"leaseSeconds": 600, "bufferBytes": 64 * 1024 * 1024, "gpus": GPUS[:1], "whenFull": "queue", "interruptGraceMs": 5000, "python": None}
    link.send({"type": "configure", "requestId": "c1", "settings": settings})
    link.of_type("configured", requestId="c1")
    exit_message = link.of_type("kernel_exit", kernel="kb")
    assert "asks for 2 GPUs; this host has 1" in exit_message["exit"]["reason"]


def test_the_queue_is_first_come_first_served_and_says_what_is_reserved(agent):
    link, _ = agent.connect(gpus=GPUS)
    assert _start(link, "ka", gpus=1)["kernel"]["gpus"] == ["GPU-fake-0"]
    kb = _start(link, "kb", gpus=2)["kernel"]
    assert kb["state"] == "queued" and kb["position"] == 1
    assert (kb["wait"]["asked"], kb["wait"]["free"], kb["wait"]["total"], kb["wait"]["ahead"]) == (2, 1, 2, [])
    assert [(h["kernel"], h["gpus"]) for h in kb["wait"]["holders"]] == [("ka", 1)]
    # A 1-GPU kernel would fit in the free GPU, but it would take it from the first in the queue.
    kc = _start(link, "kc", gpus=1)["kernel"]
    assert kc["state"] == "queued" and kc["position"] == 2
    assert [(a["kernel"], a["gpus"]) for a in kc["wait"]["ahead"]] == [("kb", 2)]
    health = _health(link, "h1")
    assert [(g["kernel"], g.get("reservedFor")) for g in health["gpus"]] == [("ka", None), (None, "kb")]
    assert [(q["kernel"], q["gpus"]) for q in health["queue"]] == [("kb", 2), ("kc", 1)]
    assert all(q["since"] is not None for q in health["queue"]) and health["gpus"][0]["since"] > 0
    link.send({"type": "stop_kernel", "requestId": "stop-a", "kernel": "ka", "graceMs": 1000})
    started = link.next(lambda m: m["type"] == "kernel_state" and m["kernel"]["kernel"] == "kb" and m["kernel"]["state"] == "running")
    assert started["kernel"]["gpus"] == ["GPU-fake-0", "GPU-fake-1"]
    # The one still waiting is told its new place and whom it waits for now.
    moved = link.next(lambda m: m["type"] == "kernel_state" and m["kernel"]["kernel"] == "kc" and m["kernel"]["position"] == 1)
    assert [(h["kernel"], h["gpus"]) for h in moved["kernel"]["wait"]["holders"]] == [("kb", 2)]


def test_a_kernel_asking_no_gpu_sees_none_even_where_the_agent_sees_one(agent, monkeypatch):
    # A Slurm job's agent inherits the job's CUDA_VISIBLE_DEVICES; a kernel that asked for none must not.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    link, _ = agent.connect(gpus=None)
    assert _start(link, "kz", gpus=0)["kernel"]["state"] == "running"
    link.send({"type": "resume", "kernel": "kz", "afterSeq": 0})
    assert "CVD=[]" in _cell_output(link, "kz", "c1", "import os\nprint('CVD=[' + os.environ.get('CUDA_VISIBLE_DEVICES', 'unset') + ']')")


def test_an_agent_whose_lease_ends_leaves_only_its_bounded_log(agent):
    link, hello = agent.connect(leaseSeconds=2)
    assert _start(link, "k1")["kernel"]["state"] == "running"
    directory = os.path.join(agent.runtime_dir, f"mgpulab-{os.getuid()}", "t")
    assert any(name.startswith("code-") for name in os.listdir(directory))
    link.kill()
    assert wait_gone([hello["pid"]], timeout=20) == []
    assert sorted(os.listdir(directory)) == ["agent.log"]
    # A new link starts a new agent there as before.
    again, hello2 = agent.connect()
    assert hello2["pid"] != hello["pid"] and _start(again, "k2")["kernel"]["state"] == "running"


def test_the_log_is_rotated_past_its_bound(tmp_path):
    log = tmp_path / "agent.log"
    code = ("import os, sys\n"
            f"sys.path.insert(0, {KERNELS!r})\n"
            "from mgpulab_agent import runtime_dir\n"
            f"fd = os.open({str(log)!r}, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)\n"
            "os.dup2(fd, 1); os.dup2(fd, 2)\n"
            f"runtime_dir.use_log({str(log)!r})\n"
            "for i in range(3 * runtime_dir.LOG_LIMIT_BYTES // 1000):\n"
            "    runtime_dir.rotate_log()\n"
            "    os.write(2, b'x' * 999 + b'\\n')\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    limit = 512 * 1024
    assert sorted(os.listdir(tmp_path)) == ["agent.log", "agent.log.1"]
    assert os.path.getsize(log) <= limit + 1000 and os.path.getsize(str(log) + ".1") <= limit + 1000


def test_a_queued_kernel_whose_lab_went_away_leaves_the_queue(agent, monkeypatch):
    # A lab server stopped while its kernel waited; the next one does not know that kernel.
    monkeypatch.setenv("MGPULAB_AGENT_ORPHAN_SECONDS", "1")
    first, _ = agent.connect(gpus=GPUS[:1])
    _start(first, "ka", gpus=1)
    assert _start(first, "kb", gpus=1)["kernel"]["state"] == "queued"
    assert _start(first, "kc", gpus=1)["kernel"]["state"] == "queued"
    second, _ = agent.connect(gpus=GPUS[:1])  # the same hosts file
    second.send({"type": "resume", "kernel": "kc", "afterSeq": 0})  # the new server knows kc (a link that dropped and came back)
    first.kill()
    gone = second.next(lambda m: m["type"] == "kernel_state" and m["kernel"]["kernel"] == "kb" and m["kernel"]["state"] == "exited", timeout=20)
    assert gone["kernel"]["exit"]["reason"] == "removed from the GPU queue: the lab server that asked for it went away"
    kept = second.next(lambda m: m["type"] == "kernel_state" and m["kernel"]["kernel"] == "kc" and m["kernel"]["position"] == 1)
    assert kept["kernel"]["state"] == "queued", "a resumed kernel keeps its place"
