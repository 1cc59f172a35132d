"""The kernel process: reads framed requests from the tty, runs cells in one
persistent namespace, and reports everything as frames (stdout stays raw).

Threads: a reader thread decodes input lines into a queue; the main thread
runs cells. Ctrl-C from the tty is a SIGINT whose handler runs in the main
thread; :mod:`mgpulab_kernel.interrupts` makes sure it also wakes the main
thread when the OS gave the signal to another one.
"""
from __future__ import annotations

import base64
import binascii
import collections
import faulthandler
import gc
import importlib
import json
import os
import queue
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Dict, List, Literal, Optional

from mgpulab_wire import frames
from mgpulab_wire import protocol_generated as wire

from . import (assist, diagnostics, environment, executor, interrupts, ipython_display, magic_syntax, magics, mime,
               optional, outputs, shell, streams)

# matplotlib's backend in cells (and in processes they start, where show() does nothing): figures inline.
INLINE_BACKEND = "module://mgpulab_kernel.mpl_inline"
# How many execute ids the kernel remembers to run each once (the lab re-sends only the one it is waiting on).
_EXECUTES_REMEMBERED = 256


_installed: Optional["Kernel"] = None


@dataclass(frozen=True)
class ExecutionContext:
    """Which cell is running, as the server named it in the execute request.

    ``cell_id`` / ``execution_id`` are None when the request did not carry
    them (an older server, or a request that is not a notebook cell's);
    ``count`` is the kernel's execution counter. Library code (the scenario
    evidence registry) records them with what a cell measured, so a report
    can name the execution its numbers came from.
    """

    cell_id: Optional[str]
    execution_id: Optional[str]
    count: int


def current_display() -> Optional[Callable[..., None]]:
    """The running kernel's ``display`` for library code (cells get it as a builtin name), or None outside a kernel."""
    return _installed.display if _installed is not None else None


def current_execution() -> Optional[ExecutionContext]:
    """The running cell's :class:`ExecutionContext`, or None outside a kernel or between cells."""
    return _installed.execution if _installed is not None else None


CellEndHook = Callable[[ExecutionContext, str, Optional[str]], None]
_cell_end_hooks: List[CellEndHook] = []
_hooks_lock = threading.Lock()


def on_cell_end(hook: CellEndHook) -> None:
    """Call ``hook(execution, status, error)`` at the end of every cell from now on, once per hook.

    It runs after the cell's own code (and its error, if it raised), before the
    cell is reported finished, so what it displays is part of that cell's
    output; ``status`` is "ok", "error" or "interrupted", ``error`` ``"Type: message"`` when it raised. Library
    code uses it
    (the scenario catalog judges the claims an experiment cell decided); a
    failing hook is logged, never the cell's error.
    """
    with _hooks_lock:
        if hook not in _cell_end_hooks:
            _cell_end_hooks.append(hook)


class Kernel:
    def __init__(self, stdin: BinaryIO):
        self._stdin = stdin
        self._requests: "queue.Queue[wire.KernelRequest]" = queue.Queue()
        # Execute ids already received (the latest few hundred): a repeat is not run again.
        self._seen_executes: "collections.OrderedDict[str, None]" = collections.OrderedDict()
        self._namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
        self._count = 0
        self._current_id = ""
        self.execution: Optional[ExecutionContext] = None
        self._executing = False
        self._interrupt_requested = False
        self._interrupts = interrupts.InterruptBridge(lambda: self._executing)
        self._stdout = streams.make_raw_stdout()
        self._stderr = streams.FramedStream("stderr", lambda: self._current_id, self._flush_stdout)
        self.shell = shell.LightShell(self._namespace)

    # --- set-up -------------------------------------------------------------

    def install(self) -> None:
        global _installed
        _installed = self
        sys.stdout = self._stdout
        # typeshed types sys.stderr/stdin as typing.TextIO, which no io.TextIOBase subclass is
        # statically; at run time a TextIOBase is exactly what Python and libraries expect.
        sys.stderr = self._stderr  # type: ignore[assignment]
        sys.stdin = streams.NoStdin()  # type: ignore[assignment]
        self._namespace["display"] = self.display
        self._namespace["get_ipython"] = lambda: self.shell
        self.shell.hide_current_names()
        outputs.set_publisher(self._publish)
        # As ipykernel does: an explicit MPLBACKEND in the environment wins.
        if not os.environ.get("MPLBACKEND"):
            os.environ["MPLBACKEND"] = INLINE_BACKEND
        if optional.available("IPython"):
            ipython_display.install()
        signal.signal(signal.SIGINT, self._on_sigint)
        self._interrupts.install()
        # Crashes (segfaults) print their Python stack on the raw tty before the
        # process dies, and Ctrl-\ (SIGQUIT) asks for every thread's stack.
        faulthandler.enable(file=sys.__stderr__ or 2, all_threads=True)
        if hasattr(faulthandler, "register"):
            faulthandler.register(signal.SIGQUIT, file=sys.__stderr__ or 2, all_threads=True, chain=False)
        threading.Thread(target=self._read_requests, name="mgpulab-reader", daemon=True).start()

    def _answer_stacks(self, request_id: str) -> None:
        try:
            processes = diagnostics.collect(threading.main_thread().ident)
        except Exception as exc:  # noqa: BLE001 - a diagnosis must never take the kernel down
            processes = [{"label": "kernel", "pid": os.getpid(), "alive": True, "stack": f"could not collect stacks: {exc!r}"}]
        frames.emit(wire.stacks_message(id=request_id, processes=processes))

    def _on_sigint(self, signum: int, frame: Any) -> None:  # noqa: ARG002
        # Only user code is interrupted; the kernel's own bookkeeping is never
        # cut in half. An interrupt that lands between "busy" and the start of
        # user code is remembered and applied as the code starts.
        self._interrupts.handled()
        if self._executing:
            raise KeyboardInterrupt
        self._interrupt_requested = True

    def _read_requests(self) -> None:
        interrupts.block_interrupts()  # the main thread is where an interrupt must land
        for line in iter(self._stdin.readline, b""):
            line = line.strip()
            if not line:
                continue
            try:
                request = wire.read_kernel_request(json.loads(base64.b64decode(line, validate=True)))
            except wire.ProtocolError as exc:
                self._log("warning", f"ignored a request the protocol does not define ({exc})")
                continue
            except (binascii.Error, ValueError) as exc:
                self._log("warning", f"ignored a malformed request line ({exc})")
                continue
            if request["type"] == "stacks":
                # Answered here, not queued: the main thread may be the one that is stuck.
                self._answer_stacks(request["id"])
            elif request["type"] == "execute" and not self._first_receipt(request["id"]):
                # The lab sends an execute again when its link to the host dropped before this kernel said
                # it started it (it cannot know whether the first reached us): a cell runs once.
                self._log("info", f"execute {request['id']} received again: run once, not twice")
            elif request["type"] == "preload":
                # Not queued either: it must never wait behind (or hold up) a cell.
                self._preload(request["modules"])
            else:
                self._requests.put(request)
        self._requests.put({"type": "shutdown"})  # tty closed: the server is gone

    def _first_receipt(self, execute_id: str) -> bool:
        if execute_id in self._seen_executes:
            return False
        self._seen_executes[execute_id] = None
        while len(self._seen_executes) > _EXECUTES_REMEMBERED:
            self._seen_executes.popitem(last=False)
        return True

    def _preload(self, modules: list[str]) -> None:
        """Imports ``modules`` on a background thread (see the ``preload`` request).

        Python's per-module import locks make a cell that imports one of them
        meanwhile wait for that import to finish rather than start it again, and
        an interrupt of that cell stops its wait, never the import itself.
        """
        def load() -> None:
            started = time.perf_counter()
            failed = []
            try:  # first the kernel's own lazy part a cell may need at once (IPython syntax), then the rest
                magic_syntax.warm()
            except Exception as exc:  # noqa: BLE001 - IPython syntax then loads on first use, as without a preload
                failed.append(f"IPython's transformer ({type(exc).__name__}: {exc})")
            for name in modules:
                try:
                    importlib.import_module(name)
                except BaseException as exc:  # noqa: BLE001 - a module that cannot load is the cell's to report
                    failed.append(f"{name} ({type(exc).__name__}: {exc})")
            # What the imports made lives as long as the kernel. Left to the cyclic collector, every full
            # collection walks it again (torch and the toolkit: about 100,000 objects, 15 ms on a quiet core),
            # and a full collection falls in whichever cell allocates past the threshold: for a nice-19 kernel
            # among a class's 60 on two cores, 15 ms of CPU can be hundreds of ms of waiting. Frozen, they are
            # left out of every later collection (0.01 ms then). The garbage the imports left goes first, so
            # none is frozen.
            gc.collect()
            gc.freeze()
            if failed:
                self._log("warning", f"preload: could not import {', '.join(failed)}")
            else:
                self._log("info", f"preloaded {', '.join(modules)} in {time.perf_counter() - started:.1f} s")
        threading.Thread(target=load, name="mgpulab-preload", daemon=True).start()

    # --- main loop ----------------------------------------------------------

    def serve(self) -> None:
        self._emit(environment.hello_message(wire.KERNEL_PROTOCOL_VERSION))
        while True:
            try:
                request = self._requests.get()
                if request["type"] == "execute":
                    self._execute(request)
                elif request["type"] == "complete":
                    self._complete(request)
                elif request["type"] == "inspect":
                    self._inspect(request)
                elif request["type"] == "ping":
                    self._emit(wire.pong_message(id=request["id"]))
                elif request["type"] == "shutdown":
                    return
                else:
                    self._log("warning", f"request type {request['type']!r} is not served by the main loop")
            except KeyboardInterrupt:
                continue  # an interrupt that raced the end of a cell

    def _execute(self, request: wire.ExecuteRequest) -> None:
        request_id, code = request["id"], request["code"]
        self._count += 1
        count = self._count
        self._current_id = request_id
        context = self.execution = ExecutionContext(request.get("cellId"), request.get("executionId"), count)
        self._interrupt_requested = False  # one sent while idle is stale
        self._emit(wire.status_message(id=request_id, state="busy"))
        filename = executor.cell_filename(count)
        executor.register_source(filename, code)
        status: Literal["ok", "error", "interrupted"] = "ok"
        failure: Optional[str] = None
        # The cell's result, when nothing can be sent between it and the reply: written with the reply.
        held: List[wire.KernelMessage] = []
        started = time.perf_counter()
        try:
            self._executing = True
            try:
                if self._interrupt_requested:
                    raise KeyboardInterrupt
                ranks_cell = magics.split_ranks_cell(code)
                if ranks_cell is not None:
                    magics.run_ranks_cell(*ranks_cell)
                    has_value, value = False, None
                else:
                    has_value, value = executor.run_code(code, self._namespace, filename)
            finally:
                self._executing = False
            if has_value and value is not None:
                self._namespace["_"] = value
                result = wire.execute_result_message(id=request_id, count=count, data=mime.mime_bundle(value))
                if self._cell_end_is_quiet():
                    # One write for the result, the reply and the idle status: one wake-up of the agent and the lab
                    # instead of two. What the cell printed goes first (flushed before the reply, as _emit does).
                    self._stderr.flush()
                    held.append(result)
                else:
                    self._emit(result)
        except KeyboardInterrupt as exc:
            status = "interrupted"
            self._recover_stdout()
            self._send_held(held)
            self._report_error(request_id, exc)
        except BaseException as exc:  # noqa: BLE001 - SystemExit in a cell must not end the kernel
            status = "error"
            failure = f"{type(exc).__name__}: {exc}"
            self._send_held(held)
            self._report_error(request_id, exc)
        self._flush_deferred_metrics(wait=status != "interrupted")
        self._show_open_figures()
        self._run_cell_end_hooks(context, status, failure)
        duration_ms = (time.perf_counter() - started) * 1000
        self._stderr.flush()
        self.execution = None
        # The reply and the idle status in one write: one wake-up of whoever reads the tty (the lab, or the
        # host agent and then the lab) per cell end instead of two.
        self._flush_stdout()
        frames.emit_many([
            *held,
            wire.execute_reply_message(id=request_id, count=count, status=status, duration_ms=round(duration_ms, 3)),
            wire.status_message(id=request_id, state="idle"),
        ])

    @staticmethod
    def _cell_end_is_quiet() -> bool:
        """Nothing but the reply can follow a cell's result: no toolkit metrics to flush, no figures to
        show, no end-of-cell hooks (each would send its frames after the result)."""
        with _hooks_lock:
            if _cell_end_hooks:
                return False
        return "mgpulab.metrics" not in sys.modules and "mgpulab_kernel.mpl_inline" not in sys.modules

    def _send_held(self, held: List[wire.KernelMessage]) -> None:
        """A held result goes before what an interrupt or error that raced it sends."""
        if held:
            self._flush_stdout()
            frames.emit_many(list(held))
            held.clear()

    def _show_open_figures(self) -> None:
        """Figures still open at the end of a cell are shown, as IPython's inline backend does."""
        backend = sys.modules.get("mgpulab_kernel.mpl_inline")
        if backend is None:
            return
        try:
            backend.flush_figures()
        except Exception as exc:  # noqa: BLE001 - a figure that cannot be drawn must not lose the cell's reply
            self._report_error(self._current_id, exc)

    def _run_cell_end_hooks(self, execution: ExecutionContext, status: str, failure: Optional[str]) -> None:
        with _hooks_lock:
            hooks = list(_cell_end_hooks)
        for hook in hooks:
            try:
                hook(execution, status, failure)
            except BaseException as exc:  # noqa: BLE001 - a hook must not lose the cell's reply or end the kernel
                self._log("warning", f"end-of-cell hook {getattr(hook, '__qualname__', hook)!s} failed: {type(exc).__name__}: {exc}")

    def _complete(self, request: wire.CompleteRequest) -> None:
        try:
            found = assist.complete(request["code"], request["cursor"], self._namespace)
            matches: list[wire.CompleteReplyMessageMatchesItem] = [{"text": match.text, "type": match.type} for match in found.matches]
            self._emit(wire.complete_reply_message(id=request["id"], matches=matches, cursor_start=found.cursor_start, cursor_end=found.cursor_end))
        except BaseException as exc:  # noqa: BLE001 - a failed completion answers "nothing", it never ends the kernel
            self._log("warning", f"completion failed: {type(exc).__name__}: {exc}")
            self._emit(wire.complete_reply_message(id=request["id"], matches=[], cursor_start=request["cursor"], cursor_end=request["cursor"]))

    def _inspect(self, request: wire.InspectRequest) -> None:
        try:
            text = assist.inspect_at(request["code"], request["cursor"], self._namespace, detail=request.get("detail", False))
        except BaseException as exc:  # noqa: BLE001 - as above
            self._log("warning", f"inspection failed: {type(exc).__name__}: {exc}")
            text = None
        self._emit(wire.inspect_reply_message(id=request["id"], found=text is not None, text=text or ""))

    def _flush_deferred_metrics(self, wait: bool) -> None:
        """Metric frames still waiting for a GPU copy belong to this cell: send them before its reply.

        After an interrupt only those the device has finished go (it may be stuck); the rest
        are dropped rather than attributed to the next cell. Nothing to do unless the cell
        imported the toolkit's metrics (importing them here would import torch).
        """
        metrics = sys.modules.get("mgpulab.metrics")
        if metrics is None:
            return
        try:
            metrics.flush_deferred(wait)
        except KeyboardInterrupt:
            metrics.flush_deferred(False)
        except Exception as exc:  # noqa: BLE001 - a failing flush must not lose the cell's reply
            self._log("warning", f"metric frames still waiting for the GPU were lost: {type(exc).__name__}: {exc}")

    def _report_error(self, request_id: str, exc: BaseException) -> None:
        error = executor.describe_error(exc)
        self._emit(wire.error_message(id=request_id, ename=error.ename, evalue=error.evalue, traceback=error.traceback))

    # --- output -------------------------------------------------------------

    def display(self, *objects: Any, **_options: Any) -> None:
        """`display(obj)` in a cell, as in Jupyter (IPython's keyword options are accepted and ignored)."""
        for obj in objects:
            self._publish(mime.mime_bundle(obj))

    def _publish(self, bundle: Dict[str, str]) -> None:
        self._emit(wire.display_data_message(id=self._current_id, data=bundle))

    def _emit(self, message: wire.KernelMessage) -> None:
        self._flush_stdout()
        frames.emit(message)

    def _flush_stdout(self) -> None:
        try:
            self._stdout.flush()
        except (OSError, ValueError, RuntimeError):
            self._recover_stdout()

    def _recover_stdout(self) -> None:
        # An interrupt can land inside a write to the tty and leave the buffered
        # writer half-flushed ("reentrant call"): start a fresh one.
        self._stdout = streams.make_raw_stdout()
        sys.stdout = self._stdout

    def _log(self, level: Literal["info", "warning", "error"], message: str) -> None:
        frames.emit(wire.kernel_log_message(level=level, message=message))


def main(boot: Dict[str, Any], bundle_root: Optional[str] = None) -> None:
    frames.configure(boot["nonce"])
    if bundle_root:
        # Rank processes and subprocesses started from cells import the same package.
        os.environ["PYTHONPATH"] = bundle_root + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    kernel = Kernel(sys.stdin.buffer)
    kernel.install()
    try:
        kernel.serve()
    finally:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        if bundle_root:
            shutil.rmtree(bundle_root, ignore_errors=True)
        os._exit(0)
