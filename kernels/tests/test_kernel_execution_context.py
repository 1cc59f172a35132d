"""The kernel tells library code which cell and execution it is running (from the execute request)."""
from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NONCE = "0123456789abcdef0123456789abcdef"
SHOW = ("import json\nfrom mgpulab_kernel import kernel\nc = kernel.current_execution()\n"
        "print('CTX' + json.dumps([c.cell_id, c.execution_id, c.count]))\n")


def _run_kernel(*requests: dict) -> bytes:
    boot = f"from mgpulab_kernel import kernel; kernel.main({{'nonce': '{NONCE}'}})"
    lines = b"".join(base64.b64encode(json.dumps(r).encode()) + b"\n" for r in requests)
    env = dict(os.environ, PYTHONPATH=KERNELS)
    done = subprocess.run([sys.executable, "-c", boot], input=lines, capture_output=True, env=env, timeout=120)
    return done.stdout


def test_a_cell_sees_the_cell_and_execution_ids_its_request_carried():
    out = _run_kernel({"type": "execute", "id": "r1", "code": SHOW, "cellId": "cell-1", "executionId": "exec_a"},
                      {"type": "execute", "id": "r2", "code": SHOW},
                      {"type": "execute", "id": "r3", "code": "from mgpulab_kernel import kernel\n"
                                                              "print('BETWEEN', kernel._installed.execution.count)\n"})
    raw = re.sub(rb"\x1b\]mgl;" + NONCE.encode() + rb";.*?\x07", b"", out).decode()
    contexts = [json.loads(m) for m in re.findall(r"CTX(\[.*?\])", raw)]
    assert contexts == [["cell-1", "exec_a", 1], [None, None, 2]]  # absent ids are None, never stale
    assert "BETWEEN 3" in raw


def test_outside_a_kernel_there_is_no_execution():
    from mgpulab_kernel import kernel
    assert kernel.current_execution() is None
