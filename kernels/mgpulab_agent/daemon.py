"""The host agent daemon: one process per (lab, host), started detached by the bootstrap.

A single-threaded ``selectors`` loop owns everything: the Unix socket that
bootstraps (links) connect to, each kernel's PTY, the timers (interrupt
escalation, stop grace, lease), and SIGCHLD through a wakeup fd. Threads only
probe what would block (NVML/nvidia-smi samples, the torch version probe).

A link's first line names it (its nonce); the daemon answers ``agent_hello`` and
then reads base64(JSON) request lines and writes frames
``ESC ] mgl ; <link nonce> ; JSON BEL``. A kernel's stream goes to the link that
last sent ``resume`` for it (or that started it); ``kernel_state`` goes to all.
"""
from __future__ import annotations

import base64
import faulthandler
import heapq
import itertools
import json
import os
import platform
import selectors
import signal
import socket
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Literal, Optional, Tuple

from mgpulab_wire import agent_protocol_generated as wire
from mgpulab_wire.frames import encode_frame

from . import host, proctree, runtime_dir
from .kernel_proc import Interrupt, KernelProc
from .outbuf import SeqBuffer
from .slots import GpuSlots

# A link is sent at most this much ahead of what its socket has taken; the rest waits in the
# kernels' buffers (bounded, counted), so a slow lab never grows the agent without bound.
_LINK_HIGH_WATER = 1 << 20
_MAX_LINE = 64 * 1024 * 1024
_KILL_AFTER_TERM_S = 2.0
ORPHAN_QUEUED_S = 120.0


def _orphan_queued_seconds() -> float:
    # MGPULAB_AGENT_ORPHAN_SECONDS: tests shorten the wait (the agent inherits the bootstrap's environment).
    try:
        return float(os.environ.get("MGPULAB_AGENT_ORPHAN_SECONDS", ORPHAN_QUEUED_S))
    except ValueError:
        return ORPHAN_QUEUED_S
_STACKS_BEFORE_TERM_S = 0.3
_TREE_WALK_S = 1.0


def _log(message: str) -> None:
    runtime_dir.rotate_log()
    sys.stderr.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} mgpulab agent[{os.getpid()}]: {message}\n")
    sys.stderr.flush()


Setting = Literal["leaseSeconds", "bufferBytes", "gpus", "whenFull", "interruptGraceMs", "python"]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


@dataclass
class Link:
    sock: socket.socket
    rbuf: bytearray = field(default_factory=bytearray)
    wbuf: bytearray = field(default_factory=bytearray)
    nonce: Optional[str] = None
    closed: bool = False


@dataclass(order=True)
class _Timer:
    when: float
    order: int
    action: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)


class Agent:
    def __init__(self, boot: wire.AgentBoot, directory: str, code_dir: str) -> None:
        self.boot = boot
        self.directory = directory
        self.code_dir = code_dir
        self.socket_path = os.path.join(directory, "agent.sock")
        self.settings: wire.AgentSettings = {
            "leaseSeconds": boot["leaseSeconds"], "bufferBytes": boot["bufferBytes"], "gpus": boot["gpus"],
            "whenFull": boot["whenFull"], "interruptGraceMs": boot["interruptGraceMs"], "python": boot["python"]}
        self.python = boot["python"] or sys.executable
        self.lease_seconds = boot["leaseSeconds"]
        self.started = time.time()
        self.started_mono = time.monotonic()
        self.sel = selectors.DefaultSelector()
        self.links: List[Link] = []
        self.kernels: Dict[str, KernelProc] = {}
        self.queue: List[str] = []
        self.slots = GpuSlots(*host.discover_gpus(boot["gpus"]))
        self._waits: Dict[str, wire.GpuWait] = {}
        """The wait each queued kernel was last told (a change is announced)."""
        self.sampler = host.Sampler()
        self._sampling = False
        self.probe = host.VersionProbe(self.python)
        self._timers: List[_Timer] = []
        self._order = itertools.count()
        self._lease: Optional[_Timer] = None
        self._shutting_down: Optional[str] = None
        self._exit_now = False
        self._next_walk = 0.0
        self.listener: Optional[socket.socket] = None

    # --- set-up -------------------------------------------------------------

    def listen(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            listener.bind(self.socket_path)
        finally:
            os.umask(old)
        listener.listen(16)
        listener.setblocking(False)
        self.listener = listener
        self.sel.register(listener, selectors.EVENT_READ, ("listen", None))
        wake_r, wake_w = socket.socketpair()
        wake_r.setblocking(False)
        wake_w.setblocking(False)
        self._wake = (wake_r, wake_w)
        signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup fd hears it
        signal.signal(signal.SIGTERM, lambda *_: self.begin_shutdown("the agent received SIGTERM"))
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        self.sel.register(wake_r, selectors.EVENT_READ, ("wake", None))
        self.probe.start()
        self._start_sampler()
        self._start_lease()  # the launching link cancels it at once; a bootstrap that died never comes

    def _start_sampler(self) -> None:
        if self.slots.gpus and self.slots.source != "none" and not self._sampling:
            self._sampling = True
            self.sampler.start()

    # --- timers -------------------------------------------------------------

    def after(self, seconds: float, action: Callable[[], None]) -> _Timer:
        timer = _Timer(time.monotonic() + seconds, next(self._order), action)
        heapq.heappush(self._timers, timer)
        return timer

    def _run_timers(self) -> None:
        now = time.monotonic()
        while self._timers and self._timers[0].when <= now:
            timer = heapq.heappop(self._timers)
            if not timer.cancelled:
                timer.action()

    def _timeout(self) -> float:
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
        wait = _TREE_WALK_S
        if self._timers:
            wait = min(wait, max(0.0, self._timers[0].when - time.monotonic()))
        return wait

    # --- the loop -----------------------------------------------------------

    def run(self) -> None:
        while not self._exit_now:
            for key, mask in self.sel.select(self._timeout()):
                kind, target = key.data
                try:
                    if kind == "listen":
                        self._accept()
                    elif kind == "wake":
                        self._drain_wake()
                    elif kind == "link":
                        self._on_link(target, mask)
                    elif kind == "kernel":
                        self._on_kernel(target, mask)
                except Exception:  # noqa: BLE001 - one bad event never takes the agent down
                    _log("error handling an event:\n" + traceback.format_exc())
            self._reap()
            self._run_timers()
            if time.monotonic() >= self._next_walk:
                self._next_walk = time.monotonic() + _TREE_WALK_S
                for kernel in self.kernels.values():
                    kernel.remember_tree()
            if self._shutting_down is not None and not any(k.state == "running" for k in self.kernels.values()):
                self._exit_now = True
        self._close()

    def _drain_wake(self) -> None:
        try:
            while self._wake[0].recv(4096):
                pass
        except BlockingIOError:
            pass

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            for kernel in self.kernels.values():
                if kernel.pid == pid and kernel.state == "running":
                    self._kernel_ended(kernel, status)
                    break
            # else: an orphan re-parented to the agent (subreaper), or a probe's child: reaped, nothing more

    # --- links --------------------------------------------------------------

    def _accept(self) -> None:
        assert self.listener is not None
        while True:
            try:
                sock, _ = self.listener.accept()
            except BlockingIOError:
                return
            sock.setblocking(False)
            link = Link(sock)
            self.links.append(link)
            self.sel.register(sock, selectors.EVENT_READ, ("link", link))
            if self._lease is not None:
                self._lease.cancelled = True
                self._lease = None

    def _on_link(self, link: Link, mask: int) -> None:
        if mask & selectors.EVENT_WRITE:
            self._flush_link(link)
        if mask & selectors.EVENT_READ and not link.closed:
            try:
                data = link.sock.recv(1 << 20)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._close_link(link)
                return
            link.rbuf += data
            while not link.closed:
                end = link.rbuf.find(b"\n")
                if end == -1:
                    if len(link.rbuf) > _MAX_LINE:
                        link.rbuf.clear()
                        self.send(link, wire.agent_log_message(level="warning", message=f"a request line longer than {_MAX_LINE} bytes was dropped"))
                    return
                line = bytes(link.rbuf[:end]).strip()
                del link.rbuf[: end + 1]
                if line:
                    self._on_line(link, line)

    def _on_line(self, link: Link, line: bytes) -> None:
        if link.nonce is None:
            self._identify(link, line)
            return
        try:
            raw = json.loads(base64.b64decode(line, validate=True))
        except ValueError as exc:  # binascii.Error and UnicodeDecodeError are ValueErrors too
            self._refuse(link, None, f"the line is not base64 JSON ({exc})")
            return
        try:
            request = wire.read_agent_request(raw)
        except wire.ProtocolError as exc:
            self._refuse(link, raw, f"the protocol does not define it: {exc}")
            return
        self._handle(link, request)

    def _refuse(self, link: Link, request: object, why: str) -> None:
        """The error reply to a request that was not carried out, naming it; the agent goes on serving.

        ``request_failed`` to its ``requestId`` when it carries one the protocol accepts (the lab's
        pending call then fails at once instead of timing out), else an ``agent_log`` warning."""
        fields = request if isinstance(request, dict) else {}
        kind, asked = fields.get("type"), fields.get("requestId")
        if request is None:
            name = "a request line"
        elif isinstance(kind, str):
            name = f"a {kind[:100]!r} request"
        else:
            name = "a request with no type"
        message = f"{name} was not carried out: {why}"[:4000]
        if isinstance(asked, str):
            try:
                self.send(link, wire.request_failed_message(request_id=asked, message=message))
                return
            except wire.ProtocolError:
                pass  # an id the protocol refuses (empty, too long) cannot be answered: the warning names the request
        self.send(link, wire.agent_log_message(level="warning", message=message))

    def _identify(self, link: Link, line: bytes) -> None:
        try:
            first = json.loads(line)
            nonce = first["nonce"]
            if not isinstance(nonce, str) or len(nonce) != 32 or not nonce.isascii() or not nonce.isprintable() or ";" in nonce:
                raise ValueError("bad nonce")
        except (ValueError, KeyError, TypeError):
            _log("a link sent no valid first line; closed")
            self._close_link(link)
            return
        # The settings are taken before the link is named: what they change (a queued kernel refused)
        # reaches the other links now, and this one in its hello, never before it.
        notes: List[wire.SettingsNote] = []
        if "settings" in first:
            try:
                notes = self._adopt(wire.check_agent_settings(first["settings"], "the link's settings"))
            except wire.ProtocolError as exc:
                _log(f"a link sent settings the protocol does not define; kept mine: {exc}")
        else:
            # A lab from before settings adoption sends its lease alone.
            lease = first.get("leaseSeconds")
            if isinstance(lease, int) and not isinstance(lease, bool) and 0 < lease <= 7 * 24 * 3600 and lease != self.lease_seconds:
                wanted = self.settings.copy()
                wanted["leaseSeconds"] = lease
                notes = self._adopt(wanted)
        link.nonce = nonce
        self.send(link, wire.agent_hello_message(
            protocol=wire.AGENT_PROTOCOL_VERSION, agent_id=self.boot["agentId"], code_hash=self.boot["codeHash"],
            pid=os.getpid(), hostname=platform.node()[:4000], started_at=self.started * 1000,
            lease_seconds=self.lease_seconds, kernels=[self._describe(k) for k in self.kernels.values()],
            settings=self.settings, notes=notes))
        if first.get("codeHash") != self.boot["codeHash"]:
            _log("a link with other code attached (its hello says which code runs here)")
        self._advance_queue()

    def send(self, link: Optional[Link], message: Any) -> None:
        if link is None or link.closed or link.nonce is None:
            return
        link.wbuf += encode_frame(message, link.nonce)
        self._flush_link(link)

    def broadcast(self, message_for: Callable[[Link], Any]) -> None:
        for link in list(self.links):
            if link.nonce is not None:
                self.send(link, message_for(link))

    def _flush_link(self, link: Link) -> None:
        while link.wbuf and not link.closed:
            try:
                sent = link.sock.send(link.wbuf[: 1 << 20])
            except BlockingIOError:
                break
            except OSError:
                self._close_link(link)
                return
            del link.wbuf[:sent]
        if link.closed:
            return
        self.sel.modify(link.sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if link.wbuf else 0), ("link", link))
        if len(link.wbuf) < _LINK_HIGH_WATER:
            for kernel in self.kernels.values():
                if kernel.link is link and kernel.cursor < kernel.buffer.last_seq:
                    self._pump(kernel)

    def _close_link(self, link: Link) -> None:
        if link.closed:
            return
        link.closed = True
        try:
            self.sel.unregister(link.sock)
        except (KeyError, ValueError):
            pass
        link.sock.close()
        self.links.remove(link)
        for kernel in self.kernels.values():
            if kernel.link is link:
                kernel.link = None
                if kernel.state == "queued":
                    self._forget_if_orphaned(kernel)
        if not self.links and self._shutting_down is None:
            self._start_lease()

    # --- settings -----------------------------------------------------------

    def _adopt(self, wanted: wire.AgentSettings) -> List[wire.SettingsNote]:
        """Takes the hosts file's settings where that is safe; says what changed and what was kept, and why.
        Nothing running is taken from anyone: a GPU that left the file stays with the kernel holding it."""
        notes: List[wire.SettingsNote] = []
        was = self.settings

        def note(setting: Setting, applied: bool, message: str) -> None:
            notes.append({"setting": setting, "applied": applied, "message": message[:4000]})
            _log(("settings: " if applied else "settings kept: ") + message)

        if wanted["leaseSeconds"] != was["leaseSeconds"]:
            self.lease_seconds = wanted["leaseSeconds"]
            note("leaseSeconds", True, f"lease {wanted['leaseSeconds']} s (was {was['leaseSeconds']} s)")
        if wanted["interruptGraceMs"] != was["interruptGraceMs"]:
            note("interruptGraceMs", True, f"interrupt grace {wanted['interruptGraceMs'] / 1000:g} s (was {was['interruptGraceMs'] / 1000:g} s)")
        running = sum(1 for k in self.kernels.values() if k.state == "running")
        later = f"; the {_plural(running, 'running kernel')} keep{'s' if running == 1 else ''} theirs" if running else ""
        if wanted["bufferBytes"] != was["bufferBytes"]:
            note("bufferBytes", True, f"output buffer {wanted['bufferBytes']} bytes for kernels started from now on{later}")
        if wanted["python"] != was["python"]:
            self.python = wanted["python"] or sys.executable
            self.probe = host.VersionProbe(self.python)
            self.probe.start()
            note("python", True, f"kernels started from now on run {self.python}{later}")
        self.settings = wanted.copy()
        if wanted["gpus"] != was["gpus"]:
            self._adopt_gpus(wanted["gpus"], note)
        if wanted["whenFull"] != was["whenFull"]:
            note("whenFull", True, f"when full: {wanted['whenFull']} (was {was['whenFull']})")
            if wanted["whenFull"] == "refuse":
                for kernel_id in list(self.queue):
                    kernel = self.kernels[kernel_id]
                    self._leave_queue(kernel, self._refusal_text(kernel.gpus_requested), None, None, refusal=self._wait(kernel))
        return notes

    def _adopt_gpus(self, declared: Optional[List[wire.HostGpu]], note: Callable[[Setting, bool, str], None]) -> None:
        before = len(self.slots.offered())
        gpus, source = host.discover_gpus(declared)
        kept = self.slots.redeclare(gpus, source)
        where = "as the hosts file declares" if source == "declared" else f"found by {source}"
        note("gpus", True, f"{_plural(len(gpus), 'GPU')} {where} (was {before})")
        for uuid, holder in kept:
            note("gpus", False, f"GPU {uuid} is no longer in the hosts file; kernel {holder} holds it, so it stays until that kernel ends")
        self._start_sampler()

    def _kept(self) -> List[str]:
        """What differs from the settings now, and why (for the hosts page)."""
        return [f"GPU {uuid} is no longer in the hosts file; kernel {self.slots.holders.get(uuid)} holds it until it ends"
                for uuid in sorted(self.slots.retiring)]

    def _forget_if_orphaned(self, kernel: KernelProc) -> None:
        """A queued kernel whose lab went away (a server stopped while it waited; the next one
        does not know it) would hold the queue, and the GPUs reserved for it, for nobody: it
        leaves the queue unless a link resumes it within ORPHAN_QUEUED_S (a dropped link reconnects
        within seconds; a stalled one is reopened after 30 s)."""
        def check() -> None:
            if kernel.state == "queued" and kernel.link is None and kernel.kernel_id in self.queue:
                self._leave_queue(kernel, "removed from the GPU queue: the lab server that asked for it went away", None, None)
                self._advance_queue()
        self.after(_orphan_queued_seconds(), check)

    # --- the lease ----------------------------------------------------------

    def _start_lease(self) -> None:
        if self._lease is not None:
            self._lease.cancelled = True
        seconds = self.lease_seconds
        self._lease = self.after(seconds, lambda: self.begin_shutdown(f"lease expired: no lab server connected for {seconds} s"))

    def begin_shutdown(self, why: str) -> None:
        if self._shutting_down is not None:
            return
        self._shutting_down = why
        _log(f"shutting down: {why}")
        # No new link from here: a bootstrap arriving now starts a fresh agent.
        if self.listener is not None:
            self.sel.unregister(self.listener)
            self.listener.close()
            self.listener = None
            self._remove_socket()
        for kernel_id in list(self.queue):
            self._leave_queue(self.kernels[kernel_id], f"removed from the GPU queue: {why}", None, None)
        for kernel in self.kernels.values():
            if kernel.state == "running":
                self._end_tree(kernel, why, _KILL_AFTER_TERM_S)
        # However the trees answer, the agent is gone shortly after the last SIGKILL.
        self.after(_KILL_AFTER_TERM_S + 3.0, self._give_up)

    def _give_up(self) -> None:
        for kernel in self.kernels.values():
            if kernel.state == "running":
                kernel.signal_tree(signal.SIGKILL)
        self._exit_now = True

    def _remove_socket(self) -> None:
        try:
            os.unlink(self.socket_path)
        except FileNotFoundError:
            pass

    def _close(self) -> None:
        # Last words (kernel_exit, states) go out before the links close, bounded in time.
        deadline = time.monotonic() + 2.0
        for link in list(self.links):
            try:
                link.sock.setblocking(True)
                link.sock.settimeout(max(0.1, deadline - time.monotonic()))
                link.sock.sendall(link.wbuf)
            except OSError:
                pass
            link.sock.close()
        if self.listener is not None:
            self.listener.close()
            self._remove_socket()
        self.sampler.stop()
        # Nothing of the lab stays on the host but the bounded log.
        if runtime_dir.remove_code(self.directory, self.socket_path):
            _log("exited; removed its code and launch lock (the log stays, bounded)")
        else:
            _log("exited; a new agent runs here, its files stay")

    # --- kernels ------------------------------------------------------------

    def _describe(self, kernel: KernelProc) -> wire.AgentKernel:
        utils = [self.sampler.latest[uuid][1] for uuid in kernel.gpus if uuid in self.sampler.latest]
        known = [u for u in utils if u is not None]
        return kernel.describe(max(known) if known else None, self._wait(kernel) if kernel.state == "queued" else None)

    def _wait(self, kernel: KernelProc) -> wire.GpuWait:
        """What the kernel waits for: the GPUs free of the total, who holds the rest, who is before it."""
        holders: List[wire.GpuUse] = [{"kernel": holder, "gpus": count, "since": since} for holder, (count, since) in self.slots.held().items()]
        place = self.queue.index(kernel.kernel_id) if kernel.kernel_id in self.queue else len(self.queue)
        ahead: List[wire.GpuUse] = [{"kernel": other.kernel_id, "gpus": other.gpus_requested, "since": other.queued_at}
                                    for other in (self.kernels[kid] for kid in self.queue[:place])]
        return {"asked": kernel.gpus_requested, "free": len(self.slots.free()), "total": self.slots.total,
                "holders": holders[:1024], "ahead": ahead[:1024]}

    def _refusal_text(self, wanted: int) -> str:
        """A refusal in words (the lab names the holders' notebooks; this is for logs and older labs)."""
        total, free = self.slots.total, len(self.slots.free())
        if wanted > total:
            return f"the kernel asks for {_plural(wanted, 'GPU')}; this host has {total}"
        waiting = f"; {len(self.queue)} kernel(s) wait before it" if self.queue else ""
        held = ", ".join(f"{uuid} by {holder}" for uuid, holder in sorted(self.slots.holders.items())) or "none"
        return f"no GPU free: it asks for {wanted}, {free} of {total} are free{waiting} (held: {held})"

    def _announce(self, kernel: KernelProc, requester: Optional[Link] = None, request_id: Optional[str] = None) -> None:
        described = self._describe(kernel)
        self.broadcast(lambda link: wire.kernel_state_message(kernel=described, request_id=request_id if link is requester else None))

    def _on_kernel(self, kernel: KernelProc, mask: int) -> None:
        if mask & selectors.EVENT_WRITE:
            kernel.flush_input()
        if mask & selectors.EVENT_READ and kernel.master is not None:
            # A bounded number of chunks per event (other kernels and links get their turn),
            # each streamed at once: a link that keeps up never sees the buffer's bound.
            for _ in range(16):
                got = kernel.read_pty()
                if got is False:
                    # Every holder of the tty is gone; the process itself is reaped by SIGCHLD.
                    self.sel.unregister(kernel.master)
                    self._pump(kernel)
                    return
                if got is None:
                    break
                self._after_output(kernel)
        self._watch(kernel)

    def _watch(self, kernel: KernelProc) -> None:
        if kernel.master is None:
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if kernel.inbox else 0)
        try:
            self.sel.modify(kernel.master, events, ("kernel", kernel))
        except KeyError:
            pass  # the PTY closed (EIO); the process is about to be reaped

    def _after_output(self, kernel: KernelProc) -> None:
        interrupt = kernel.interrupt
        if interrupt is not None and interrupt.step == "sigint" and kernel.outstanding == 0:
            self._interrupt_done(kernel, "sigint")
        self._pump(kernel)

    def _pump(self, kernel: KernelProc) -> None:
        """Send the kernel's stream link what it has not been sent, up to the link's high water."""
        link = kernel.link
        if link is None or link.closed or link.nonce is None:
            return
        buffer = kernel.buffer
        while kernel.cursor < buffer.last_seq and len(link.wbuf) < _LINK_HIGH_WATER:
            entry = buffer.get(kernel.cursor + 1)
            if entry is None:
                gap = buffer.gap(kernel.cursor)
                if gap is not None:
                    link.wbuf += encode_frame(wire.kernel_gap_message(
                        kernel=kernel.kernel_id, after_seq=gap.after_seq, resumed_from=gap.resumed_from,
                        dropped_messages=gap.dropped_messages, dropped_bytes=gap.dropped_bytes), link.nonce)
                kernel.cursor = buffer.first_seq - 1
                continue
            link.wbuf += encode_frame(entry.message, link.nonce)
            kernel.cursor = entry.seq
            buffer.sent_up_to = max(buffer.sent_up_to, entry.seq)
        if link.wbuf:
            self._flush_link(link)

    def _start(self, kernel: KernelProc) -> Optional[str]:
        """Start a kernel whose GPUs are leased; the error in words, or None."""
        try:
            kernel.spawn(self.python, self.code_dir, ",".join(kernel.gpus))
        except OSError as exc:
            self._release(kernel)
            return f"could not start kernel {kernel.kernel_id}: {exc}"
        assert kernel.master is not None
        self.sel.register(kernel.master, selectors.EVENT_READ, ("kernel", kernel))
        return None

    def _kernel_ended(self, kernel: KernelProc, status: int) -> None:
        if kernel.master is not None:
            try:
                self.sel.unregister(kernel.master)
            except (KeyError, ValueError):
                pass
        kernel.finish(status)
        if kernel.interrupt is not None:
            self._interrupt_done(kernel, kernel.interrupt.step)
        self._release(kernel)
        self._pump(kernel)
        self._announce(kernel)
        self._advance_queue()

    def _release(self, kernel: KernelProc) -> None:
        # kernel.gpus stays: what it held, in its last state
        for uuid in self.slots.release([uuid for uuid in kernel.gpus if self.slots.holders.get(uuid) == kernel.kernel_id]):
            _log(f"GPU {uuid} left the host: it is no longer in the hosts file and kernel {kernel.kernel_id} has ended")

    def _lease_gpus(self, kernel: KernelProc) -> None:
        kernel.gpus = self.slots.lease(kernel.kernel_id, kernel.gpus_requested)

    def _advance_queue(self) -> None:
        """First come, first served: the head starts once enough GPUs are free; until then the free
        GPUs are reserved for it (a kernel has no end time: one let past it could delay it without bound)."""
        if self._shutting_down is not None:
            return
        for kernel_id in list(self.queue):
            kernel = self.kernels[kernel_id]
            if kernel.gpus_requested > self.slots.total:
                # The host no longer has that many (its GPU list shrank): it would wait forever.
                self._leave_queue(kernel, self._refusal_text(kernel.gpus_requested), None, None, refusal=self._wait(kernel))
        while self.queue:
            head = self.kernels[self.queue[0]]
            if len(self.slots.free()) < head.gpus_requested:
                break
            self.queue.pop(0)
            self._waits.pop(head.kernel_id, None)
            self._lease_gpus(head)
            error = self._start(head)
            if error is not None:
                head.leave_queue(error)
                self._pump(head)
            self._announce(head)
        self._renumber_queue()

    def _renumber_queue(self) -> None:
        """Tells each queued kernel its place and what it waits for, when either changed."""
        for position, kernel_id in enumerate(self.queue, start=1):
            kernel = self.kernels[kernel_id]
            wait = self._wait(kernel)
            if kernel.position != position or self._waits.get(kernel_id) != wait:
                kernel.position = position
                self._waits[kernel_id] = wait
                self._announce(kernel)

    def _leave_queue(self, kernel: KernelProc, why: str, requester: Optional[Link], request_id: Optional[str],
                     refusal: Optional[wire.GpuWait] = None) -> None:
        self.queue.remove(kernel.kernel_id)
        self._waits.pop(kernel.kernel_id, None)
        kernel.leave_queue(why, refusal)
        self._pump(kernel)
        self._announce(kernel, requester, request_id)
        self._renumber_queue()

    def _end_tree(self, kernel: KernelProc, why: str, grace_s: float) -> None:
        """SIGHUP and SIGTERM to the kernel's tree now, SIGKILL after ``grace_s``."""
        if kernel.ending is None:
            kernel.ending = why
        kernel.signal_tree(signal.SIGHUP)
        kernel.signal_tree(signal.SIGTERM)

        def kill() -> None:
            if kernel.state == "running":
                kernel.signal_tree(signal.SIGKILL)
        self.after(grace_s, kill)

    # --- interrupt ----------------------------------------------------------

    def _interrupt_done(self, kernel: KernelProc, step: Any) -> None:
        interrupt = kernel.interrupt
        if interrupt is None:
            return
        kernel.interrupt = None
        elapsed = (time.monotonic() - interrupt.started) * 1000
        message = wire.interrupt_result_message(request_id=interrupt.request_id, kernel=kernel.kernel_id, step=step, elapsed_ms=elapsed)
        if interrupt.link is not None and not interrupt.link.closed:
            self.send(interrupt.link, message)
        else:
            self.broadcast(lambda _link: message)

    def _interrupt(self, link: Link, request_id: str, kernel: KernelProc, grace_ms: Optional[int]) -> None:
        if kernel.state != "running" or kernel.outstanding == 0:
            # Idle: no SIGINT (the kernel would keep it for its next cell).
            self.send(link, wire.interrupt_result_message(request_id=request_id, kernel=kernel.kernel_id, step="not-running", elapsed_ms=0))
            return
        if kernel.interrupt is not None:
            self.send(link, wire.request_failed_message(request_id=request_id, message=f"kernel {kernel.kernel_id} is already being interrupted"))
            return
        interrupt = Interrupt(request_id, link, time.monotonic())
        kernel.interrupt = interrupt
        kernel.write_pty(b"\x03")
        kernel.flush_input()
        self._watch(kernel)
        grace = (self.settings["interruptGraceMs"] if grace_ms is None else grace_ms) / 1000

        def escalate() -> None:
            if kernel.interrupt is not interrupt or kernel.state != "running":
                return
            kernel.write_pty(b"\x1c")  # faulthandler: every process on the tty prints its stacks
            kernel.flush_input()
            self._watch(kernel)
            self.after(_STACKS_BEFORE_TERM_S, terminate)

        def terminate() -> None:
            if kernel.interrupt is not interrupt or kernel.state != "running":
                return
            interrupt.step = "sigterm"
            kernel.ending = kernel.ending or "the cell did not stop on interrupt"
            kernel.signal_tree(signal.SIGTERM)
            self.after(_KILL_AFTER_TERM_S, kill)

        def kill() -> None:
            if kernel.interrupt is not interrupt or kernel.state != "running":
                return
            interrupt.step = "sigkill"
            kernel.signal_tree(signal.SIGKILL)
        self.after(grace, escalate)

    # --- requests -----------------------------------------------------------

    def _kernel(self, link: Link, kernel_id: str, request_id: Optional[str] = None) -> Optional[KernelProc]:
        kernel = self.kernels.get(kernel_id)
        if kernel is None:
            if request_id is not None:
                self.send(link, wire.request_failed_message(request_id=request_id, message=f"no kernel {kernel_id} on this agent"))
            else:
                self.send(link, wire.agent_log_message(level="warning", message=f"no kernel {kernel_id} on this agent"))
        return kernel

    def _handle(self, link: Link, request: wire.AgentRequest) -> None:
        handler = REQUEST_HANDLERS.get(request["type"])
        if handler is None:  # a type the protocol defines and this table lacks (test_agent_dispatch.py forbids it)
            self._refuse(link, request, "this agent has no handler for it")
            return
        try:
            handler(self, link, request)
        except Exception as exc:  # noqa: BLE001 - its requester is told, the loop goes on with the next request
            _log(f"error handling a {request['type']} request:\n" + traceback.format_exc())
            self._refuse(link, request, f"it failed in the agent: {type(exc).__name__}: {exc}")

    # One method per request type, each taking the request type its entry in REQUEST_HANDLERS names.

    def _on_kernel_input(self, link: Link, request: wire.KernelInputRequest) -> None:
        kernel = self._kernel(link, request["kernel"])
        if kernel is None:
            return
        if kernel.state != "running":
            self.send(link, wire.agent_log_message(level="warning", message=f"kernel {kernel.kernel_id} is {kernel.state}: its input was dropped"))
            return
        kernel.queue_input(request["line"])
        kernel.flush_input()
        self._watch(kernel)

    def _on_resume(self, link: Link, request: wire.ResumeRequest) -> None:
        asked = request.get("requestId")
        kernel = self._kernel(link, request["kernel"], asked)
        if kernel is not None:
            if asked is not None:  # its state first, then what it buffered after afterSeq
                self.send(link, wire.kernel_state_message(kernel=self._describe(kernel), request_id=asked))
            self._resume(link, kernel, request["afterSeq"])

    def _on_describe_kernel(self, link: Link, request: wire.DescribeKernelRequest) -> None:
        kernel = self._kernel(link, request["kernel"], request["requestId"])
        if kernel is not None:
            self.send(link, wire.kernel_state_message(kernel=self._describe(kernel), request_id=request["requestId"]))

    def _on_ack(self, link: Link, request: wire.AckRequest) -> None:
        kernel = self._kernel(link, request["kernel"])
        if kernel is not None:
            kernel.buffer.ack(request["seq"])

    def _on_interrupt(self, link: Link, request: wire.InterruptRequest) -> None:
        kernel = self._kernel(link, request["kernel"], request["requestId"])
        if kernel is not None:
            self._interrupt(link, request["requestId"], kernel, request["graceMs"])

    def _on_dump_stacks(self, link: Link, request: wire.DumpStacksRequest) -> None:
        kernel = self._kernel(link, request["kernel"])
        if kernel is not None and kernel.state == "running":
            kernel.write_pty(b"\x1c")
            kernel.flush_input()
            self._watch(kernel)

    def _on_stop_kernel(self, link: Link, request: wire.StopKernelRequest) -> None:
        kernel = self._kernel(link, request["kernel"], request["requestId"])
        if kernel is None:
            return
        if kernel.state == "queued":
            self._leave_queue(kernel, "removed from the GPU queue", link, request["requestId"])
        elif kernel.state == "running":
            self._end_tree(kernel, "stopped by the lab", request["graceMs"] / 1000)
        else:
            self._announce(kernel, link, request["requestId"])

    def _on_forget(self, link: Link, request: wire.ForgetRequest) -> None:
        forgotten = self.kernels.get(request["kernel"])
        if forgotten is not None and forgotten.state == "exited":
            del self.kernels[forgotten.kernel_id]

    def _on_health(self, link: Link, request: wire.HealthRequest) -> None:
        self.send(link, self._health(request["requestId"]))

    def _on_configure(self, link: Link, request: wire.ConfigureRequest) -> None:
        notes = self._adopt(request["settings"])
        self._advance_queue()
        self.send(link, wire.configured_message(request_id=request["requestId"], settings=self.settings, notes=notes))

    def _on_agent_shutdown(self, link: Link, request: wire.AgentShutdownRequest) -> None:
        self.begin_shutdown("the agent was shut down by the lab")

    def _resume(self, link: Link, kernel: KernelProc, after_seq: int) -> None:
        # What is no longer buffered after after_seq is reported by the pump as a kernel_gap first.
        kernel.link = link
        kernel.cursor = min(after_seq, kernel.buffer.last_seq)
        self._pump(kernel)

    def _start_kernel(self, link: Link, request: wire.StartKernelRequest) -> None:
        kernel_id, request_id, wanted = request["kernel"], request["requestId"], request["gpus"]
        existing = self.kernels.get(kernel_id)
        if existing is not None and existing.state != "exited":
            self.send(link, wire.request_failed_message(request_id=request_id, message=f"kernel {kernel_id} is already {existing.state} on this agent"))
            return
        if self._shutting_down is not None:
            self.send(link, wire.request_failed_message(request_id=request_id, message=f"the agent is shutting down ({self._shutting_down})"))
            return
        kernel = KernelProc(kernel_id, wanted, request["cwd"], dict(request["env"]), SeqBuffer(self.settings["bufferBytes"]))
        kernel.link = link  # the starting link gets its stream until another resumes it
        # A request behind others waits even where it would fit: the free GPUs are reserved for the first.
        if wanted > self.slots.total or (wanted > 0 and (len(self.slots.free()) < wanted or self.queue)):
            if wanted > self.slots.total or self.settings["whenFull"] == "refuse":
                self.send(link, wire.request_failed_message(
                    request_id=request_id, message=self._refusal_text(wanted)[:4000], refusal=self._wait(kernel)))
                return
            self.kernels[kernel_id] = kernel
            self.queue.append(kernel_id)
            kernel.position = len(self.queue)
            kernel.queued_at = time.time() * 1000
            self._waits[kernel_id] = self._wait(kernel)
            self._announce(kernel, link, request_id)
            return
        self.kernels[kernel_id] = kernel
        self._lease_gpus(kernel)
        error = self._start(kernel)
        if error is not None:
            del self.kernels[kernel_id]
            self.send(link, wire.request_failed_message(request_id=request_id, message=error[:4000]))
            return
        self._announce(kernel, link, request_id)

    def _health(self, request_id: str) -> wire.HealthMessage:
        gpus: List[wire.HealthMessageGpusItem] = []
        reserved_for = self.queue[0] if self.queue else None
        for gpu in self.slots.gpus:
            uuid = gpu["uuid"]
            used, util = self.sampler.latest.get(uuid, (None, None))
            item: wire.HealthMessageGpusItem = {"gpu": gpu, "memoryUsedMiB": used, "utilization": util, "kernel": self.slots.holders.get(uuid)}
            if uuid in self.slots.leased_at:
                item["since"] = self.slots.leased_at[uuid]
            if uuid in self.slots.retiring:
                item["retiring"] = True
            elif reserved_for is not None and uuid not in self.slots.holders:
                item["reservedFor"] = reserved_for
            gpus.append(item)
        queue: List[wire.GpuUse] = [{"kernel": kid, "gpus": self.kernels[kid].gpus_requested, "since": self.kernels[kid].queued_at} for kid in self.queue]
        facts = self.probe.facts
        return wire.health_message(
            request_id=request_id, hostname=platform.node()[:4000], pid=os.getpid(),
            uptime_seconds=time.monotonic() - self.started_mono,
            python=facts.get("python") or platform.python_version(), torch=facts.get("torch"), cuda=facts.get("cuda"),
            probe=self.probe.state, gpu_source=self.slots.source, gpus=gpus,
            kernels=sum(1 for k in self.kernels.values() if k.state == "running"), queued=len(self.queue),
            lease_seconds=self.lease_seconds, links=len(self.links), code_hash=self.boot["codeHash"],
            queue=queue[:1024], settings=self.settings, kept=self._kept()[:64])


# Every request type of the protocol → its handler, which takes that request's TypedDict (the value is
# typed loosely so one table holds them all; test_agent_dispatch.py checks that the keys are exactly
# wire.AGENT_REQUEST_TYPES and that each handler's request annotation is its key's type).
REQUEST_HANDLERS: Dict[str, Callable[[Agent, Link, Any], None]] = {
    "start_kernel": Agent._start_kernel,
    "kernel_input": Agent._on_kernel_input,
    "resume": Agent._on_resume,
    "describe_kernel": Agent._on_describe_kernel,
    "ack": Agent._on_ack,
    "interrupt": Agent._on_interrupt,
    "dump_stacks": Agent._on_dump_stacks,
    "stop_kernel": Agent._on_stop_kernel,
    "forget": Agent._on_forget,
    "health": Agent._on_health,
    "configure": Agent._on_configure,
    "agent_shutdown": Agent._on_agent_shutdown,
}


def _read_boot(path: str) -> Tuple[Optional[wire.AgentBoot], str]:
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except (OSError, ValueError) as exc:
        return None, f"cannot read the boot payload: {exc}"
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    try:
        return wire.check_agent_boot(raw, "boot payload"), ""
    except wire.ProtocolError as exc:
        return None, f"bad boot payload: {exc}"


def _remove_other_code(directory: str, code_dir: str) -> None:
    # No other agent with this id runs (the bootstrap holds the launch lock and found no socket):
    # code directories of earlier versions are left-overs.
    import shutil
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if name.startswith("code-") and os.path.realpath(path) != os.path.realpath(code_dir):
            shutil.rmtree(path, ignore_errors=True)


def main() -> None:
    ready_fd = int(os.environ.pop("MGPULAB_AGENT_READY_FD"))
    boot_path = os.environ.pop("MGPULAB_AGENT_BOOT")
    code_dir = os.environ.pop("MGPULAB_AGENT_CODE")
    directory = os.environ.pop("MGPULAB_AGENT_DIR")
    # `kill -USR1 <agent pid>` writes every thread's stack to agent.log (a wedged agent explains itself).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    runtime_dir.use_log(os.path.join(directory, "agent.log"))
    boot, error = _read_boot(boot_path)
    if boot is None:
        _log(error)
        os._exit(2)
    if not proctree.set_child_subreaper():
        _log("could not become child subreaper: orphans of a kernel are found only while their parent lives")
    _remove_other_code(directory, code_dir)
    agent = Agent(boot, directory, code_dir)
    agent.listen()
    _log(f"listening on {agent.socket_path} (lease {agent.lease_seconds} s, {len(agent.slots.gpus)} GPU slot(s) from {agent.slots.source})")
    os.write(ready_fd, b"ok\n")
    os.close(ready_fd)
    agent.run()
    os._exit(0)
