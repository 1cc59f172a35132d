"""An interrupt reaches the cell whichever thread of the kernel the operating system gives the SIGINT to.

Linux hands a process's signal to one of its threads, usually the main one; under load it can pick another
(one that has no signal pending). Only that thread is woken, so a cell asleep in the main thread never saw
the interrupt, and the user had to restart. Here the SIGINT is sent to a thread of the cell's own on purpose
(tgkill): the cell must still end "interrupted", and the kernel go on.
"""
from __future__ import annotations

import base64
import ctypes
import json
import os
import re
import select
import signal
import subprocess
import sys
import time

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NONCE = "0123456789abcdef0123456789abcdef"
FRAME = re.compile(rb"\x1b\]mgl;" + NONCE.encode() + rb";(.*?)\x07", re.S)
SYS_TGKILL = 234  # x86_64; the test machines are


def _tgkill(pid: int, tid: int, signum: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(SYS_TGKILL, pid, tid, signum) != 0:
        raise OSError(ctypes.get_errno(), "tgkill")


class Kernel:
    def __init__(self) -> None:
        boot = f"from mgpulab_kernel import kernel; kernel.main({{'nonce': '{NONCE}'}})"
        self.proc = subprocess.Popen([sys.executable, "-c", boot], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env={**os.environ, "PYTHONPATH": KERNELS})
        self.buffer = b""
        self.console = ""
        self.messages = []

    def send(self, request: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(base64.b64encode(json.dumps(request).encode()) + b"\n")
        self.proc.stdin.flush()

    def _read(self, left: float) -> None:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], left)
        if not ready:
            return
        self.buffer += os.read(self.proc.stdout.fileno(), 65536)
        end = 0
        for match in FRAME.finditer(self.buffer):
            self.console += self.buffer[end:match.start()].decode(errors="replace")
            self.messages.append(json.loads(match.group(1)))
            end = match.end()
        self.buffer = self.buffer[end:]
        if b"\x1b" not in self.buffer:  # no frame begun: the rest is console text (stdout is raw)
            self.console += self.buffer.decode(errors="replace")
            self.buffer = b""

    def wait_for(self, predicate, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for message in self.messages:
                if predicate(message):
                    self.messages.remove(message)
                    return message
            left = deadline - time.monotonic()
            assert left > 0, f"timed out; saw {self.messages[-5:]}"
            self._read(left)

    def wait_for_console(self, pattern: str, timeout: float = 30.0) -> "re.Match[str]":
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.console)
            if found:
                return found
            left = deadline - time.monotonic()
            assert left > 0, f"timed out waiting for {pattern!r}; console {self.console[-300:]!r}"
            self._read(left)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def test_a_sigint_given_to_another_thread_still_interrupts_the_cell():
    kernel = Kernel()
    try:
        kernel.send({"type": "execute", "id": "a", "code": (
            "import threading, time\n"
            "parked = threading.Event()\n"
            "helper = threading.Thread(target=parked.wait, daemon=True)\n"
            "helper.start()\n"
            "print('TID', helper.native_id, flush=True)\n"
            "time.sleep(1000)")})
        tid = int(kernel.wait_for_console(r"TID (\d+)").group(1))
        time.sleep(0.2)  # let the cell reach time.sleep (a signal before it would still be applied; this is the hard case)
        _tgkill(kernel.proc.pid, tid, signal.SIGINT)
        reply = kernel.wait_for(lambda m: m["type"] == "execute_reply" and m["id"] == "a", timeout=15)
        assert reply["status"] == "interrupted"
        kernel.send({"type": "execute", "id": "b", "code": "1 + 1"})
        result = kernel.wait_for(lambda m: m["type"] == "execute_result" and m["id"] == "b")
        assert result["data"]["text/plain"] == "2"
        # the bridge's own signal was not taken for a second interrupt: nothing is pending for the next cell
        kernel.send({"type": "execute", "id": "c", "code": "import time; time.sleep(0.5); 'slept'"})
        done = kernel.wait_for(lambda m: m["type"] == "execute_reply" and m["id"] == "c")
        assert done["status"] == "ok"
    finally:
        kernel.close()
