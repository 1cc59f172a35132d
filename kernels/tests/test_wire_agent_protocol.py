"""The generated Python half of the host agent protocol against the fixtures the TypeScript
tests also parse (kernels/protocol/agent-fixtures.json): every message the agent builds
passes, every request the lab sends is read, and what the lab's schema refuses Python
refuses too, naming the field."""
import copy
import json
import os
import re

import pytest

from mgpulab_wire import agent_protocol_generated as wire

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = json.load(open(os.path.join(KERNELS, "protocol", "agent-fixtures.json"), encoding="utf-8"))


def _snake(key):
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key).lower()


@pytest.mark.parametrize("message", FIXTURES["agentMessages"], ids=lambda m: m["type"])
def test_every_fixture_message_passes_the_generated_checks(message):
    assert wire.check_agent_message(message) == message


@pytest.mark.parametrize("message", FIXTURES["agentMessages"], ids=lambda m: m["type"])
def test_every_message_type_has_a_constructor_that_builds_its_fixture(message):
    constructor = getattr(wire, f"{message['type']}_message")
    assert constructor(**{_snake(key): value for key, value in message.items() if key != "type"}) == message


@pytest.mark.parametrize("request_", FIXTURES["agentRequests"], ids=lambda r: r["type"])
def test_every_fixture_request_is_read(request_):
    assert wire.read_agent_request(request_) == request_


def test_the_fixtures_cover_every_type_and_the_boot_payload_is_read():
    assert sorted({m["type"] for m in FIXTURES["agentMessages"]}) == sorted(wire.AGENT_MESSAGE_TYPES)
    assert sorted({r["type"] for r in FIXTURES["agentRequests"]}) == sorted(wire.AGENT_REQUEST_TYPES)
    assert wire.check_agent_boot(FIXTURES["agentBoot"]) == FIXTURES["agentBoot"]
    assert wire.check_agent_kernel_state("queued") == "queued"
    with pytest.raises(wire.ProtocolError, match="must be one of 'queued', 'running', 'exited'"):
        wire.check_agent_kernel_state("sleeping")


@pytest.mark.parametrize("case", FIXTURES["refusedAgentMessages"], ids=lambda c: c["why"])
def test_what_the_lab_refuses_the_agent_refuses_naming_the_field(case):
    with pytest.raises(wire.ProtocolError) as refused:
        wire.check_agent_message(case["message"])
    field = re.sub(r"\.(\d+)(?=\.|$)", r"[\1]", "." + case["field"])
    assert field in str(refused.value), str(refused.value)


@pytest.mark.parametrize("case", FIXTURES["refusedAgentRequests"], ids=lambda c: c["why"])
def test_a_request_the_lab_could_not_send_is_refused_naming_the_field(case):
    with pytest.raises(wire.ProtocolError) as refused:
        wire.read_agent_request(case["request"])
    assert case["field"] in str(refused.value), str(refused.value)


@pytest.mark.parametrize("case", FIXTURES["refusedAgentBoots"], ids=lambda c: c["why"])
def test_a_bad_boot_payload_is_refused_naming_the_field(case):
    boot = copy.deepcopy(FIXTURES["agentBoot"])
    boot.update(case["boot"])
    with pytest.raises(wire.ProtocolError) as refused:
        wire.check_agent_boot(boot)
    assert f".{case['field']}" in str(refused.value), str(refused.value)


def test_an_unknown_request_type_is_refused_with_the_types_named():
    with pytest.raises(wire.ProtocolError, match="not an agent request: its type must be one of start_kernel, kernel_input"):
        wire.read_agent_request({"type": "explode"})


def test_constants_are_the_protocols():
    assert wire.AGENT_BOOT_READY_MARKER == "\x1b]mgl-boot;agent\x07"
    assert wire.AGENT_ID_PATTERN.search("lab-1_host") and not wire.AGENT_ID_PATTERN.search("a/b")
    assert wire.AGENT_ID_PATTERN.search("ok\n") is None
