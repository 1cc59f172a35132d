"""The command of an agent link's `srun --pty` step: asks the allocation's keeper
(keeper.py) to run the bootstrap in its batch step, and relays the bytes between
this step's tty and that PTY until either side closes.

argv: runtime_dir wait_seconds command...
"""
import base64
import json
import os
import selectors
import socket
import sys
import termios
import time
import tty

from mgpulab_slurm.common import socket_path


def connect(path: str, wait_seconds: float) -> socket.socket:
    deadline = time.monotonic() + wait_seconds
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            if time.monotonic() > deadline:
                raise SystemExit("mgpulab: the agent keeper of this Slurm job did not start (%s)" % path)
            # The keeper is the job's batch script: it may still be starting.
            time.sleep(0.2)


def relay(sock: socket.socket) -> None:
    sel = selectors.DefaultSelector()
    sel.register(0, selectors.EVENT_READ)
    sel.register(sock, selectors.EVENT_READ)
    while True:
        for key, _ in sel.select():
            if key.fileobj is sock:
                data = sock.recv(65536)
                if not data:
                    return
                view = memoryview(data)
                while view:
                    view = view[os.write(1, view):]
            else:
                data = os.read(0, 65536)
                if not data:
                    return
                sock.sendall(data)


def main(argv: "list[str]") -> None:
    runtime_dir, wait_seconds, command = argv[0], float(argv[1]), argv[2:]
    sock = connect(socket_path(runtime_dir), wait_seconds)
    sock.sendall(base64.b64encode(json.dumps(command).encode()) + b"\n")
    saved = termios.tcgetattr(0) if os.isatty(0) else None
    if saved is not None:
        # This tty is only a pipe now: the keeper's PTY does the terminal work.
        tty.setraw(0)
    try:
        relay(sock)
    finally:
        if saved is not None:
            termios.tcsetattr(0, termios.TCSADRAIN, saved)


if __name__ == "__main__":
    main(sys.argv[1:])
