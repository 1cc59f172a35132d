"""The small shell behind ``get_ipython()`` in a cell: what IPython syntax
turns into (magic_syntax.py) calls, dispatched to the magics the kernel
supports. It is not IPython's InteractiveShell (too heavy to start, and often
absent on GPU hosts); libraries that look for one via ``IPython.get_ipython()``
find none, so tqdm and matplotlib behave as in a plain terminal.
"""
from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, Callable, Dict, List, Optional

from . import assist, optional, timing_magics
from .magics import MagicError, run_ranks_cell, split_ranks_cell

SUPPORTED = ("%time", "%%time", "%timeit", "%%timeit", "%env", "%pwd", "%who", "%matplotlib inline", "%%ranks", "!cmd", "x = !cmd", "obj?")


class LightShell:
    def __init__(self, namespace: Dict[str, Any]):
        self.user_ns = namespace
        # Names that are the kernel's, not the user's (hidden from %who).
        self.hidden: set[str] = set()
        self._line: Dict[str, Callable[[str, timing_magics.Where], Any]] = {
            "time": lambda line, where: timing_magics.time_magic(line, self.user_ns, where),
            "timeit": lambda line, where: timing_magics.timeit_magic(line, None, self.user_ns, where),
            "env": lambda line, where: self.env(line),
            "pwd": lambda line, where: os.getcwd(),
            "who": lambda line, where: self.who(line),
            "matplotlib": lambda line, where: self.matplotlib(line),
            "pinfo": lambda line, where: print(assist.describe(line.strip(), self.user_ns, detail=False)),
            "pinfo2": lambda line, where: print(assist.describe(line.strip(), self.user_ns, detail=True)),
        }
        self._cell: Dict[str, Callable[[str, str, timing_magics.Where], Any]] = {
            "time": lambda line, cell, where: timing_magics.time_magic(cell, self.user_ns, (where[0], where[1] + 1)),
            "timeit": lambda line, cell, where: timing_magics.timeit_magic(line, cell, self.user_ns, where),
            "ranks": lambda line, cell, where: self.ranks(line, cell),
        }

    def hide_current_names(self) -> None:
        self.hidden = set(self.user_ns)

    # --- what IPython syntax calls ------------------------------------------

    def run_line_magic(self, name: str, line: str, _stack_depth: int = 1) -> Any:
        magic = self._line.get(name)
        if magic is None:
            raise MagicError(self._unknown(f"%{name}", "%%" + name in SUPPORTED))
        return magic(line, _caller(_stack_depth))

    def run_cell_magic(self, name: str, line: str, cell: str) -> Any:
        magic = self._cell.get(name)
        if magic is None:
            raise MagicError(self._unknown(f"%%{name}", "%" + name in SUPPORTED))
        return magic(line, cell, _caller(1))

    def system(self, cmd: str) -> None:
        """``!cmd``: the command's output goes straight to the cell's console, live."""
        _flush_std()
        # stdin is the kernel's protocol channel: a command must never read it. Its stderr joins
        # its stdout on the tty, as a terminal (and IPython's ``!``) shows them: one console, in order.
        done = subprocess.run(self._expand(cmd), shell=True, stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT, check=False)  # noqa: S602
        self.user_ns["_exit_code"] = done.returncode

    def getoutput(self, cmd: str) -> List[str]:
        """``x = !cmd``: the command's output lines (stdout and stderr), as IPython's list of lines."""
        _flush_std()
        done = subprocess.run(self._expand(cmd), shell=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,  # noqa: S602
                              stderr=subprocess.STDOUT, check=False)
        self.user_ns["_exit_code"] = done.returncode
        lines = done.stdout.decode("utf-8", "replace").splitlines()
        if optional.available("IPython"):
            from IPython.utils.text import SList

            listed: List[str] = SList(lines)
            return listed
        return lines

    # --- the magics themselves ----------------------------------------------

    def env(self, line: str) -> Any:
        line = line.strip()
        if not line:
            return dict(os.environ)
        name, sep, value = line.partition("=") if "=" in line.split(" ", 1)[0] else line.partition(" ")
        name, value = name.strip(), value.strip()
        if not sep or (not value and sep == " "):
            if name not in os.environ:
                raise MagicError(f"%env: the environment has no {name}")
            return os.environ[name]
        os.environ[name] = value
        print(f"env: {name}={value}")
        return None

    def who(self, line: str) -> None:
        kinds = set(line.split())
        names = sorted(name for name, value in self.user_ns.items()
                       if not name.startswith("_") and name not in self.hidden
                       and (not kinds or type(value).__name__ in kinds))
        print("\t".join(names) if names else "Interactive namespace is empty.")

    def matplotlib(self, line: str) -> None:
        # Figures are shown inline already (the kernel's MPLBACKEND); other GUIs have no screen here.
        if line.strip() not in ("", "inline"):
            raise MagicError(f"%matplotlib {line.strip()}: only inline figures can be shown in the notebook (and they are, by default)")

    def ranks(self, line: str, cell: str) -> None:
        parsed = split_ranks_cell(f"%%ranks {line}\n{cell}")
        if parsed is None:
            raise MagicError("%%ranks: could not read the magic line")
        run_ranks_cell(*parsed)

    # --- helpers --------------------------------------------------------------

    def _expand(self, cmd: str) -> str:
        """``{expr}`` and ``$name`` from the namespace, as IPython expands them (only where IPython is there to do it)."""
        if not optional.available("IPython"):
            return cmd
        from IPython.utils.text import DollarFormatter

        try:
            return str(DollarFormatter().vformat(cmd, args=[], kwargs=self.user_ns))
        except Exception:  # noqa: BLE001 - IPython too leaves a command it cannot expand as typed
            return cmd

    @staticmethod
    def _unknown(name: str, other_form: bool) -> str:
        hint = " (it is a cell magic)" if other_form and name.startswith("%") and not name.startswith("%%") else ""
        hint = " (it is a line magic)" if other_form and name.startswith("%%") else hint
        return f"{name} is not a magic this kernel supports{hint}. Supported: {', '.join(SUPPORTED)}"


def _caller(depth: int) -> timing_magics.Where:
    """The cell file and line the magic call is on (the frame that called into the shell)."""
    frame: Optional[Any] = sys._getframe(depth + 1)  # noqa: SLF001 - the only way to learn the caller's line
    assert frame is not None
    return frame.f_code.co_filename, frame.f_lineno


def _flush_std() -> None:
    # What the cell printed so far comes before the command's output.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
