"""The lab's requests: one decoded line → one handler, looked up in a table that covers the protocol.

Separate from the daemon because it is the agent's whole request surface in one place: a line is
decoded and checked against the generated protocol, then dispatched through REQUEST_HANDLERS,
whose keys are exactly wire.AGENT_REQUEST_TYPES (test_agent_dispatch.py). Nothing vanishes: a line
that is not base64 JSON, a request the protocol does not define, a handler that raises, each gets
an error reply naming the request (``request_failed`` to its requestId, else an ``agent_log``
warning), and the link goes on being served. The handlers act on the agent through ServedAgent."""
from __future__ import annotations

import base64
import json
import traceback
from typing import Any, Callable, Dict, List, Optional, Protocol

from mgpulab_wire import agent_protocol_generated as wire

from . import runtime_dir
from .gpu_queue import GpuQueue
from .interrupts import Escalation
from .kernel_proc import KernelProc
from .links import Link, Links
from .outbuf import SeqBuffer


class ServedAgent(Protocol):
    """What the request handlers read and drive of the agent (the daemon's Agent is one)."""
    kernels: Dict[str, KernelProc]
    settings: wire.AgentSettings
    shutting_down: Optional[str]
    links: Links
    queue: GpuQueue
    escalation: Escalation

    def describe(self, kernel: KernelProc) -> wire.AgentKernel: ...

    def announce(self, kernel: KernelProc, requester: Optional[Link] = None, request_id: Optional[str] = None) -> None: ...

    def start(self, kernel: KernelProc) -> Optional[str]: ...

    def adopt(self, wanted: wire.AgentSettings) -> List[wire.SettingsNote]: ...

    def health(self, request_id: str) -> wire.HealthMessage: ...

    def begin_shutdown(self, why: str) -> None: ...


class Requests:
    def __init__(self, agent: ServedAgent) -> None:
        self.agent = agent
        self.links = agent.links

    def take(self, link: Link, line: bytes) -> None:
        """One request line from a named link: decoded, checked, carried out or refused."""
        try:
            raw = json.loads(base64.b64decode(line, validate=True))
        except ValueError as exc:  # binascii.Error and UnicodeDecodeError are ValueErrors too
            self.refuse(link, None, f"the line is not base64 JSON ({exc})")
            return
        try:
            request = wire.read_agent_request(raw)
        except wire.ProtocolError as exc:
            self.refuse(link, raw, f"the protocol does not define it: {exc}")
            return
        self.handle(link, request)

    def handle(self, link: Link, request: wire.AgentRequest) -> None:
        handler = REQUEST_HANDLERS.get(request["type"])
        if handler is None:  # a type the protocol defines and this table lacks (test_agent_dispatch.py forbids it)
            self.refuse(link, request, "this agent has no handler for it")
            return
        try:
            handler(self, link, request)
        except Exception as exc:  # noqa: BLE001 - its requester is told, the loop goes on with the next request
            runtime_dir.log(f"error handling a {request['type']} request:\n" + traceback.format_exc())
            self.refuse(link, request, f"it failed in the agent: {type(exc).__name__}: {exc}")

    def refuse(self, link: Link, request: object, why: str) -> None:
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
                self.links.send(link, wire.request_failed_message(request_id=asked, message=message))
                return
            except wire.ProtocolError:
                pass  # an id the protocol refuses (empty, too long) cannot be answered: the warning names the request
        self.links.send(link, wire.agent_log_message(level="warning", message=message))

    def _kernel(self, link: Link, kernel_id: str, request_id: Optional[str] = None) -> Optional[KernelProc]:
        kernel = self.agent.kernels.get(kernel_id)
        if kernel is None:
            if request_id is not None:
                self.links.send(link, wire.request_failed_message(request_id=request_id, message=f"no kernel {kernel_id} on this agent"))
            else:
                self.links.send(link, wire.agent_log_message(level="warning", message=f"no kernel {kernel_id} on this agent"))
        return kernel

    def _state_to(self, link: Link, kernel: KernelProc, request_id: str) -> None:
        self.links.send(link, wire.kernel_state_message(kernel=self.agent.describe(kernel), request_id=request_id))

    # One method per request type, each taking the request type its entry in REQUEST_HANDLERS names.

    def _on_start_kernel(self, link: Link, request: wire.StartKernelRequest) -> None:
        agent, queue = self.agent, self.agent.queue
        kernel_id, request_id, wanted = request["kernel"], request["requestId"], request["gpus"]
        existing = agent.kernels.get(kernel_id)
        if existing is not None and existing.state != "exited":
            self.links.send(link, wire.request_failed_message(request_id=request_id, message=f"kernel {kernel_id} is already {existing.state} on this agent"))
            return
        if agent.shutting_down is not None:
            self.links.send(link, wire.request_failed_message(request_id=request_id, message=f"the agent is shutting down ({agent.shutting_down})"))
            return
        kernel = KernelProc(kernel_id, wanted, request["cwd"], dict(request["env"]), SeqBuffer(agent.settings["bufferBytes"]))
        kernel.link = link  # the starting link gets its stream until another resumes it
        if queue.must_wait(wanted):
            if wanted > queue.slots.total or agent.settings["whenFull"] == "refuse":
                self.links.send(link, wire.request_failed_message(
                    request_id=request_id, message=queue.refusal_text(wanted)[:4000], refusal=queue.wait(kernel)))
                return
            agent.kernels[kernel_id] = kernel
            queue.join(kernel)
            agent.announce(kernel, link, request_id)
            return
        agent.kernels[kernel_id] = kernel
        queue.lease_gpus(kernel)
        error = agent.start(kernel)
        if error is not None:
            del agent.kernels[kernel_id]
            self.links.send(link, wire.request_failed_message(request_id=request_id, message=error[:4000]))
            return
        agent.announce(kernel, link, request_id)

    def _on_kernel_input(self, link: Link, request: wire.KernelInputRequest) -> None:
        kernel = self._kernel(link, request["kernel"])
        if kernel is None:
            return
        if kernel.state != "running":
            self.links.send(link, wire.agent_log_message(level="warning", message=f"kernel {kernel.kernel_id} is {kernel.state}: its input was dropped"))
            return
        kernel.queue_input(request["line"])
        kernel.flush_input()
        self.agent.escalation.watch(kernel)

    def _on_resume(self, link: Link, request: wire.ResumeRequest) -> None:
        asked = request.get("requestId")
        kernel = self._kernel(link, request["kernel"], asked)
        if kernel is not None:
            if asked is not None:  # its state first, then what it buffered after afterSeq
                self._state_to(link, kernel, asked)
            self.links.resume(link, kernel, request["afterSeq"])

    def _on_describe_kernel(self, link: Link, request: wire.DescribeKernelRequest) -> None:
        kernel = self._kernel(link, request["kernel"], request["requestId"])
        if kernel is not None:
            self._state_to(link, kernel, request["requestId"])

    def _on_ack(self, link: Link, request: wire.AckRequest) -> None:
        kernel = self._kernel(link, request["kernel"])
        if kernel is not None:
            kernel.buffer.ack(request["seq"])

    def _on_interrupt(self, link: Link, request: wire.InterruptRequest) -> None:
        kernel = self._kernel(link, request["kernel"], request["requestId"])
        if kernel is not None:
            grace_ms = request["graceMs"]
            grace_s = (self.agent.settings["interruptGraceMs"] if grace_ms is None else grace_ms) / 1000
            self.agent.escalation.interrupt(link, request["requestId"], kernel, grace_s)

    def _on_dump_stacks(self, link: Link, request: wire.DumpStacksRequest) -> None:
        kernel = self._kernel(link, request["kernel"])
        if kernel is not None and kernel.state == "running":
            self.agent.escalation.dump_stacks(kernel)

    def _on_stop_kernel(self, link: Link, request: wire.StopKernelRequest) -> None:
        kernel = self._kernel(link, request["kernel"], request["requestId"])
        if kernel is None:
            return
        if kernel.state == "queued":
            self.agent.queue.leave(kernel, "removed from the GPU queue", link, request["requestId"])
        elif kernel.state == "running":
            self.agent.escalation.end_tree(kernel, "stopped by the lab", request["graceMs"] / 1000)
        else:
            self.agent.announce(kernel, link, request["requestId"])

    def _on_forget(self, link: Link, request: wire.ForgetRequest) -> None:
        forgotten = self.agent.kernels.get(request["kernel"])
        if forgotten is not None and forgotten.state == "exited":
            del self.agent.kernels[forgotten.kernel_id]

    def _on_health(self, link: Link, request: wire.HealthRequest) -> None:
        self.links.send(link, self.agent.health(request["requestId"]))

    def _on_configure(self, link: Link, request: wire.ConfigureRequest) -> None:
        notes = self.agent.adopt(request["settings"])
        self.agent.queue.advance()
        self.links.send(link, wire.configured_message(request_id=request["requestId"], settings=self.agent.settings, notes=notes))

    def _on_agent_shutdown(self, link: Link, request: wire.AgentShutdownRequest) -> None:
        self.agent.begin_shutdown("the agent was shut down by the lab")


# Every request type of the protocol → its handler, which takes that request's TypedDict (the value is
# typed loosely so one table holds them all; test_agent_dispatch.py checks that the keys are exactly
# wire.AGENT_REQUEST_TYPES and that each handler's request annotation is its key's type).
REQUEST_HANDLERS: Dict[str, Callable[[Requests, Link, Any], None]] = {
    "start_kernel": Requests._on_start_kernel,
    "kernel_input": Requests._on_kernel_input,
    "resume": Requests._on_resume,
    "describe_kernel": Requests._on_describe_kernel,
    "ack": Requests._on_ack,
    "interrupt": Requests._on_interrupt,
    "dump_stacks": Requests._on_dump_stacks,
    "stop_kernel": Requests._on_stop_kernel,
    "forget": Requests._on_forget,
    "health": Requests._on_health,
    "configure": Requests._on_configure,
    "agent_shutdown": Requests._on_agent_shutdown,
}
