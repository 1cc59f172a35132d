"""Runs a real kernel process on a list of requests and splits what it wrote
into protocol messages and raw console text (for the kernel-habit tests)."""
from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Union

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NONCE = "0123456789abcdef0123456789abcdef"
FRAME = re.compile(rb"\x1b\]mgl;" + NONCE.encode() + rb";(.*?)\x07", re.S)


@dataclass
class Cell:
    """What one execute request produced: its messages and the console text written while it ran."""
    messages: List[Dict[str, Any]] = field(default_factory=list)
    console: str = ""

    def of(self, kind: str) -> List[Dict[str, Any]]:
        return [m for m in self.messages if m["type"] == kind]

    @property
    def status(self) -> str:
        return self.of("execute_reply")[0]["status"]

    @property
    def text(self) -> str:
        """Console text and stream frames together, in order of arrival (stdout is raw, stderr framed)."""
        return self.console


def run_kernel(requests: List[Union[str, Dict[str, Any]]], without: str = "", env: Dict[str, str] | None = None,
               cwd: str | None = None) -> List[Cell]:
    """One Cell per request (a str is an execute request for that code)."""
    full = [r if isinstance(r, dict) else {"type": "execute", "id": f"r{i}", "code": r} for i, r in enumerate(requests)]
    boot = f"from mgpulab_kernel import kernel; kernel.main({{'nonce': '{NONCE}'}})"
    lines = b"".join(base64.b64encode(json.dumps(r).encode()) + b"\n" for r in full)
    environ = {**os.environ, "PYTHONPATH": KERNELS, "MGPULAB_KERNEL_WITHOUT": without, **(env or {})}
    environ.pop("MPLBACKEND", None)
    done = subprocess.run([sys.executable, "-c", boot], input=lines, capture_output=True, env=environ, timeout=180, cwd=cwd)
    by_id = {r["id"]: Cell() for r in full if "id" in r}
    current: Cell | None = None
    position = 0
    out = done.stdout
    for match in FRAME.finditer(out):
        raw = out[position:match.start()].decode("utf-8", "replace")
        position = match.end()
        if current is not None:
            current.console += raw
        message = json.loads(match.group(1))
        target = by_id.get(message.get("id", ""))
        if target is not None:
            target.messages.append(message)
            if message["type"] == "stream":
                target.console += message["text"]
            if message["type"] == "status":
                current = target if message["state"] == "busy" else None
    return [by_id[r["id"]] for r in full if "id" in r]
