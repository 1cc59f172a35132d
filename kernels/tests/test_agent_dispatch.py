"""The host agent's dispatch is one table, request type -> handler, and nothing vanishes: an unknown
or malformed request gets an error reply naming it (``request_failed`` to its requestId, else an
``agent_log`` warning), and the agent goes on serving the same link."""
import base64
import json
import typing

import pytest

from agent_harness import AgentSession
from mgpulab_agent import daemon
from mgpulab_wire import agent_protocol_generated as wire


@pytest.fixture
def agent():
    session = AgentSession()
    yield session
    session.close()


def _still_serves(link, request_id):
    link.send({"type": "health", "requestId": request_id})
    assert link.of_type("health", requestId=request_id)["type"] == "health"


def test_every_protocol_request_type_has_a_handler_taking_that_request():
    assert sorted(daemon.REQUEST_HANDLERS) == sorted(wire.AGENT_REQUEST_TYPES)
    for kind, handler in daemon.REQUEST_HANDLERS.items():
        request_type = typing.get_type_hints(handler)["request"]
        assert typing.get_args(typing.get_type_hints(request_type)["type"]) == (kind,), f"{kind} -> {handler.__name__} takes {request_type.__name__}"


def test_an_unknown_request_type_is_refused_by_name_to_its_request_id(agent):
    link, _ = agent.connect()
    link.send({"type": "reboot_host", "requestId": "r-unknown"})
    failed = link.of_type("request_failed", requestId="r-unknown")
    assert "'reboot_host' request was not carried out" in failed["message"], failed
    assert "the protocol does not define it" in failed["message"], failed
    _still_serves(link, "h1")


def test_a_malformed_request_is_refused_by_name_saying_what_is_wrong(agent):
    link, _ = agent.connect()
    link.send({"type": "describe_kernel", "requestId": "r-malformed"})  # no "kernel"
    failed = link.of_type("request_failed", requestId="r-malformed")
    assert "'describe_kernel' request was not carried out" in failed["message"], failed
    assert "kernel" in failed["message"].split("not carried out", 1)[1], failed
    link.send({"type": "stop_kernel", "requestId": "r-types", "kernel": "k1", "graceMs": "soon"})
    failed = link.of_type("request_failed", requestId="r-types")
    assert "'stop_kernel' request was not carried out" in failed["message"] and "graceMs" in failed["message"], failed
    _still_serves(link, "h2")


def test_requests_without_a_usable_id_get_a_warning_naming_them(agent):
    link, _ = agent.connect()
    link.send({"type": "ack", "kernel": "k1"})  # no seq, and acks carry no requestId
    warning = link.next(lambda m: m["type"] == "agent_log" and "'ack' request" in m["message"], what="a warning about the ack")
    assert warning["level"] == "warning" and "seq" in warning["message"], warning
    link.send({"type": "health", "requestId": "x" * 65})  # an id longer than the protocol allows cannot be answered
    warning = link.next(lambda m: m["type"] == "agent_log" and "'health' request" in m["message"], what="a warning about the health request")
    assert "was not carried out" in warning["message"], warning
    link.send_line(b"this is not base64!")
    warning = link.next(lambda m: m["type"] == "agent_log" and "a request line was not carried out" in m["message"], what="a warning about the line")
    assert "not base64 JSON" in warning["message"], warning
    link.send_line(base64.b64encode(json.dumps(["start_kernel"]).encode()))
    warning = link.next(lambda m: m["type"] == "agent_log" and "a request with no type" in m["message"], what="a warning about the list")
    assert "the protocol does not define it" in warning["message"], warning
    _still_serves(link, "h3")
