"""The generated Python half of the kernel protocol: the fixtures both ends parse, every
limit the server enforces refused here first with the field and the limit named, and
``lab.log`` refusing in the cell what the server would drop."""
import base64
import json
import os
import re
import subprocess
import sys

import pytest

import mgpulab as lab
from mgpulab import metrics
from mgpulab_wire import frames
from mgpulab_wire import protocol_generated as wire

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = json.load(open(os.path.join(KERNELS, "protocol", "fixtures.json"), encoding="utf-8"))
NONCE = FIXTURES["nonce"]


def _snake(key):
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key).lower()


@pytest.fixture
def sent():
    messages = []
    frames.set_sink(messages.append)
    yield messages
    frames.set_sink(None)


@pytest.mark.parametrize("message", FIXTURES["kernelMessages"], ids=lambda m: m["type"])
def test_every_fixture_message_passes_the_generated_checks(message):
    assert wire.check_kernel_message(message) == message


@pytest.mark.parametrize("message", FIXTURES["kernelMessages"], ids=lambda m: m["type"])
def test_every_message_type_has_a_constructor_that_builds_its_fixture(message):
    constructor = getattr(wire, f"{message['type']}_message")
    built = constructor(**{_snake(key): value for key, value in message.items() if key != "type"})
    assert built == message


def test_the_fixtures_cover_every_message_type_and_request_type():
    assert sorted({m["type"] for m in FIXTURES["kernelMessages"]}) == sorted(wire.KERNEL_MESSAGE_TYPES)
    assert sorted({r["type"] for r in FIXTURES["kernelRequests"]}) == sorted(wire.KERNEL_REQUEST_TYPES)


@pytest.mark.parametrize("request_", FIXTURES["kernelRequests"], ids=lambda r: r["type"])
def test_every_fixture_request_is_read(request_):
    assert wire.read_kernel_request(request_) == request_


def test_a_request_outside_the_protocol_is_refused_with_the_reason():
    with pytest.raises(wire.ProtocolError, match="type must be one of execute, ping, complete, inspect, stacks, preload, shutdown, got 'explode'"):
        wire.read_kernel_request({"type": "explode"})
    with pytest.raises(wire.ProtocolError, match=r"execute request is missing 'code'"):
        wire.read_kernel_request({"type": "execute", "id": "c1"})
    with pytest.raises(wire.ProtocolError, match=r"execute request\.code must be a string, got int"):
        wire.read_kernel_request({"type": "execute", "id": "c1", "code": 5})
    with pytest.raises(wire.ProtocolError):
        wire.read_kernel_request(["execute"])
    # like the server's schema, a request's unknown fields are ignored (not an error, not kept)
    assert wire.read_kernel_request({"type": "ping", "id": "p", "extra": 1}) == {"type": "ping", "id": "p"}


@pytest.mark.parametrize("case", FIXTURES["refusedKernelMessages"], ids=lambda c: c["why"])
def test_what_the_server_refuses_python_refuses_naming_the_field(case):
    with pytest.raises(wire.ProtocolError) as refused:
        wire.check_kernel_message(case["message"])
    assert f".{case['field']}" in str(refused.value), str(refused.value)
    assert isinstance(refused.value, ValueError)


def test_constants_are_the_protocols():
    assert wire.NONCE_HEX_LENGTH == len(NONCE)
    assert wire.MAX_METRIC_STEP == 2 ** 31 - 1 and wire.MAX_METRIC_TAG_CHARS == 64
    assert wire.INTERRUPT_BYTE == "\x03" and wire.DUMP_STACKS_BYTE == "\x1c"
    assert frames.FRAME_PREFIX == b"\x1b]mgl;" and frames.FRAME_END == b"\x07"
    assert wire.METRIC_NAME_PATTERN.search("phase/fwd_ms")
    # JavaScript's $ ends the string; the generated pattern must not accept a final newline as Python's $ would
    assert wire.METRIC_NAME_PATTERN.search("loss\n") is None


METRIC = dict(rank=0, step=0, values={"loss": 1.0})


@pytest.mark.parametrize("changes, words", [
    (dict(run_id="r" * 65), "metric message: run_id must be at most 64 characters, got 65"),
    (dict(step=2 ** 31), "metric message: step must be <= 2147483647, got 2147483648"),
    (dict(step=-1), "metric message: step must be >= 0, got -1"),
    (dict(rank=2 ** 31), "metric message: rank must be <= 2147483647"),
    (dict(step=True), "metric message: step must be an integer, got bool"),
    (dict(step=1.0), "metric message: step must be an integer, got float"),
    (dict(values={"1loss": 1.0}), r"metric message: values key must match \^\[A-Za-z_\]"),
    (dict(values={"n" * 65: 1.0}), "metric message: values key must match"),
    (dict(values={"loss": float("nan")}), r"metric message: values\['loss'\] must be a finite number"),
    (dict(values={"loss": "1"}), r"metric message: values\['loss'\] must be a number, got str"),
    (dict(values=[("loss", 1.0)]), "metric message: values must be a dict, got list"),
])
def test_metric_constructor_names_the_field_and_the_limit(changes, words):
    with pytest.raises(ValueError, match=words):
        wire.metric_message(**{**METRIC, **changes})


def test_string_limits_count_characters_as_the_server_does():
    # zod 4 measures strings in code points, as len() does: 64 emoji fit, 65 do not
    assert wire.metric_message(**METRIC, run_id="\U0001F600" * 64)["runId"] == "\U0001F600" * 64
    with pytest.raises(ValueError, match="at most 64 characters, got 65"):
        wire.metric_message(**METRIC, run_id="\U0001F600" * 65)


def _plan(**changes):
    plan = json.loads(json.dumps(next(m for m in FIXTURES["kernelMessages"] if m["type"] == "device_plan")["plan"]))
    plan.update(changes)
    return plan


@pytest.mark.parametrize("plan, words", [
    (_plan(count=0), r"device_plan message: plan\.count must be >= 1, got 0"),
    (_plan(count=4097), r"plan\.count must be <= 4096"),
    (_plan(hostCores=0), r"plan\.hostCores must be >= 1"),
    (_plan(kind="tpu"), r"plan\.kind must be one of 'cuda', 'cuda-shared', 'cpu-emulated', got 'tpu'"),
    (_plan(backend="mpi"), r"plan\.backend must be one of 'gloo', 'nccl'"),
    (_plan(label="x" * 1001), r"plan\.label must be at most 1000 characters, got 1001"),
    (_plan(devices=["cpu:0"] * 4097), r"plan\.devices must have at most 4096 items, got 4097"),
    (_plan(names=["ok", "n" * 1001]), r"plan\.names\[1\] must be at most 1000 characters"),
    (_plan(streams="yes"), r"plan\.streams must be true or false, got str"),
    (_plan(extra=1), r"device_plan message: plan has unknown field\(s\) 'extra'"),
    ({k: v for k, v in _plan().items() if k != "reason"}, r"device_plan message: plan is missing 'reason'"),
])
def test_device_plan_constructor_names_the_field_and_the_limit(plan, words):
    with pytest.raises(ValueError, match=words):
        wire.device_plan_message(plan=plan)


@pytest.mark.parametrize("build, words", [
    (lambda: wire.status_message(id="c", state="sleeping"), "status message: state must be one of 'busy', 'idle'"),
    (lambda: wire.stream_message(id="c", name="stdin", text=""), "stream message: name must be one of"),
    (lambda: wire.execute_reply_message(id="c", count=1, status="ok", duration_ms=-1.0),
     "execute_reply message: duration_ms must be >= 0"),
    (lambda: wire.execute_reply_message(id="c", count=1, status="ok", duration_ms=float("inf")),
     "duration_ms must be a finite number"),
    (lambda: wire.hello_message(protocol=1, pid=1, hostname="h", python="3", executable="p", torch=None,
                                cuda_devices=-1), "hello message: cuda_devices must be >= 0"),
    (lambda: wire.kernel_log_message(level="debug", message="m"), "kernel_log message: level must be one of"),
    (lambda: wire.display_data_message(id="c", data={"text/plain": 5}),
     r"display_data message: data\['text/plain'\] must be a string, got int"),
    (lambda: wire.error_message(id="c", ename="E", evalue="v", traceback=["ok", None]),
     r"error message: traceback\[1\] must be a string, got None"),
    (lambda: wire.stacks_message(id="w", processes=[{"label": "k", "pid": 1, "alive": 1, "stack": ""}]),
     r"stacks message: processes\[0\]\.alive must be true or false, got int"),
])
def test_every_constructor_checks_its_fields(build, words):
    with pytest.raises(ValueError, match=words):
        build()


def test_constructors_return_a_copy_of_containers():
    values = {"loss": 1.0}
    message = wire.metric_message(rank=0, step=0, values=values)
    values["loss"] = 2.0
    assert message["values"] == {"loss": 1.0}


# -- the toolkit refuses, in the cell, what the server would drop ---------------------------------

def test_lab_log_with_a_too_long_run_id_raises_and_sends_nothing(sent):
    with pytest.raises(ValueError, match="run_id must be at most 64 characters, got 100"):
        lab.log(1, loss=0.5, run_id="r" * 100)
    assert sent == []


def test_metric_message_past_the_step_limit_raises():
    with pytest.raises(ValueError, match=r"step must be <= 2147483647, got 2147483648"):
        metrics.metric_message(2 ** 31, {"loss": 1.0}, rank=0)
    with pytest.raises(ValueError, match="run_id must be at most 64 characters, got 100"):
        metrics.metric_message(0, {"loss": 1.0}, rank=0, run_id="r" * 100)


def test_a_run_tag_the_lab_cannot_carry_is_refused_where_it_is_set():
    with pytest.raises(ValueError, match="run_id must be at most 64 characters, got 65"):
        lab.set_run_id("r" * 65)
    assert metrics.current_run_id() is None
    with pytest.raises(ValueError, match="run_id must be at most 64 characters"):
        lab.StepTimer(None, run_id="r" * 65, emit=False, device="cpu")
    with pytest.raises(ValueError, match="run_id must be at most 64 characters"):
        lab.launch(print, 1, run_id="r" * 65)


def _run_in_kernel(code):
    """Run ``code`` as one cell in a real kernel process; its frames, decoded."""
    boot = f"from mgpulab_kernel import kernel; kernel.main({{'nonce': '{NONCE}'}})"
    request = base64.b64encode(json.dumps({"type": "execute", "id": "c1", "code": code}).encode())
    env = dict(os.environ, PYTHONPATH=KERNELS)
    done = subprocess.run([sys.executable, "-c", boot], input=request + b"\n", capture_output=True, env=env,
                          timeout=120)
    pattern = re.compile(rb"\x1b\]mgl;" + NONCE.encode() + rb";(.*?)\x07")
    return [json.loads(m.group(1)) for m in pattern.finditer(done.stdout)]


def test_lab_log_with_a_too_long_run_id_raises_in_the_cell():
    sent = _run_in_kernel("import mgpulab as lab\n"
                          "lab.log(0, loss=1.0, run_id='ok')\n"
                          "lab.log(1, loss=0.5, run_id='r' * 100)\n"
                          "print('not reached')\n")
    kinds = [m["type"] for m in sent]
    assert [m["step"] for m in sent if m["type"] == "metric"] == [0], "the bad point is never sent"
    errors = [m for m in sent if m["type"] == "error"]
    assert len(errors) == 1 and errors[0]["id"] == "c1"
    assert "run_id must be at most 64 characters, got 100" in errors[0]["evalue"]
    assert any("lab.log(1, loss=0.5" in line for line in errors[0]["traceback"]), "the traceback points at the cell"
    reply = next(m for m in sent if m["type"] == "execute_reply")
    assert reply["status"] == "error" and kinds[-1] == "status"


def test_a_tap_sees_every_message_sent_whether_it_is_written_captured_or_dropped():
    seen, captured = [], []
    frames.add_tap(seen.append)
    try:
        pong = wire.pong_message(id="p-1")
        frames.emit(pong)  # no sink, no nonce here: dropped, but seen
        frames.set_sink(captured.append)
        try:
            frames.emit(wire.pong_message(id="p-2"))
        finally:
            frames.set_sink(None)
    finally:
        frames.remove_tap(seen.append)
    frames.emit(wire.pong_message(id="p-3"))  # after removal: not seen
    frames.remove_tap(seen.append)  # removing twice is harmless
    assert [m["id"] for m in seen] == ["p-1", "p-2"] and [m["id"] for m in captured] == ["p-2"]
