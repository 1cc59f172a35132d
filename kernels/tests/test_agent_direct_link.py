"""A local link is direct: the bootstrap hands the lab's two sockets (its stdin and stdout, as Node
gives a child) to the agent, which then reads and writes them itself, with no process between the
lab and the agent. The bootstrap lives as long as the link, so its end still ends the link; and an
agent from before direct links (which drops passed sockets) is still relayed to."""
import array
import json
import os
import signal
import socket
import threading

import pytest

from agent_harness import (
    BOOTSTRAP,
    AgentLink,
    AgentSession,
    execute_line,
    frame_json,
    pid_alive,
    stream_text,
    wait_gone,
    wait_until,
)


@pytest.fixture
def agent():
    session = AgentSession()
    yield session
    session.close()


def _stdio(pid):
    return [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in (0, 1)]


def test_the_agent_takes_the_labs_sockets_and_the_bootstrap_only_waits(agent):
    link, hello = agent.connect(sockets=True)
    # The agent's hello comes straight over the passed sockets, so it can arrive before the bootstrap has read
    # the agent's DIRECT word and let go of its copies: wait for that, rather than race it.
    gave_away = wait_until(lambda: _stdio(link.proc.pid) == ["/dev/null", "/dev/null"], timeout=10)
    assert gave_away, f"the bootstrap gave both sockets away (its stdio: {_stdio(link.proc.pid)})"
    link.send({"type": "start_kernel", "requestId": "s", "kernel": "k1", "gpus": 0, "cwd": None, "env": {}})
    assert link.of_type("kernel_state", requestId="s")["kernel"]["state"] == "running"
    link.send({"type": "kernel_input", "kernel": "k1", "line": execute_line("c1", "print(6 * 7)")})
    frames = link.kernel_frames("k1", timeout=30, until=lambda m: (frame_json(m) or {}).get("type") == "execute_reply")
    assert stream_text(frames) == "42\n"

    # The link drops as an ssh link does: its local process killed. The agent ends the link; it lives on.
    os.killpg(link.proc.pid, signal.SIGKILL)
    link.proc.wait(10)
    with pytest.raises(EOFError):
        while True:
            link.next(lambda m: False, timeout=10, what="the end of the link")
    assert pid_alive(hello["pid"])
    again, hello_again = agent.connect(sockets=True)
    assert hello_again["pid"] == hello["pid"]
    assert [k["kernel"] for k in hello_again["kernels"]] == ["k1"]


def test_the_lab_closing_its_end_ends_the_bootstrap(agent):
    link, _ = agent.connect(sockets=True)
    link._ends[0].shutdown(socket.SHUT_WR)  # the lab closes the agent's input, as a closed link does
    assert wait_gone([link.proc.pid], timeout=10) == [], "the bootstrap exits once the agent dropped the link"


def test_an_agent_from_before_direct_links_is_relayed_to(agent):
    # A fake agent at the socket path that reads as older agents do (recv: passed sockets are dropped)
    # and answers on the connection it has: the bootstrap must relay both ways as before.
    boot = agent.boot(agentId="old")
    directory = os.path.join(agent.runtime_dir, f"mgpulab-{os.getuid()}", "old")
    os.makedirs(directory, mode=0o700)
    os.chmod(os.path.dirname(directory), 0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.path.join(directory, "agent.sock"))
    listener.listen(1)
    heard = []

    def old_agent():
        conn, _ = listener.accept()
        data = b""
        while b"\n" not in data:
            data += conn.recv(65536)
        hello = json.loads(data.split(b"\n", 1)[0])
        frame = json.dumps({"type": "agent_log", "level": "info", "message": "from an older agent"})
        conn.sendall(b"\x1b]mgl;" + hello["nonce"].encode() + b";" + frame.encode() + b"\x07")
        rest = data.split(b"\n", 1)[1]
        while b"\n" not in rest:
            rest += conn.recv(65536)
        heard.append(rest.split(b"\n", 1)[0])
        conn.close()

    thread = threading.Thread(target=old_agent, daemon=True)
    thread.start()
    link = AgentLink(boot, sockets=True)
    try:
        assert link.of_type("agent_log")["message"] == "from an older agent"
        assert _stdio(link.proc.pid) != ["/dev/null", "/dev/null"], "the bootstrap kept its sockets to relay"
        link.send_line(b"a request")
        thread.join(10)
        assert heard == [b"a request"]
    finally:
        link.kill()
        listener.close()


def test_the_bootstrap_and_the_agent_agree_on_the_word_that_makes_a_link_direct():
    # The bootstrap runs before any package is unpacked, so it keeps its own copy of the word.
    import ast
    import re

    from mgpulab_agent.links import DIRECT
    said = re.search(r"^DIRECT = (.+)$", BOOTSTRAP, re.M)
    assert said is not None and ast.literal_eval(said.group(1)) == DIRECT


def test_descriptors_that_are_not_sockets_close_that_link_and_nothing_else(agent):
    link, hello = agent.connect()
    path = os.path.join(agent.runtime_dir, f"mgpulab-{os.getuid()}", "t", "agent.sock")
    first = json.dumps({"nonce": "f" * 32, "codeHash": link.boot["codeHash"], "leaseSeconds": 600, "settings": {}}).encode() + b"\n"
    files = [os.open(os.devnull, os.O_RDONLY), os.open(os.devnull, os.O_WRONLY)]
    forged = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        forged.connect(path)
        forged.sendmsg([first], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", files).tobytes())])
        forged.settimeout(10)
        assert forged.recv(4096) == b"", "the agent closed the forged link without a word"
    finally:
        forged.close()
        for fd in files:
            os.close(fd)
    assert pid_alive(hello["pid"])
    link.send({"type": "health", "requestId": "h"})
    assert link.of_type("health", requestId="h")["links"] == 1, "the other link is untouched"
