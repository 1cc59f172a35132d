"""The Python side of the kernel protocol against the fixtures the TypeScript tests also parse."""
import json
import os

import pytest

from mgpulab_kernel import executor, mime
from mgpulab_wire import frames

FIXTURES = json.load(open(os.path.join(os.path.dirname(__file__), "..", "protocol", "fixtures.json"), encoding="utf-8"))


@pytest.mark.parametrize("case", FIXTURES["encodedFrames"])
def test_encode_frame_matches_fixture(case):
    assert frames.encode_frame(case["message"], FIXTURES["nonce"]).decode("latin1") == case["frame"]


@pytest.mark.parametrize("message", FIXTURES["kernelMessages"], ids=lambda m: m["type"])
def test_every_fixture_message_encodes_to_one_ascii_frame_without_control_bytes(message):
    frame = frames.encode_frame(message, FIXTURES["nonce"])
    body = frame[len(frames.FRAME_PREFIX) + 33 : -1]
    assert frame.endswith(frames.FRAME_END)
    assert all(32 <= byte < 127 for byte in body), "a frame body must be printable ASCII"
    assert json.loads(body) == message


def test_emit_without_nonce_or_sink_writes_nothing(capfd):
    frames.emit({"type": "pong", "id": "x"})
    assert capfd.readouterr().out == ""


def test_emit_to_sink():
    seen = []
    frames.set_sink(seen.append)
    try:
        frames.emit({"type": "pong", "id": "y"})
    finally:
        frames.set_sink(None)
    assert seen == [{"type": "pong", "id": "y"}]


def test_configure_rejects_a_bad_nonce():
    with pytest.raises(ValueError):
        frames.configure("xyz")


def test_nan_is_refused_by_the_encoder():
    with pytest.raises(ValueError):
        frames.encode_frame({"type": "metric", "values": {"loss": float("nan")}}, FIXTURES["nonce"])


def test_last_expression_value_and_namespace():
    namespace = {}
    assert executor.run_code("a = 2\na * 21", namespace, "<cell [1]>") == (True, 42)
    assert executor.run_code("b = a", namespace, "<cell [2]>") == (False, None)
    assert namespace["b"] == 2


def test_mime_bundle_prefers_rich_reprs_and_survives_a_broken_one():
    class Rich:
        def __repr__(self):
            return "Rich()"

        def _repr_png_(self):
            return b"\x89PNG"

        def _repr_html_(self):
            raise RuntimeError("broken")

    bundle = mime.mime_bundle(Rich())
    assert bundle["text/plain"] == "Rich()"
    assert bundle["image/png"] == "iVBORw=="
    assert "text/html" not in bundle
