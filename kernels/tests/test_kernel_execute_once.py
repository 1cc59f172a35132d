"""An execute the lab sends again (its link to the host dropped before the kernel said it started the
cell) runs once: the kernel remembers the execute ids it received."""
from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NONCE = "0123456789abcdef0123456789abcdef"
FRAME = re.compile(rb"\x1b\]mgl;" + NONCE.encode() + rb";(.*?)\x07", re.S)


def _run_kernel(*requests: dict) -> tuple[str, list[dict]]:
    boot = f"from mgpulab_kernel import kernel; kernel.main({{'nonce': '{NONCE}'}})"
    lines = b"".join(base64.b64encode(json.dumps(r).encode()) + b"\n" for r in requests)
    env = dict(os.environ, PYTHONPATH=KERNELS)
    out = subprocess.run([sys.executable, "-c", boot], input=lines, capture_output=True, env=env, timeout=120).stdout
    return FRAME.sub(b"", out).decode(), [json.loads(m) for m in FRAME.findall(out)]


def test_an_execute_received_twice_runs_once():
    first = {"type": "execute", "id": "e1", "code": "counter = globals().get('counter', 0) + 1\nprint('ran', counter)"}
    raw, messages = _run_kernel(first, dict(first), {"type": "execute", "id": "e2", "code": "print('then', counter)"})
    assert raw.count("ran 1") == 1 and "ran 2" not in raw
    assert "then 1" in raw
    assert [m["id"] for m in messages if m["type"] == "execute_reply"] == ["e1", "e2"]
    logs = [m["message"] for m in messages if m["type"] == "kernel_log"]
    assert any("e1 received again" in log for log in logs), logs


def test_distinct_executes_of_the_same_code_each_run():
    raw, messages = _run_kernel(*({"type": "execute", "id": f"e{i}", "code": "print('same code')"} for i in range(3)))
    assert raw.count("same code") == 3
    assert len([m for m in messages if m["type"] == "execute_reply"]) == 3
