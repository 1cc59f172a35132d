# Sent as `python3 -c` on every kernel host: puts the tty in raw-ish mode,
# reads one base64 JSON line with the kernel package, writes it to a private
# temp dir (so rank processes can import it too) and starts it. No single
# quotes in this file: it travels inside a shell command over ssh.
import base64, json, os, sys, tempfile
def _boot() -> None:
    if os.isatty(0):
        import termios
        a = termios.tcgetattr(0)
        a[0] &= ~(termios.ICRNL | termios.INLCR | termios.IGNCR | termios.IXON | termios.IXOFF | termios.ISTRIP)
        a[1] &= ~termios.OPOST
        # ISIG stays on: Ctrl-C and Ctrl-\ reach every process on the tty as signals.
        # NOFLSH: a signal must not flush a frame that is in flight.
        a[3] &= ~(termios.ICANON | termios.ECHO | termios.ECHONL | termios.IEXTEN)
        a[3] |= termios.ISIG | termios.NOFLSH
        a[6][termios.VMIN] = 1
        a[6][termios.VTIME] = 0
        termios.tcsetattr(0, termios.TCSANOW, a)
    os.write(1, b"\x1b]mgl-boot;ready\x07")
    boot = json.loads(base64.b64decode(sys.stdin.buffer.readline()))
    root = tempfile.mkdtemp(prefix="mgpulab-")
    for rel, text in boot["modules"].items():
        path = os.path.realpath(os.path.join(root, rel))
        if not path.startswith(root + os.sep):
            raise SystemExit("bad module path in boot payload")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    sys.path.insert(0, root)
    __import__(boot["entry"], fromlist=["main"]).main(boot, root)
_boot()
