"""How a cell's end reaches the tty: writes, not messages (each write wakes whoever reads the tty:
the host agent, then the lab). The kernel's stdout here is a SOCK_SEQPACKET socket, which keeps
each write a record of its own."""
from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys

from kernel_run import FRAME, KERNELS, NONCE


def _writes(codes):
    """Each write the kernel made while running ``codes``, as the list of frame types it held, per cell id."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    lines = b"".join(base64.b64encode(json.dumps({"type": "execute", "id": f"r{i}", "code": code}).encode()) + b"\n"
                     for i, code in enumerate(codes))
    environ = {**os.environ, "PYTHONPATH": KERNELS}
    environ.pop("MPLBACKEND", None)
    boot = f"from mgpulab_kernel import kernel; kernel.main({{'nonce': '{NONCE}'}})"
    proc = subprocess.Popen([sys.executable, "-c", boot], stdin=subprocess.PIPE, stdout=theirs, env=environ)
    theirs.close()
    assert proc.stdin is not None
    proc.stdin.write(lines)
    proc.stdin.close()
    writes = {}
    console = []
    ours.settimeout(120)
    while True:
        record = ours.recv(1 << 22)
        if not record:
            break
        messages = [json.loads(m.group(1)) for m in FRAME.finditer(record)]
        console.append(FRAME.sub(b"", record).decode())
        for cell in {m.get("id") for m in messages if m.get("id")}:
            kinds = [m["type"] if m["type"] != "status" else m["state"] for m in messages if m.get("id") == cell]
            writes.setdefault(cell, []).append((len(console) - 1, kinds))
    proc.wait(60)
    ours.close()
    return writes, console


def test_a_quiet_cell_sends_its_result_with_its_reply_and_idle_in_one_write():
    writes, console = _writes([
        "1 + 1",
        "print('printed first')\n2 + 2",
        "from mgpulab_kernel import kernel\nkernel.on_cell_end(lambda *_: None)\n3 + 3",
    ])
    kinds = {cell: [each for _, each in cell_writes] for cell, cell_writes in writes.items()}
    assert kinds["r0"] == [["busy"], ["execute_result", "execute_reply", "idle"]]
    # What the cell printed (raw stdout) is written before its result.
    assert kinds["r1"] == [["busy"], ["execute_result", "execute_reply", "idle"]]
    printed = next(index for index, text in enumerate(console) if "printed first" in text)
    assert writes["r1"][0][0] < printed < writes["r1"][1][0]
    # With an end-of-cell hook, what the hook sends belongs after the result: the result is written at once.
    assert kinds["r2"] == [["busy"], ["execute_result"], ["execute_reply", "idle"]]
