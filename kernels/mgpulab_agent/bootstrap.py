# The bootstrap of the host agent, sent as `python3 -u -c <this text>` over the link PTY
# (ssh -tt, srun --pty, or a local PTY). Self-contained, stdlib only, no single quotes:
# it runs before any package is unpacked and travels inside a shell command.
# It prints the ready marker, reads one base64(JSON) boot line, makes sure the agent
# daemon for boot.agentId runs on this host (starting it detached if not), then relays
# bytes between the tty and the daemon socket until either side closes (or, where stdin and
# stdout are sockets, hands them to the daemon and waits for the link to end).
# On failure: one line "mgpulab agent: ..." on stderr, exit status 2.
import array, base64, fcntl, json, os, re, select, signal, socket, stat, sys, tempfile
from typing import Any, Dict, NoReturn, Optional, Tuple
MARKER = b"\x1b]mgl-boot;agent\x07"
DIRECT = b"direct\n"
def fail(message: str) -> NoReturn:
    os.write(2, ("mgpulab agent: " + message + "\n").encode("utf-8", "replace"))
    os._exit(2)
def raw_tty() -> None:
    import termios
    a = termios.tcgetattr(0)
    a[0] &= ~(termios.ICRNL | termios.INLCR | termios.IGNCR | termios.IXON | termios.IXOFF | termios.ISTRIP)
    a[1] &= ~termios.OPOST
    # No ISIG (unlike a kernel tty, mgpulab_wire/tty.py): interrupt is a message on this link,
    # and a stray 0x03 must reach the daemon as a byte, not stop the relay.
    a[3] &= ~(termios.ICANON | termios.ECHO | termios.ECHONL | termios.IEXTEN | termios.ISIG)
    a[6][termios.VMIN] = 1
    a[6][termios.VTIME] = 0
    termios.tcsetattr(0, termios.TCSANOW, a)
def read_line() -> Tuple[bytes, bytes]:
    data = b""
    while b"\n" not in data:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            fail("bad boot payload: the link closed before the boot line")
        data += chunk
    line, _, rest = data.partition(b"\n")
    return line, rest
def read_boot(line: bytes) -> Dict[str, Any]:
    try:
        boot = json.loads(base64.b64decode(line.strip(), validate=True))
    except ValueError as exc:
        fail("bad boot payload: not base64 JSON (%s)" % exc)
    if not isinstance(boot, dict):
        fail("bad boot payload: not a JSON object")
    if not isinstance(boot.get("agentId"), str) or not re.fullmatch("[A-Za-z0-9_-]{1,40}", boot["agentId"]):
        fail("bad boot payload: agentId must be 1 to 40 of A-Z a-z 0-9 _ -")
    if not isinstance(boot.get("nonce"), str) or len(boot["nonce"]) != 32:
        fail("bad boot payload: nonce must be 32 characters")
    modules = boot.get("modules")
    if not isinstance(modules, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in modules.items()):
        fail("bad boot payload: modules must map paths to sources")
    if not isinstance(boot.get("codeHash"), str) or not isinstance(boot.get("leaseSeconds"), int):
        fail("bad boot payload: codeHash and leaseSeconds are required")
    return boot
def private_dir(path: str) -> None:
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        fail("cannot create the runtime directory %s: %s" % (path, exc.strerror))
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        fail("runtime directory %s is not private: it must be a directory owned by uid %d with no group or other permissions (it is owned by uid %d, mode %o); remove it or choose another runtimeDir" % (path, os.getuid(), st.st_uid, stat.S_IMODE(st.st_mode)))
def unpack(boot: Dict[str, Any], directory: str) -> str:
    code = os.path.join(directory, "code-" + (re.sub("[^A-Za-z0-9_-]", "_", boot["codeHash"])[:16] or "unhashed"))
    root = os.path.realpath(code)
    for rel, text in boot["modules"].items():
        path = os.path.realpath(os.path.join(root, rel))
        if not path.startswith(root + os.sep):
            fail("bad boot payload: module path %r leaves the code directory" % rel)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return root
def start_daemon(boot: Dict[str, Any], directory: str) -> None:
    code = unpack(boot, directory)
    boot_file = os.path.join(directory, "boot-%d.json" % os.getpid())
    fd = os.open(boot_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, json.dumps(boot).encode("utf-8"))
    os.close(fd)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork():
                os._exit(0)
            os.close(ready_r)
            null = os.open(os.devnull, os.O_RDWR)
            log = os.open(os.path.join(directory, "agent.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(null, 0)
            os.dup2(log, 1)
            os.dup2(log, 2)
            os.chdir(os.path.expanduser("~"))
            os.set_inheritable(ready_w, True)
            env = dict(os.environ, MGPULAB_AGENT_READY_FD=str(ready_w), MGPULAB_AGENT_BOOT=boot_file,
                       MGPULAB_AGENT_CODE=code, MGPULAB_AGENT_DIR=directory)
            snippet = "import os, sys; sys.path.insert(0, os.environ[\"MGPULAB_AGENT_CODE\"]); from mgpulab_agent.daemon import main; main()"
            os.execve(sys.executable, [sys.executable, "-u", "-c", snippet], env)
        finally:
            os._exit(127)
    os.close(ready_w)
    os.waitpid(pid, 0)
    ready = b""
    if select.select([ready_r], [], [], 20)[0]:
        ready = os.read(ready_r, 64)
    os.close(ready_r)
    if not ready.startswith(b"ok"):
        try:
            with open(os.path.join(directory, "agent.log"), "rb") as f:
                tail = f.read()[-2000:].decode("utf-8", "replace").strip().splitlines()
        except OSError:
            tail = []
        fail("the agent daemon did not start%s (log: %s)" % (": " + tail[-1] if tail else "", os.path.join(directory, "agent.log")))
def sockets_both_ways() -> bool:
    try:
        return stat.S_ISSOCK(os.fstat(0).st_mode) and stat.S_ISSOCK(os.fstat(1).st_mode)
    except OSError:
        return False
def connect(path: str) -> Optional[socket.socket]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return s
    except OSError:
        s.close()
        return None
def agent_socket(boot: Dict[str, Any], directory: str, path: str) -> socket.socket:
    """A connection to the agent daemon of this directory, started first when none answers."""
    lock_path = os.path.join(directory, "launch.lock")
    while True:
        lock = open(lock_path, "a")
        fcntl.flock(lock, fcntl.LOCK_EX)
        # An ending agent unlinks the lock while it holds it (it removes its files): then take the new one.
        try:
            same = os.stat(lock_path).st_ino == os.fstat(lock.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        lock.close()
    with lock:
        s = connect(path)
        if s is None:
            if os.path.lexists(path):
                os.unlink(path)
            start_daemon(boot, directory)
            s = connect(path)
            if s is None:
                fail("the agent daemon started but its socket %s does not answer" % path)
    return s
def first_words(s: socket.socket, first: bytes, direct: bool) -> bytes:
    """Sends the first line of the link (with the two sockets of the lab when direct) and returns the first
    bytes of the agent: its DIRECT word, or the start of its hello; empty when it closed without a word."""
    try:
        if direct:
            sent = s.sendmsg([first], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1]).tobytes())])
            s.sendall(first[sent:])
        else:
            s.sendall(first)
        return s.recv(4096)
    except (ConnectionResetError, BrokenPipeError):
        return b""
def main() -> None:
    signal.signal(signal.SIGHUP, lambda *_: os._exit(0))
    if os.isatty(0):
        raw_tty()
    os.write(1, MARKER)
    line, pending = read_line()
    boot = read_boot(line)
    base = boot.get("runtimeDir") or os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    if boot.get("runtimeDir"):
        # A configured directory may not exist yet (a fresh data dir): made private, as the levels below it.
        try:
            os.makedirs(base, 0o700, exist_ok=True)
        except OSError as exc:
            fail("cannot create the runtime directory %s: %s" % (base, exc.strerror))
    top = os.path.join(base, "mgpulab-%d" % os.getuid())
    directory = os.path.join(top, boot["agentId"])
    private_dir(top)
    private_dir(directory)
    path = os.path.join(directory, "agent.sock")
    if len(os.fsencode(path)) > 107:
        fail("socket path %s is %d bytes; a Unix socket path may have at most 107: choose a shorter runtimeDir" % (path, len(os.fsencode(path))))
    keys = ("leaseSeconds", "bufferBytes", "gpus", "whenFull", "interruptGraceMs", "python")
    settings = dict((key, boot.get(key)) for key in keys)
    hello = {"nonce": boot["nonce"], "codeHash": boot["codeHash"], "leaseSeconds": boot["leaseSeconds"], "settings": settings}
    first = json.dumps(hello).encode("ascii") + b"\n" + pending
    # A local link: the lab holds the other ends of stdin and stdout. The daemon takes them and talks to the
    # lab itself (two fewer process hops each way); this process only lives as long as the link, so that
    # its end (killed, or the lab closing it) ends the link as a dropped ssh does.
    direct = sockets_both_ways()
    # An agent that ends (its lease, a SIGTERM) closes its socket: a connection still waiting in the
    # queue of that socket, connected but never accepted, is reset before the agent says a word. Such a link
    # tries again; the socket is gone by then, so the next try starts a fresh agent.
    for _ in range(3):
        s = agent_socket(boot, directory, path)
        said = first_words(s, first, direct)
        if said:
            break
        s.close()
    else:
        fail("the agent daemon closed the link three times before it answered (log: %s)" % os.path.join(directory, "agent.log"))
    if direct:
        while len(said) < len(DIRECT) and DIRECT.startswith(said):
            chunk = s.recv(4096)
            if not chunk:
                os._exit(0)
            said += chunk
        if said == DIRECT:
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            while s.recv(4096):
                pass
            os._exit(0)
        # An agent from before direct links dropped the sockets and answered here: relay, as to it always.
    view = memoryview(said)
    while view:
        view = view[os.write(1, view):]
    while True:
        readable = select.select([0, s], [], [])[0]
        if 0 in readable:
            data = os.read(0, 1 << 16)
            if not data:
                break
            s.sendall(data)
        if s in readable:
            data = s.recv(1 << 16)
            if not data:
                break
            view = memoryview(data)
            while view:
                view = view[os.write(1, view):]
    os._exit(0)
main()
