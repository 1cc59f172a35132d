"""The scenario catalog as a long-lived process: ``python -m mgpulab_scenarios.service``.

One JSON request per line on stdin, one JSON reply per line on stdout
(flushed after each), in order, so the server keeps one warm process
(torch imported once) and a render costs milliseconds.

Requests (``id``: an int chosen by the caller, echoed in the reply)::

    {"id": 1, "op": "list"}
    {"id": 2, "op": "notebook", "scenario": "dp-basics", "params": {"devices": 2}}
    {"id": 3, "op": "render", "templateId": "dp-basics/scaling", "params": {...}}
    {"id": 4, "op": "describe", "scenario": "dp-basics", "params": {...}}

Replies::

    {"id": 1, "ok": true, "result": [{"id", "title", "source", "summary"}, ...]}
    {"id": 2, "ok": true, "result": [{"kind": "code"|"markdown", "source", "template": null | T}, ...]}
    {"id": 3, "ok": true, "result": {"source": "...", "template": T}}
    {"id": 4, "ok": true, "result": <Scenario.to_dict(values)>}
    {"id": 5, "ok": false, "kind": "parameter"|"unknown"|"request"|"internal", "error": "one line"}

with ``T = {"id": "<scenario>/<cell>", "parameters": {name: value},
"fields": [parameter descriptions], "question": null | {"id", "text",
"choices", "claims"}}``. ``params`` (optional, an object) holds JSON values
checked strictly by each parameter's type and range, then the scenario's
cross-parameter limits. ``kind``: ``parameter`` (a value refused),
``unknown`` (no such scenario or template), ``request`` (not JSON, not an
object, bad ``id``/``op``/field types, a line over 1 MiB), ``internal`` (a
bug; details on stderr). A reply whose ``id`` could not be read has
``"id": null``. Blank lines are ignored (no reply). No request can stop the
service; end of input exits 0.

Everything but the replies (warnings, torch's messages, prints) goes to
stderr: fd 1 is pointed at stderr at start and replies use a private
duplicate of the original stdout.
"""
from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any, BinaryIO, Callable, Dict, Optional

from . import IDS, ParameterError, UnknownScenario, UnknownTemplate, get, notebook, render_template
from .core import short_repr

MAX_LINE_BYTES = 1 << 20
OPS = ("list", "notebook", "render", "describe")


class RequestError(ValueError):
    """The request itself is malformed (not the values it carries)."""


def _field(request: dict, name: str, kind: type, what: str) -> Any:
    if name not in request:
        raise RequestError(f"missing {name!r} ({what})")
    value = request[name]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise RequestError(f"{name!r} must be {what}, got {short_repr(value)}")
    return value


def _params(request: dict) -> Dict[str, Any]:
    params = request.get("params")
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise RequestError(f"'params' must be an object of parameter values, got {short_repr(params)}")
    return params


def _op_list(request: dict) -> Any:
    out = []
    for scenario_id in IDS:
        scenario = get(scenario_id)
        out.append({"id": scenario.id, "title": scenario.title, "source": scenario.source,
                    "sourceTitle": scenario.source_title, "summary": scenario.summary})
    return out


def _op_notebook(request: dict) -> Any:
    scenario_id = _field(request, "scenario", str, "a scenario id")
    return notebook(scenario_id, _params(request))


def _op_render(request: dict) -> Any:
    template_id = _field(request, "templateId", str, "a template id '<scenario>/<cell>'")
    return render_template(template_id, _params(request))


def _op_describe(request: dict) -> Any:
    scenario = get(_field(request, "scenario", str, "a scenario id"))
    return scenario.to_dict(scenario.validate(_params(request)))


HANDLERS: Dict[str, Callable[[dict], Any]] = {
    "list": _op_list, "notebook": _op_notebook, "render": _op_render, "describe": _op_describe,
}


def _one_line(text: str, limit: int = 500) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _error(request_id: Optional[int], kind: str, message: str) -> dict:
    return {"id": request_id, "ok": False, "kind": kind, "error": _one_line(message)}


def handle_line(line: bytes) -> dict:
    """The reply to one request line (never raises)."""
    request_id: Optional[int] = None
    try:
        try:
            request = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            return _error(None, "request", "request line is not UTF-8")
        except (ValueError, RecursionError) as err:
            return _error(None, "request", f"request line is not valid JSON: {err}")
        if not isinstance(request, dict):
            return _error(None, "request", f"a request must be a JSON object, got {type(request).__name__}")
        raw_id = request.get("id")
        if isinstance(raw_id, int) and not isinstance(raw_id, bool):
            request_id = raw_id
        else:
            return _error(None, "request", f"'id' must be an integer, got {short_repr(raw_id)}")
        op = request.get("op")
        handler = HANDLERS.get(op) if isinstance(op, str) else None
        if handler is None:
            return _error(request_id, "request", f"unknown op {short_repr(op)} (ops: {', '.join(OPS)})")
        result = handler(request)
        return {"id": request_id, "ok": True, "result": result}
    except ParameterError as err:
        return _error(request_id, "parameter", str(err))
    except (UnknownScenario, UnknownTemplate) as err:
        return _error(request_id, "unknown", str(err))
    except RequestError as err:
        return _error(request_id, "request", str(err))
    except Exception as err:  # noqa: BLE001 - a request must never stop the service
        traceback.print_exc(file=sys.stderr)
        return _error(request_id, "internal", f"{type(err).__name__}: {err}")


def _read_line(stream: BinaryIO) -> Optional[bytes]:
    """The next line (without its newline); b"\\x00toolong" sentinel when over the limit; None at EOF."""
    line = stream.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
        while True:  # skip the rest of the oversized line
            rest = stream.readline(1 << 16)
            if not rest or rest.endswith(b"\n"):
                break
        return _TOO_LONG
    return line.rstrip(b"\r\n")


_TOO_LONG = b"\x00too long"


def serve(stdin: BinaryIO, write: Callable[[bytes], None]) -> int:
    while True:
        line = _read_line(stdin)
        if line is None:
            return 0
        if line is _TOO_LONG:
            reply = _error(None, "request", f"request line longer than {MAX_LINE_BYTES} bytes refused")
        elif not line.strip():
            continue
        else:
            reply = handle_line(line)
        try:
            data = json.dumps(reply, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as err:
            data = json.dumps(_error(reply.get("id"), "internal", f"reply could not be encoded: {err}"))
        write(data.encode("ascii") + b"\n")


def _reply_writer() -> Callable[[bytes], None]:
    """Keep the real stdout for replies only; fd 1 (and sys.stdout) go to stderr."""
    sys.stdout.flush()
    reply_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(reply_fd, view):]

    return write


def _warm_up() -> None:
    """Import every scenario (and torch) now, so the first request is as fast as the rest."""
    try:
        for scenario_id in IDS:
            get(scenario_id).validate({})
    except Exception:  # noqa: BLE001 - reported per request instead
        traceback.print_exc(file=sys.stderr)


def main() -> int:
    write = _reply_writer()
    _warm_up()
    try:
        return serve(sys.stdin.buffer, write)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
