"""One kernel the agent owns: its process in its own PTY, its decoded output as a
sequenced buffer, its GPU lease, and what the lab last asked of it."""
from __future__ import annotations

import base64
import fcntl
import json
import os
import secrets
import signal
import subprocess
import termios
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Literal, Mapping, Optional

from mgpulab_wire import agent_protocol_generated as wire
from mgpulab_wire import tty

from . import proctree
from .decoder import BadFrame, Console, Frame, FrameDecoder, Piece
from .outbuf import SeqBuffer

# The kernel takes its nonce from the environment (popped, so cells and ranks never see it) and
# leaves its code directory alone (no bundle_root): the agent's code outlives any one kernel.
_KERNEL_SNIPPET = ("import os\n"
                   "from mgpulab_kernel import kernel\n"
                   "kernel.main({\"nonce\": os.environ.pop(\"MGPULAB_KERNEL_NONCE\")})\n")

State = Literal["queued", "running", "exited"]
InterruptStep = Literal["sigint", "sigterm", "sigkill"]


def _controlling_tty() -> None:
    # In the child, after setsid: the PTY on stdin becomes its controlling terminal, so 0x03
    # written to the master is SIGINT to the kernel's foreground process group (kernel, ranks).
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


KERNEL_NICE = 19
"""How far kernels yield the CPU to the lab's own processes (agent, lab server) when they compete."""


def yield_cpu() -> None:
    """Lower the calling process (and its session's autogroup) to the kernels' share of the CPU."""
    # Each kernel leads its own session (its PTY), and with Linux's autogroup scheduling every
    # session is a scheduling group with the same share as the whole lab server: 60 workshop
    # kernels importing torch left the server and this agent 2/62 of two cores (a trivial cell's
    # p99 ~30 s; with the kernels' groups at nice 19, 2.3 s). Nice on the processes alone does not
    # cross groups, so the group's nice is set too (and the plain nice covers a kernel without
    # autogroups). An idle machine still gives kernels every cycle; GPU work is not slowed.
    try:
        with open("/proc/self/autogroup", "w") as autogroup:
            autogroup.write(str(KERNEL_NICE))
    except OSError:
        pass  # not Linux, or autogroups off: the nice below is what counts then
    try:
        os.nice(KERNEL_NICE - os.nice(0))
    except OSError:
        pass


def _kernel_child() -> None:
    _controlling_tty()
    yield_cpu()


@dataclass
class Interrupt:
    request_id: str
    link: Any
    started: float
    step: InterruptStep = "sigint"


@dataclass
class KernelProc:
    kernel_id: str
    gpus_requested: int
    cwd: Optional[str]
    env: Dict[str, str]
    buffer: SeqBuffer
    state: State = "queued"
    position: Optional[int] = None
    gpus: List[str] = field(default_factory=list)
    pid: Optional[int] = None
    popen: Optional["subprocess.Popen[bytes]"] = None
    master: Optional[int] = None
    decoder: Optional[FrameDecoder] = None
    started_at: Optional[float] = None
    exit: Optional[wire.KernelExit] = None
    # The link its stream goes to (the last that sent resume for it, or started it), and how far
    # that link has been sent.
    link: Any = None
    cursor: int = 0
    inbox: bytearray = field(default_factory=bytearray)
    outstanding: int = 0
    """Execute requests sent to the kernel and not yet answered with execute_reply: busy while > 0."""
    interrupt: Optional[Interrupt] = None
    ending: Optional[str] = None
    """Why the agent is ending it (stop, lease, shutdown, interrupt escalation), for kernel_exit's reason."""
    known: proctree.Known = field(default_factory=set)
    tag: Optional[bytes] = None
    """MGPULAB_AGENT_KERNEL=<kernel>:<random> in its environment: marks every process it starts."""
    queued_at: Optional[float] = None
    """Epoch ms it joined the GPU queue."""
    refusal: Optional[wire.GpuWait] = None
    """Why it left the queue refused (the host's settings changed while it waited)."""

    # --- start --------------------------------------------------------------

    def spawn(self, python: str, code_dir: str, cuda_visible: str) -> None:
        nonce = secrets.token_hex(16)
        env = dict(os.environ)
        env.update(self.env)
        env["PYTHONPATH"] = code_dir + (os.pathsep + self.env["PYTHONPATH"] if self.env.get("PYTHONPATH") else "")
        marker = f"{self.kernel_id}:{secrets.token_hex(8)}"
        self.tag = f"MGPULAB_AGENT_KERNEL={marker}".encode()
        env.update(PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8", TERM="xterm-256color", MGPULAB_KERNEL_NONCE=nonce,
                   MGPULAB_AGENT_KERNEL=marker)
        # Always set, also empty: a kernel sees only the GPUs it leased, never those of the agent's
        # own environment (a Slurm job's, an operator's), whatever the agent found on the host.
        env["CUDA_VISIBLE_DEVICES"] = cuda_visible
        master, slave = os.openpty()
        try:
            tty.set_kernel_tty(slave)
            self.popen = subprocess.Popen(
                [python, "-u", "-c", _KERNEL_SNIPPET], stdin=slave, stdout=slave, stderr=slave,
                cwd=self.cwd or os.path.expanduser("~"), env=env, start_new_session=True,
                preexec_fn=_kernel_child, close_fds=True)
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        self.master = master
        self.pid = self.popen.pid
        self.decoder = FrameDecoder(nonce)
        self.state = "running"
        self.position = None
        self.started_at = time.time() * 1000

    # --- output -------------------------------------------------------------

    def take(self, pieces: List[Piece]) -> None:
        """Number and keep what the kernel wrote."""
        for piece in pieces:
            if isinstance(piece, Console):
                self.buffer.append(dict(wire.kernel_console_message(kernel=self.kernel_id, seq=0, text=piece.text)))
            elif isinstance(piece, Frame):
                kind = self._frame_type(piece.json)
                if kind is None:
                    self.buffer.append(dict(wire.kernel_bad_frame_message(kernel=self.kernel_id, seq=0, reason="frame is not a JSON object with a type")))
                    continue
                if kind == "execute_reply":
                    self.outstanding = max(0, self.outstanding - 1)
                self.buffer.append(dict(wire.kernel_frame_message(kernel=self.kernel_id, seq=0, json=piece.json)))
            elif isinstance(piece, BadFrame):
                self.buffer.append(dict(wire.kernel_bad_frame_message(kernel=self.kernel_id, seq=0, reason=piece.reason[:4000])))

    @staticmethod
    def _frame_type(text: str) -> Optional[str]:
        try:
            value = json.loads(text)
        except ValueError:
            return None
        kind = value.get("type") if isinstance(value, dict) else None
        return kind if isinstance(kind, str) else None

    def read_pty(self) -> Optional[int]:
        """Read one chunk: how many bytes were read, None when nothing is there now,
        0 when the PTY closed (no process holds its slave any more)."""
        assert self.master is not None and self.decoder is not None
        try:
            chunk = os.read(self.master, 1 << 16)
        except BlockingIOError:
            return None
        except OSError:
            return 0  # EIO
        if chunk:
            self.take(self.decoder.push(chunk))
        return len(chunk)

    # --- input --------------------------------------------------------------

    def queue_input(self, line: str) -> None:
        try:
            request = json.loads(base64.b64decode(line, validate=True))
            if isinstance(request, Mapping) and request.get("type") == "execute":
                self.outstanding += 1
        except ValueError:
            pass  # not ours to judge: the kernel reports a malformed request itself
        self.inbox += line.encode("ascii") + b"\n"

    def write_pty(self, data: bytes) -> None:
        """Bytes for the tty itself (0x03, 0x1c), ahead of queued request lines."""
        self.inbox[0:0] = data

    def flush_input(self) -> None:
        if self.master is None:
            self.inbox.clear()
            return
        while self.inbox:
            try:
                written = os.write(self.master, self.inbox[:1 << 16])
            except BlockingIOError:
                return
            except OSError:
                self.inbox.clear()
                return
            del self.inbox[:written]

    # --- ending -------------------------------------------------------------

    def signal_tree(self, signum: int) -> int:
        return proctree.signal_tree(self.pid, self.known, signum, self.tag) if self.pid is not None else 0

    def finish(self, status: int) -> wire.KernelExit:
        """The process was reaped: drain the PTY, end what is left of its tree, number kernel_exit."""
        while self.master is not None and self.read_pty():
            pass
        # Whatever of its tree is left (ranks, a grandchild in its own session) ends with it.
        self.signal_tree(signal.SIGKILL)
        if self.decoder is not None:
            self.take(self.decoder.end())
        if self.master is not None:
            os.close(self.master)
            self.master = None
        self.inbox.clear()
        self.exit = describe_exit(status, self.ending)
        self.buffer.append(dict(wire.kernel_exit_message(kernel=self.kernel_id, seq=0, exit=self.exit)))
        self.state = "exited"
        if self.popen is not None:
            self.popen.returncode = os.waitstatus_to_exitcode(status)  # reaped by the agent, not by Popen
        return self.exit

    def leave_queue(self, why: str, refusal: Optional[wire.GpuWait] = None) -> None:
        self.refusal = refusal
        self.exit = {"code": None, "signal": None, "reason": why[:4000]}
        self.buffer.append(dict(wire.kernel_exit_message(kernel=self.kernel_id, seq=0, exit=self.exit)))
        self.state = "exited"
        self.position = None

    def describe(self, utilization: Optional[float], wait: Optional[wire.GpuWait] = None) -> wire.AgentKernel:
        described: wire.AgentKernel = {
            "kernel": self.kernel_id, "state": self.state, "pid": self.pid, "position": self.position,
            "gpus": list(self.gpus), "gpusRequested": self.gpus_requested,
            "firstSeq": self.buffer.first_seq, "lastSeq": self.buffer.last_seq,
            "startedAt": self.started_at, "gpuUtilization": utilization, "exit": self.exit,
        }
        if wait is not None:
            described["wait"] = wait
        if self.refusal is not None:
            described["refusal"] = self.refusal
        return described


def remember_trees(kernels: Iterable[KernelProc]) -> None:
    """The agent's walk (each second): every running kernel's tree, from one read of /proc for them all."""
    running = [(kernel, kernel.pid) for kernel in kernels if kernel.pid is not None and kernel.state == "running"]
    if running:
        snapshot = proctree.Snapshot()
        for kernel, pid in running:
            proctree.tree(pid, kernel.known, kernel.tag, snapshot)


def describe_exit(status: int, context: Optional[str]) -> wire.KernelExit:
    """A wait status in words: "exited with code 0", "killed by SIGKILL: lease expired: …"."""
    code: Optional[int] = None
    signum: Optional[int] = None
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        words = f"killed by {name}"
    else:
        code = os.WEXITSTATUS(status)
        words = f"exited with code {code}"
    if context:
        words += f": {context}"
    return {"code": code, "signal": signum, "reason": words[:4000]}
