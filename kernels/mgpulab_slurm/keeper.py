"""The batch script of an agent's Slurm allocation: it holds the allocation and
runs each link's bootstrap *inside this batch step*.

Why: with ProctrackType=proctrack/cgroup (the usual setting) every process of a
step is killed when the step ends, and a `srun --pty` step ends as soon as its
srun client goes away; a daemon that double-forks out of a link step dies with
the link. The batch step lives as long as its script, so the agent daemon must
be started from here. A link step runs the connector, which asks this keeper
(over a private Unix socket) to start the bootstrap in a new PTY and relays
bytes. The keeper is a child subreaper, so the daemon the bootstrap detaches is
re-parented to it: the keeper knows when the daemon is gone, and then ends (and
with it the allocation) after `idle_seconds` with no link and no daemon.

argv: runtime_dir idle_seconds
"""
import base64
import ctypes
import json
import os
import pty
import selectors
import signal
import socket
import sys
import time

from mgpulab_slurm.common import socket_path

PR_SET_CHILD_SUBREAPER = 36


class Session:
    def __init__(self, conn: socket.socket, pid: int, master: int) -> None:
        self.conn = conn
        self.pid = pid
        self.master = master


def start_session(conn: socket.socket) -> Session:
    conn.settimeout(30)
    header = b""
    while not header.endswith(b"\n"):
        chunk = conn.recv(1)
        if not chunk:
            raise ConnectionError("the connector closed before naming a command")
        header += chunk
        if len(header) > 4 * 1024 * 1024:
            raise ConnectionError("command line too long")
    argv = json.loads(base64.b64decode(header))
    if not isinstance(argv, list) or not argv or not all(isinstance(arg, str) for arg in argv):
        raise ConnectionError("bad command")
    pid, master = pty.fork()
    if pid == 0:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    conn.settimeout(None)
    return Session(conn, pid, master)


def end_session(sel: selectors.BaseSelector, sessions: "dict[int, Session]", session: Session) -> None:
    for fd in (session.conn.fileno(), session.master):
        sessions.pop(fd, None)
        try:
            sel.unregister(fd)
        except (KeyError, ValueError):
            pass
    session.conn.close()
    # Closing the PTY hangs up its session: the bootstrap sees the link drop, as over ssh.
    os.close(session.master)


def reap() -> bool:
    """Collects exited children; True while any child (a bootstrap or the adopted daemon) lives."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def main(argv: "list[str]") -> None:
    runtime_dir, idle_seconds = argv[0], float(argv[1])
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    path = socket_path(runtime_dir)
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    server.bind(path)
    os.umask(old)
    server.listen(8)
    sel = selectors.DefaultSelector()
    sel.register(server, selectors.EVENT_READ)
    sessions: "dict[int, Session]" = {}
    idle_since = time.monotonic()
    try:
        while True:
            for key, _ in sel.select(timeout=1.0):
                if key.fileobj is server:
                    conn, _ = server.accept()
                    try:
                        session = start_session(conn)
                    except (OSError, ValueError) as error:
                        conn.close()
                        sys.stderr.write("mgpulab keeper: refused a link: %s\n" % error)
                        continue
                    sessions[conn.fileno()] = session
                    sessions[session.master] = session
                    sel.register(conn, selectors.EVENT_READ)
                    sel.register(session.master, selectors.EVENT_READ)
                    continue
                fd = key.fd
                session = sessions[fd]
                try:
                    data = session.conn.recv(65536) if fd == session.conn.fileno() else os.read(fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    end_session(sel, sessions, session)
                    continue
                try:
                    if fd == session.master:
                        session.conn.sendall(data)
                    else:
                        os.write(session.master, data)
                except OSError:
                    end_session(sel, sessions, session)
            if sessions or reap():
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since > idle_seconds:
                return
    finally:
        if os.path.exists(path):
            os.unlink(path)


if __name__ == "__main__":
    main(sys.argv[1:])
