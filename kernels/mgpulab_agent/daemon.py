"""The host agent daemon: one process per (lab, host), started detached by the bootstrap.

A single-threaded ``selectors`` loop owns everything: the Unix socket that
bootstraps (links) connect to, each kernel's PTY, the timers (interrupt
escalation, stop grace, lease), and SIGCHLD through a wakeup fd. Threads only
probe what would block (NVML/nvidia-smi samples, the torch version probe).

A link's first line names it (its nonce); the daemon answers ``agent_hello`` and
then reads base64(JSON) request lines and writes frames
``ESC ] mgl ; <link nonce> ; JSON BEL``. A kernel's stream goes to the link that
last sent ``resume`` for it (or that started it); ``kernel_state`` goes to all.

This module is the loop and what ties the pieces together (a kernel's PTY events,
its start and end, the hello, the lease, shutdown); each piece with its own job is
a module: ``timers.py``, ``links.py`` (bytes and flow control), ``gpu_queue.py``
(who gets the GPUs), ``interrupts.py`` (escalation), ``dispatch.py`` (the request
table), ``agent_settings.py`` (adopting the hosts file's settings), ``health.py``
(what the agent reports), ``runtime_dir.py`` (its folder and log).
"""
from __future__ import annotations

import faulthandler
import json
import os
import platform
import selectors
import signal
import socket
import sys
import time
import traceback
from typing import List, Optional

from mgpulab_wire import agent_protocol_generated as wire

from . import agent_settings, health, host, proctree, runtime_dir
from .dispatch import REQUEST_HANDLERS, Requests
from .gpu_queue import GpuQueue
from .interrupts import KILL_AFTER_TERM_S, Escalation
from .kernel_proc import KernelProc, remember_trees
from .links import Link, Links
from .slots import GpuSlots
from .timers import Timer, Timers

__all__ = ["Agent", "REQUEST_HANDLERS", "main"]

_TREE_WALK_S = 1.0
# A tty hands its reader at most 4 KiB at a time: a read well under that found the kernel's output drained for now
# (the selector says when more comes). Reading on would only find EAGAIN: half the tty reads of a trivial cell.
_DRAINED_BELOW = 1024
_log = runtime_dir.log


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
        self.kernels: dict[str, KernelProc] = {}
        self.timers = Timers()
        self.links = Links(self.sel, self.kernels, self)
        self.queue = GpuQueue(GpuSlots(*host.discover_gpus(boot["gpus"])), self.kernels, self.timers, self)
        self.escalation = Escalation(self.timers, self.links, self.watch)
        self.requests = Requests(self)
        self.sampler = host.Sampler()
        self._sampling = False
        self.probe = host.VersionProbe(self.python)
        self._lease: Optional[Timer] = None
        self.shutting_down: Optional[str] = None
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
        self.start_sampler()
        self._start_lease()  # the launching link cancels it at once; a bootstrap that died never comes

    def start_sampler(self) -> None:
        if self.queue.slots.gpus and self.queue.slots.source != "none" and not self._sampling:
            self._sampling = True
            self.sampler.start()

    # --- the loop -----------------------------------------------------------

    def run(self) -> None:
        while not self._exit_now:
            woken = False
            for key, mask in self.sel.select(self.timers.wait(_TREE_WALK_S)):
                kind, target = key.data
                try:
                    if kind == "listen":
                        self._accept()
                    elif kind == "wake":
                        self._drain_wake()
                        woken = True
                    elif kind == "link":
                        self.links.on_event(target, mask)
                    elif kind == "link-relay":
                        self.links.close(target)  # a direct link's bootstrap ended (or broke the rule and spoke)
                    elif kind == "kernel":
                        self._on_kernel(target, mask)
                except Exception:  # noqa: BLE001 - one bad event never takes the agent down
                    _log("error handling an event:\n" + traceback.format_exc())
            if woken:
                # A child ended (SIGCHLD reaches the loop through the wakeup fd): waitpid then, not after every event.
                self._reap()
            self.timers.run_due()
            if time.monotonic() >= self._next_walk:
                self._next_walk = time.monotonic() + _TREE_WALK_S
                remember_trees(self.kernels.values())
            if self.shutting_down is not None and not any(k.state == "running" for k in self.kernels.values()):
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

    # --- links (LinkEvents) -------------------------------------------------

    def _accept(self) -> None:
        assert self.listener is not None
        if self.links.accept(self.listener) and self._lease is not None:
            self._lease.cancel()
            self._lease = None

    def on_line(self, link: Link, line: bytes) -> None:
        if link.nonce is None:
            self._identify(link, line)
        else:
            self.requests.take(link, line)

    def on_link_closed(self, link: Link) -> None:
        for kernel in self.kernels.values():
            if kernel.link is link:
                kernel.link = None
                if kernel.state == "queued":
                    self.queue.forget_if_orphaned(kernel)
        if not self.links.open and self.shutting_down is None:
            self._start_lease()

    def _identify(self, link: Link, line: bytes) -> None:
        try:
            first = json.loads(line)
            nonce = first["nonce"]
            if not isinstance(nonce, str) or len(nonce) != 32 or not nonce.isascii() or not nonce.isprintable() or ";" in nonce:
                raise ValueError("bad nonce")
        except (ValueError, KeyError, TypeError):
            _log("a link sent no valid first line; closed")
            self.links.close(link)
            return
        if link.passed and not self.links.go_direct(link):
            _log("a link passed other descriptors than the lab's two sockets; closed")
            self.links.close(link)
            return
        # The settings are taken before the link is named: what they change (a queued kernel refused)
        # reaches the other links now, and this one in its hello, never before it.
        notes = agent_settings.adopt_first_line(self, first)
        link.nonce = nonce
        self.links.send(link, wire.agent_hello_message(
            protocol=wire.AGENT_PROTOCOL_VERSION, agent_id=self.boot["agentId"], code_hash=self.boot["codeHash"],
            pid=os.getpid(), hostname=platform.node()[:4000], started_at=self.started * 1000,
            lease_seconds=self.lease_seconds, kernels=[self.describe(k) for k in self.kernels.values()],
            settings=self.settings, notes=notes))
        if first.get("codeHash") != self.boot["codeHash"]:
            _log("a link with other code attached (its hello says which code runs here)")
        self.queue.advance()

    def adopt(self, wanted: wire.AgentSettings) -> List[wire.SettingsNote]:
        return agent_settings.adopt(self, wanted)

    # --- the lease and shutdown ---------------------------------------------

    def _start_lease(self) -> None:
        if self._lease is not None:
            self._lease.cancel()
        seconds = self.lease_seconds
        self._lease = self.timers.after(seconds, lambda: self.begin_shutdown(f"lease expired: no lab server connected for {seconds} s"))

    def begin_shutdown(self, why: str) -> None:
        if self.shutting_down is not None:
            return
        self.shutting_down = why
        _log(f"shutting down: {why}")
        # No new link from here: a bootstrap arriving now starts a fresh agent. The path goes first, so that
        # no new agent can have bound it by the time this one unlinks it; a link already in the queue when
        # the listener closes is reset, and its bootstrap tries again (bootstrap.py).
        if self.listener is not None:
            self._remove_socket()
            self.sel.unregister(self.listener)
            self.listener.close()
            self.listener = None
        self.queue.close(why)
        for kernel in self.kernels.values():
            if kernel.state == "running":
                self.escalation.end_tree(kernel, why, KILL_AFTER_TERM_S)
        # However the trees answer, the agent is gone shortly after the last SIGKILL.
        self.timers.after(KILL_AFTER_TERM_S + 3.0, self._give_up)

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
        self.links.last_words(2.0)
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

    def describe(self, kernel: KernelProc) -> wire.AgentKernel:
        return health.describe(kernel, self.sampler, self.queue)

    def announce(self, kernel: KernelProc, requester: Optional[Link] = None, request_id: Optional[str] = None) -> None:
        described = self.describe(kernel)
        self.links.broadcast(lambda link: wire.kernel_state_message(kernel=described, request_id=request_id if link is requester else None))

    def pump(self, kernel: KernelProc) -> None:
        self.links.pump(kernel)

    def _on_kernel(self, kernel: KernelProc, mask: int) -> None:
        if mask & selectors.EVENT_WRITE:
            kernel.flush_input()
        if mask & selectors.EVENT_READ and kernel.master is not None:
            # A bounded number of chunks per event (other kernels and links get their turn), then
            # streamed at once as one message (a PTY read gives at most 4 KB; the lab pays per
            # message): a link that keeps up never sees the buffer's bound.
            for _ in range(16):
                got = kernel.read_pty()
                if got == 0:
                    # Every holder of the tty is gone; the process itself is reaped by SIGCHLD.
                    self.sel.unregister(kernel.master)
                    self.pump(kernel)
                    return
                if got is None:
                    break
                self.escalation.after_output(kernel)
                if got < _DRAINED_BELOW:
                    break
            self.pump(kernel)
        self.watch(kernel)

    def watch(self, kernel: KernelProc) -> None:
        if kernel.master is None:
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if kernel.inbox else 0)
        try:
            self.sel.modify(kernel.master, events, ("kernel", kernel))
        except KeyError:
            pass  # the PTY closed (EIO); the process is about to be reaped

    def start(self, kernel: KernelProc) -> Optional[str]:
        """Start a kernel whose GPUs are leased; the error in words, or None."""
        try:
            kernel.spawn(self.python, self.code_dir, ",".join(kernel.gpus))
        except OSError as exc:
            self.queue.release(kernel)
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
        self.escalation.done(kernel)
        self.queue.release(kernel)
        self.pump(kernel)
        self.announce(kernel)
        self.queue.advance()

    def health(self, request_id: str) -> wire.HealthMessage:
        return health.health_message(self, request_id)


def main() -> None:
    ready_fd = int(os.environ.pop("MGPULAB_AGENT_READY_FD"))
    boot_path = os.environ.pop("MGPULAB_AGENT_BOOT")
    code_dir = os.environ.pop("MGPULAB_AGENT_CODE")
    directory = os.environ.pop("MGPULAB_AGENT_DIR")
    # `kill -USR1 <agent pid>` writes every thread's stack to agent.log (a wedged agent explains itself).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    runtime_dir.use_log(os.path.join(directory, "agent.log"))
    boot, error = runtime_dir.read_boot(boot_path)
    if boot is None:
        _log(error)
        os._exit(2)
    if not proctree.set_child_subreaper():
        _log("could not become child subreaper: orphans of a kernel are found only while their parent lives")
    runtime_dir.remove_other_code(directory, code_dir)
    agent = Agent(boot, directory, code_dir)
    agent.listen()
    _log(f"listening on {agent.socket_path} (lease {agent.lease_seconds} s, {len(agent.queue.slots.gpus)} GPU slot(s) from {agent.queue.slots.source})")
    os.write(ready_fd, b"ok\n")
    os.close(ready_fd)
    agent.run()
    os._exit(0)
