"""Does what the lab does with a host agent, with real processes and PTYs: runs the
bootstrap as ``python -u -c <text>`` in a PTY, waits for the marker, sends a boot
payload built from this repository's package sources, reads the frames that carry
the link's nonce, and writes base64(JSON) request lines."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOOTSTRAP = open(os.path.join(KERNELS, "mgpulab_agent", "bootstrap.py"), encoding="utf-8").read()
MARKER = b"\x1b]mgl-boot;agent\x07"
PACKAGES = ("mgpulab_wire", "mgpulab_kernel", "mgpulab", "mgpulab_scenarios", "mgpulab_agent")


def package_sources():
    modules = {}
    for package in PACKAGES:
        for root, _, files in os.walk(os.path.join(KERNELS, package)):
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(root, name)
                    modules[os.path.relpath(path, KERNELS)] = open(path, encoding="utf-8").read()
    return modules


_SOURCES = package_sources()
_HASH = hashlib.sha256(json.dumps(_SOURCES, sort_keys=True).encode()).hexdigest()


def boot_payload(runtime_dir, agent_id="t", **changes):
    boot = {
        "nonce": secrets.token_hex(16), "protocol": 1, "agentId": agent_id, "codeHash": _HASH,
        "modules": _SOURCES, "leaseSeconds": 600, "bufferBytes": 64 * 1024 * 1024, "gpus": None,
        "whenFull": "queue", "interruptGraceMs": 5000, "python": None, "runtimeDir": runtime_dir,
    }
    boot.update(changes)
    return boot


def execute_line(cell_id, code):
    return base64.b64encode(json.dumps({"type": "execute", "id": cell_id, "code": code}).encode()).decode()


class AgentLink:
    """One bootstrap in a real PTY, as the lab runs it over ssh -tt; with ``sockets``, on a socket
    pair each way, as the lab runs the local host's (Node's child stdio)."""

    def __init__(self, boot, raw_line=None, sockets=False):
        self.boot = boot
        self.nonce = boot["nonce"]
        if sockets:
            to_child, child_in = socket.socketpair()
            from_child, child_out = socket.socketpair()
            self._ends = (to_child, from_child)
            self.master, self.reader = to_child.fileno(), from_child.fileno()
            self.proc = subprocess.Popen([sys.executable, "-u", "-c", BOOTSTRAP], stdin=child_in, stdout=child_out,
                                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
            child_in.close()
            child_out.close()
        else:
            self._ends = ()
            self.master, slave = os.openpty()
            self.reader = self.master
            self.proc = subprocess.Popen([sys.executable, "-u", "-c", BOOTSTRAP], stdin=slave, stdout=slave, stderr=slave,
                                         start_new_session=True, close_fds=True)
            os.close(slave)
        self.raw = b""
        self.messages = []
        self._taken = set()
        self._frame = re.compile(rb"\x1b\]mgl;" + re.escape(self.nonce.encode()) + rb";(.*?)\x07", re.S)
        self.wait_for_bytes(MARKER)
        line = raw_line if raw_line is not None else base64.b64encode(json.dumps(boot).encode())
        self._write(line + b"\n")

    def _write(self, data):
        view = memoryview(data)
        while view:
            view = view[os.write(self.master, view):]

    def _read(self, timeout):
        ready, _, _ = select.select([self.reader], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.reader, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            raise EOFError("the link closed")
        self.raw += chunk
        end = 0
        for match in self._frame.finditer(self.raw):
            self.messages.append(json.loads(match.group(1)))
            end = match.end()
        self.raw = self.raw[end:]
        return True

    def wait_for_bytes(self, needle, timeout=20):
        deadline = time.monotonic() + timeout
        while needle not in self.raw:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {needle!r} within {timeout} s; got {self.raw[-500:]!r}")
            self._read(deadline - time.monotonic())
        index = self.raw.index(needle) + len(needle)
        self.raw = self.raw[index:]

    def read_all_text(self, timeout=20):
        """Everything the link prints until it closes (the bootstrap's failure line)."""
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                self._read(deadline - time.monotonic())
        except EOFError:
            pass
        return self.raw.decode("utf-8", "replace")

    def send(self, request):
        self._write(base64.b64encode(json.dumps(request).encode()) + b"\n")

    def send_line(self, line):
        """A request line as given (bytes), for lines that are not base64 JSON."""
        self._write(line + b"\n")

    def next(self, predicate=lambda m: True, timeout=20, what="a message"):
        """The first message not yet returned that matches ``predicate`` (earlier non-matching ones stay)."""
        deadline = time.monotonic() + timeout
        while True:
            for index, message in enumerate(self.messages):
                if index not in self._taken and predicate(message):
                    self._taken.add(index)
                    return message
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {what} within {timeout} s; got {[m.get('type') for m in self.messages][-30:]}")
            self._read(min(0.5, max(0.0, deadline - time.monotonic())))

    def of_type(self, kind, timeout=20, **fields):
        return self.next(lambda m: m["type"] == kind and all(m.get(k) == v for k, v in fields.items()),
                         timeout=timeout, what=f"{kind} {fields}")

    def kernel_frames(self, kernel, timeout=20, until=None):
        """Sequenced kernel messages, in arrival order, until ``until(message)`` is true."""
        seen = []
        while True:
            message = self.next(lambda m: m.get("kernel") == kernel and "seq" in m, timeout=timeout, what=f"{kernel} output")
            seen.append(message)
            if until is None or until(message):
                return seen

    def kill(self):
        """The link drops: the relay dies, as when ssh does."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        for end in self._ends:
            end.close()
        if not self._ends:
            try:
                os.close(self.master)
            except OSError:
                pass


def frame_json(message):
    return json.loads(message["json"]) if message["type"] == "kernel_frame" else None


def stream_text(messages):
    """What the cells printed (stream frames) and the console, in order."""
    out = []
    for message in messages:
        frame = frame_json(message)
        if frame is not None and frame["type"] == "stream":
            out.append(frame["text"])
        elif message["type"] == "kernel_console":
            out.append(message["text"])
    return "".join(out)


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def wait_until(condition, timeout=15):
    """Polls a condition another process changes (no event to wait on); True once it holds, False at the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def wait_gone(pids, timeout=15):
    """The pids still alive at the deadline ([] once all are gone)."""
    wait_until(lambda: not any(pid_alive(pid) for pid in pids), timeout)
    return [pid for pid in pids if pid_alive(pid)]


class AgentSession:
    """A temp runtime dir, the links opened in it, and teardown that leaves no daemon behind."""

    def __init__(self):
        self.runtime_dir = tempfile.mkdtemp(prefix="mga-")
        self.links = []
        self.daemon_pids = set()

    def boot(self, **changes):
        return boot_payload(self.runtime_dir, **changes)

    def connect(self, boot=None, sockets=False, **changes):
        link = AgentLink(boot or self.boot(**changes), sockets=sockets)
        self.links.append(link)
        hello = link.of_type("agent_hello")
        self.daemon_pids.add(hello["pid"])
        return link, hello

    def close(self):
        for pid in list(self.daemon_pids):
            if pid_alive(pid):
                try:
                    link, _ = self.connect()
                    link.send({"type": "agent_shutdown"})
                    link.read_all_text(timeout=15)  # until the agent closes the link as it exits
                except (OSError, TimeoutError, EOFError) as exc:
                    print(f"teardown could not reach agent {pid}: {exc!r}")
        for link in self.links:
            link.kill()
        left = wait_gone(self.daemon_pids, timeout=15)
        for pid in left:
            os.kill(pid, signal.SIGUSR1)
        time.sleep(0.5 if left else 0)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        if left:
            log = os.path.join(self.runtime_dir, f"mgpulab-{os.getuid()}", "t", "agent.log")
            print(open(log, encoding="utf-8", errors="replace").read() if os.path.exists(log) else "no log")
        shutil.rmtree(self.runtime_dir, ignore_errors=True)
        assert left == [], f"agent daemon(s) {left} outlived the test"
