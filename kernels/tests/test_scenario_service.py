"""The long-lived catalog service: JSON lines in, JSON lines out, nothing can stop it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

import mgpulab_scenarios as sc

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

class Service:
    def __init__(self, *args: str) -> None:
        env = dict(os.environ, PYTHONPATH=KERNELS, PYTHONDONTWRITEBYTECODE="1")
        self.proc = subprocess.Popen([sys.executable, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.next_id = 0

    def send_line(self, line: bytes) -> dict:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        assert reply, self.proc.stderr.read().decode()[-2000:]
        return json.loads(reply)  # every stdout line is one JSON reply

    def request(self, op: str, **fields) -> dict:
        self.next_id += 1
        reply = self.send_line(json.dumps({"id": self.next_id, "op": op, **fields}).encode())
        assert reply["id"] == self.next_id
        return reply

    def close(self) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code

@pytest.fixture(scope="module")
def service():
    svc = Service("-m", "mgpulab_scenarios.service")
    yield svc
    assert svc.close() == 0  # EOF on stdin: exit 0


def _fails(reply: dict, kind: str, *words: str) -> None:
    assert reply["ok"] is False and reply["kind"] == kind, reply
    assert set(reply) == {"id", "ok", "kind", "error"}
    assert "\n" not in reply["error"] and len(reply["error"]) <= 500
    for word in words:
        assert word in reply["error"], reply["error"]


def test_list_notebook_render_describe(service):
    listed = service.request("list")
    assert listed["ok"] and [s["id"] for s in listed["result"]] == list(sc.IDS)
    assert all(set(s) == {"id", "title", "source", "sourceTitle", "summary"} for s in listed["result"])

    cells = service.request("notebook", scenario="dp-basics", params={"devices": 2})["result"]
    assert cells == json.loads(json.dumps(sc.notebook("dp-basics", {"devices": 2})))
    code = [c for c in cells if c["kind"] == "code"]
    assert code[-1]["template"]["id"] == "dp-basics/verdicts"
    assert code[0]["template"]["question"]["id"] == "dp-basics/split"
    assert all(c["template"]["parameters"]["devices"] == 2 for c in code)

    rendered = service.request("render", templateId="dp-basics/scaling", params={"devices": 3, "lr": 0.1})
    assert rendered["ok"] and set(rendered["result"]) == {"source", "template"}
    assert rendered["result"] == json.loads(json.dumps(sc.render_template("dp-basics/scaling",
                                                                          {"devices": 3, "lr": 0.1})))
    assert set(rendered["result"]["template"]) == {"id", "parameters", "fields", "question"}

    verdicts = service.request("render", templateId="hangs/verdicts", params={})
    assert verdicts["result"]["source"].startswith("import mgpulab_scenarios\n")
    assert verdicts["result"]["template"]["question"] is None

    described = service.request("describe", scenario="hangs", params={"fault": "none"})
    assert described["ok"] and described["result"]["id"] == "hangs"
    assert next(s for s in described["result"]["steps"] if s["id"] == "collective-fault")["question"] == \
        "With fault=none, what happens?"


def test_values_arrive_as_json_types_and_are_checked_strictly(service):
    assert service.request("render", templateId="dp-basics/split", params={"devices": 2.0})["ok"]  # integral float
    assert service.request("render", templateId="dp-basics/split", params={"lr": 1})["ok"]  # an int for a float
    _fails(service.request("render", templateId="dp-basics/split", params={"devices": "3"}), "parameter",
           "'devices' must be an int in [1, 8]", "'3'")
    _fails(service.request("render", templateId="dp-basics/split", params={"devices": True}), "parameter")
    _fails(service.request("render", templateId="dp-basics/split", params={"devices": 2.5}), "parameter")
    _fails(service.request("render", templateId="dp-basics/split", params={"compare_ddp": "true"}), "parameter")
    _fails(service.request("render", templateId="dp-basics/split", params={"devices": [2]}), "parameter")
    _fails(service.request("render", templateId="dp-basics/split", params={"devices": {"$gt": 1}}), "parameter")
    _fails(service.request("render", templateId="hangs/fault", params={"fault": "__import__('os')"}), "parameter",
           "'fault' must be one of")
    _fails(service.request("render", templateId="dp-basics/split", params={"devices": 10 ** 30}), "parameter")
    _fails(service.request("render", templateId="dp-basics/split", params={"lr": 1e308 * 10}), "parameter")
    _fails(service.request("render", templateId="dp-basics/split", params={"devices": 0}), "parameter")
    from mgpulab_scenarios.core import device_limit
    if device_limit() < 8:  # a host that serves 8 devices (GPUs, or cores for the emulation) has none to refuse
        _fails(service.request("render", templateId="dp-basics/split", params={"devices": device_limit() + 1}),
               "parameter", "exceeds the devices available here")  # cross-parameter limit
    _fails(service.request("notebook", scenario="dp-basics", params={"__import__('os')": 1}), "parameter",
           "unknown parameter")
    long_value = "x" * 100_000
    _fails(service.request("render", templateId="hangs/fault", params={"fault": long_value}), "parameter")


def test_nan_and_infinity_tokens_are_refused(service):
    for token in (b"NaN", b"Infinity", b"-Infinity"):
        reply = service.send_line(b'{"id": 7, "op": "render", "templateId": "dp-basics/split", "params": {"lr": '
                                  + token + b"}}")
        _fails(reply, "parameter", "'lr' must be a float")
        reply = service.send_line(b'{"id": 8, "op": "render", "templateId": "dp-basics/split", "params": '
                                  b'{"devices": ' + token + b"}}")
        _fails(reply, "parameter", "'devices'")


def test_unknown_things_and_malformed_requests(service):
    _fails(service.request("render", templateId="dp-basics/nope"), "unknown", "has no cell 'nope'")
    _fails(service.request("render", templateId="nope/split"), "unknown", "unknown scenario 'nope'")
    _fails(service.request("render", templateId="dp-basics"), "unknown", "'<scenario>/<cell>'")
    _fails(service.request("notebook", scenario="../../etc/passwd"), "unknown")
    _fails(service.request("describe", scenario="x" * 10_000), "unknown")
    _fails(service.request("explode"), "request", "unknown op 'explode'")
    _fails(service.request("render"), "request", "missing 'templateId'")
    _fails(service.request("render", templateId=5), "request", "'templateId' must be")
    _fails(service.request("notebook", scenario="dp-basics", params=[1, 2]), "request", "'params' must be an object")
    for line, words in ((b"garbage", "not valid JSON"), (b"[1, 2]", "must be a JSON object"),
                        (b'{"op": "list"}', "'id' must be an integer"), (b'{"id": "1", "op": "list"}', "'id'"),
                        (b'{"id": true, "op": "list"}', "'id'"), (b"\xff\xfe", "not UTF-8"),
                        (b"[" * 100_000, "not valid JSON"), (b'{"id": 1, "op": "list"', "not valid JSON"),
                        (b'{"id": ' + b"9" * 5000 + b', "op": "list"}', "not valid JSON")):
        reply = service.send_line(line)
        _fails(reply, "request", words)
        assert reply["id"] is None
    reply = service.send_line(b'{"id": 41, "op": "nope"}')
    assert reply["id"] == 41  # the id is echoed once it could be read


def test_an_oversized_line_is_refused_and_the_next_one_served(service):
    line = json.dumps({"id": 1, "op": "list", "pad": "x" * (1 << 20)}).encode()
    _fails(service.send_line(line), "request", "longer than 1048576 bytes")
    assert service.request("list")["ok"]


def test_renders_are_fast_once_warm(service):
    service.request("list")
    t0 = time.perf_counter()
    for i in range(20):
        assert service.request("render", templateId="dp-basics/scaling", params={"devices": 1 + i % 4})["ok"]
    assert (time.perf_counter() - t0) / 20 < 0.05


def test_anything_printed_goes_to_stderr_and_internal_errors_are_replies():
    # a handler that prints (Python and fd level) and one that crashes
    code = ("import os, sys\n"
            "import mgpulab_scenarios.service as s\n"
            "original = s.HANDLERS['list']\n"
            "def noisy(request):\n"
            "    print('python noise'); sys.stdout.flush(); os.write(1, b'fd noise\\n')\n"
            "    return original(request)\n"
            "def crash(request):\n"
            "    raise ZeroDivisionError('bug')\n"
            "s.HANDLERS['list'] = noisy\n"
            "s.HANDLERS['describe'] = crash\n"
            "sys.exit(s.main())\n")
    svc = Service("-c", code)
    try:
        assert svc.request("list")["ok"]
        _fails(svc.request("describe", scenario="hangs"), "internal", "ZeroDivisionError: bug")
        assert svc.request("list")["ok"]
    finally:
        svc.proc.stdin.close()
        assert svc.proc.wait(timeout=30) == 0
        rest = svc.proc.stdout.read()
        errors = svc.proc.stderr.read()
        svc.proc.stdout.close()
        svc.proc.stderr.close()
    assert rest == b""
    assert b"python noise" in errors and b"fd noise" in errors and b"ZeroDivisionError" in errors
