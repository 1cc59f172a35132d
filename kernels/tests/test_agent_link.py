"""The host agent over a real PTY link: hello, a cell through kernel_input, resume after a
dropped link, ack and gaps, one daemon for concurrent bootstraps, bootstrap failures."""
import os
import signal
import stat
import threading

import pytest

from agent_harness import AgentLink, AgentSession, execute_line, frame_json, stream_text, wait_gone, wait_until


@pytest.fixture
def agent():
    session = AgentSession()
    yield session
    session.close()


def _frames_of(messages, kind):
    return [frame_json(m) for m in messages if frame_json(m) is not None and frame_json(m)["type"] == kind]


def _run_cell(link, kernel, cell_id, code, timeout=30):
    link.send({"type": "kernel_input", "kernel": kernel, "line": execute_line(cell_id, code)})
    return link.kernel_frames(kernel, timeout=timeout, until=lambda m: (frame_json(m) or {}).get("type") == "execute_reply"
                              and frame_json(m)["id"] == cell_id)


def _start(link, kernel="k1", gpus=0, request_id=None, **extra):
    link.send({"type": "start_kernel", "requestId": request_id or f"start-{kernel}", "kernel": kernel, "gpus": gpus,
               "cwd": None, "env": extra.get("env", {})})


def test_hello_then_a_cell_runs_with_increasing_seqs(agent):
    link, hello = agent.connect()
    assert hello["agentId"] == "t" and hello["kernels"] == [] and hello["protocol"] == 1
    assert hello["codeHash"] == link.boot["codeHash"]
    _start(link)
    state = link.of_type("kernel_state", requestId="start-k1")
    assert state["kernel"]["state"] == "running" and state["kernel"]["pid"] > 0
    messages = _run_cell(link, "k1", "c1", "print('hello from the agent')\n21 * 2")
    seqs = [m["seq"] for m in messages]
    assert seqs == list(range(1, len(seqs) + 1)), seqs
    assert "hello from the agent\n" in stream_text(messages)
    assert _frames_of(messages, "execute_result")[0]["data"]["text/plain"] == "42"
    assert _frames_of(messages, "hello"), "the kernel's own hello is relayed as a kernel_frame"
    reply = _frames_of(messages, "execute_reply")[0]
    assert reply["status"] == "ok"


def test_a_dropped_link_loses_nothing_on_resume(agent):
    link, _ = agent.connect()
    _start(link)
    link.of_type("kernel_state", requestId="start-k1")
    _run_cell(link, "k1", "warm", "import time")
    code = "for i in range(40):\n    print(f'line {i}', flush=True)\n    time.sleep(0.02)\n"
    link.send({"type": "kernel_input", "kernel": "k1", "line": execute_line("c2", code)})
    seen = link.kernel_frames("k1", until=lambda m: "line 3\n" in stream_text([m]))
    last_seq = seen[-1]["seq"]
    got = stream_text(seen)
    link.kill()  # the link drops while the cell prints
    link2, hello = agent.connect()
    assert [k["kernel"] for k in hello["kernels"]] == ["k1"]
    link2.send({"type": "resume", "kernel": "k1", "afterSeq": last_seq})
    rest = link2.kernel_frames("k1", until=lambda m: (frame_json(m) or {}).get("type") == "execute_reply")
    assert [m["seq"] for m in rest] == list(range(last_seq + 1, last_seq + 1 + len(rest)))
    printed = (got + stream_text(rest)).split("\n")
    lines = [line for line in printed if line.startswith("line ")]
    assert lines == [f"line {i}" for i in range(40)], "every line exactly once, in order"


def test_a_resume_that_asks_is_answered_even_for_a_kernel_started_after_the_link_opened(agent):
    # Two lab servers share the agent: the second's link opened before the first started k1, so its hello
    # lists nothing; when it takes k1 over it asks, and hears k1's state before k1's buffered output.
    taker, hello = agent.connect()
    assert hello["kernels"] == []
    starter, _ = agent.connect()
    _start(starter)
    starter.of_type("kernel_state", requestId="start-k1")
    _run_cell(starter, "k1", "c1", "print('before the takeover')")
    taker.send({"type": "describe_kernel", "requestId": "describe-k1", "kernel": "k1"})
    described = taker.of_type("kernel_state", requestId="describe-k1")
    assert described["kernel"]["kernel"] == "k1" and described["kernel"]["state"] == "running"
    taker.send({"type": "describe_kernel", "requestId": "describe-k9", "kernel": "k9"})
    assert "no kernel k9" in taker.of_type("request_failed", requestId="describe-k9")["message"]
    _run_cell(starter, "k1", "c2", "print('still streamed to its starter')")  # describing takes no stream away
    taker.send({"type": "resume", "requestId": "resume-k1", "kernel": "k1", "afterSeq": 0})
    state = taker.of_type("kernel_state", requestId="resume-k1")
    assert state["kernel"]["kernel"] == "k1" and state["kernel"]["state"] == "running"
    replayed = taker.kernel_frames("k1", until=lambda m: (frame_json(m) or {}).get("type") == "execute_reply")
    assert replayed[0]["seq"] == 1 and "before the takeover\n" in stream_text(replayed)
    taker.send({"type": "resume", "requestId": "resume-k9", "kernel": "k9", "afterSeq": 0})
    failed = taker.of_type("request_failed", requestId="resume-k9")
    assert "no kernel k9" in failed["message"]


def test_ack_trims_and_a_tiny_buffer_reports_the_gap(agent):
    link, _ = agent.connect(bufferBytes=2000)
    _start(link)
    link.of_type("kernel_state", requestId="start-k1")
    _run_cell(link, "k1", "c1", "for i in range(200):\n    print('x' * 50, flush=True)\n")
    last = link.kernel_frames("k1", until=lambda m: (frame_json(m) or {}).get("state") == "idle")[-1]["seq"]
    # the lab stored everything up to `last` but acknowledged only up to 2: resuming from 0 shows a gap
    link.send({"type": "ack", "kernel": "k1", "seq": 2})
    link.send({"type": "resume", "kernel": "k1", "afterSeq": 2})
    gap = link.of_type("kernel_gap", afterSeq=2)
    assert gap["afterSeq"] == 2 and gap["resumedFrom"] > 3 and gap["droppedMessages"] > 0 and gap["droppedBytes"] > 0
    replayed = link.kernel_frames("k1", until=lambda m: m["seq"] == last)
    assert replayed[0]["seq"] == gap["resumedFrom"]
    # everything acknowledged: nothing is replayed, the buffer is empty
    link.send({"type": "ack", "kernel": "k1", "seq": last})
    link.send({"type": "health", "requestId": "h"})
    link.of_type("health")
    link2, hello = agent.connect()
    described = hello["kernels"][0]
    assert described["firstSeq"] == last + 1 and described["lastSeq"] == last


def test_two_concurrent_bootstraps_share_one_daemon(agent):
    boots = [agent.boot(), agent.boot()]
    links = [None, None]

    def open_link(i):
        links[i] = AgentLink(boots[i])
    threads = [threading.Thread(target=open_link, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    agent.links.extend(link for link in links if link is not None)
    hellos = [link.of_type("agent_hello") for link in links]
    agent.daemon_pids.update(h["pid"] for h in hellos)
    assert hellos[0]["pid"] == hellos[1]["pid"]
    # a state goes to every link
    _start(links[0])
    assert links[1].of_type("kernel_state")["kernel"]["kernel"] == "k1"


def test_a_bad_boot_payload_is_refused_with_a_clear_line():
    link = AgentLink({"nonce": "0" * 32}, raw_line=b"this is not base64!")
    text = link.read_all_text()
    assert "mgpulab agent: bad boot payload: not base64 JSON" in text
    assert link.proc.wait(10) == 2
    link.kill()


def test_a_runtime_dir_others_can_read_is_refused(agent):
    top = os.path.join(agent.runtime_dir, f"mgpulab-{os.getuid()}")
    os.mkdir(top, 0o700)
    os.chmod(top, 0o755)
    link = AgentLink(agent.boot())
    text = link.read_all_text()
    assert f"mgpulab agent: runtime directory {top} is not private" in text and "mode 755" in text
    assert link.proc.wait(10) == 2
    assert stat.S_IMODE(os.stat(top).st_mode) == 0o755 and os.listdir(top) == [], "nothing was created in it"
    link.kill()


def test_a_socket_path_too_long_is_refused_with_a_clear_error(agent):
    deep = os.path.join(agent.runtime_dir, "d" * 100)
    os.mkdir(deep)
    link = AgentLink(agent.boot(runtimeDir=deep))
    text = link.read_all_text()
    assert "a Unix socket path may have at most 107" in text
    assert link.proc.wait(10) == 2
    link.kill()


def _connected_sockets(pid):
    """Inodes of the Unix sockets `pid` holds past its stdio that are connected (state 03 in /proc/net/unix)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        if int(fd) <= 2:
            continue
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    with open("/proc/net/unix", encoding="ascii") as table:
        rows = [line.split() for line in table.read().splitlines()[1:]]
    return [row[6] for row in rows if len(row) > 6 and row[6] in inodes and row[5] == "03"]


@pytest.mark.parametrize("sockets", [False, True], ids=["pty relay", "direct sockets"])
def test_a_link_that_arrives_as_the_agent_ends_is_served_by_a_fresh_agent(agent, sockets):
    # The agent's lease (or a SIGTERM) ends it while a bootstrap's connection waits in its socket's queue:
    # connected, never accepted, so reset when the agent closes its socket. That link must not fail (the
    # lab would report a kernel that could not start): the bootstrap tries again, and starts a fresh agent.
    first, hello = agent.connect(sockets=sockets)
    old = hello["pid"]
    first.kill()
    os.kill(old, signal.SIGSTOP)
    try:
        late = AgentLink(agent.boot(), sockets=sockets)
        agent.links.append(late)
        # Stopped, the agent cannot accept: the bootstrap's connect waits in the queue (and it then waits for a word).
        assert wait_until(lambda: len(_connected_sockets(late.proc.pid)) == 1, timeout=20), "the late bootstrap connected"
        os.kill(old, signal.SIGTERM)
    finally:
        os.kill(old, signal.SIGCONT)
    hello_again = late.of_type("agent_hello", timeout=30)
    agent.daemon_pids.add(hello_again["pid"])
    assert hello_again["pid"] != old, "a fresh agent answers"
    assert wait_gone([old]) == [], "the old agent ended"
    late.send({"type": "start_kernel", "requestId": "s", "kernel": "k1", "gpus": 0, "cwd": None, "env": {}})
    assert late.of_type("kernel_state", requestId="s")["kernel"]["state"] == "running"
