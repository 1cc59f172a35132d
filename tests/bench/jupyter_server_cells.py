"""Jupyter's side of the CPU-per-cell benchmark (tests/bench/cell-cpu.ts).

Talks to a running Jupyter Notebook server (Debian's python3-notebook) as its
notebook page does: a kernel made through the REST API, then execute_request
messages over the kernel's websocket. A cell is done when its execute_reply
and the kernel's idle status for it have both arrived (what the page waits for
before it shows the cell as finished).

Driven over stdin/stdout, one line each, so the caller can interleave rounds
with the lab's and read the server's CPU time from /proc around each round:

    python3 jupyter_server_cells.py URL TOKEN
    < run 100            > {"latencies": [ms, ...]}
    < quit

The first line printed is {"ready": true, "kernel_pid": ...} once a kernel is
up and warmed (20 cells).
"""
import json
import sys
import time
import uuid
from urllib.request import Request, urlopen

from tornado.ioloop import IOLoop
from tornado.websocket import websocket_connect

SESSION = uuid.uuid4().hex


def api(url, token, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = Request(f"{url}{path}", data=data, method=method, headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"null")


def execute_request(code):
    return {
        "header": {"msg_id": uuid.uuid4().hex, "username": "bench", "session": SESSION, "msg_type": "execute_request", "version": "5.3", "date": ""},
        "parent_header": {},
        "metadata": {},
        "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False, "stop_on_error": True},
        "channel": "shell",
        "buffers": [],
    }


async def run_cell(ws, code):
    """Sends one execute; returns the milliseconds until its reply and idle status arrived."""
    message = execute_request(code)
    msg_id = message["header"]["msg_id"]
    began = time.perf_counter()
    await ws.write_message(json.dumps(message))
    replied = idle = False
    while not (replied and idle):
        raw = await ws.read_message()
        if raw is None:
            raise RuntimeError("the kernel websocket closed")
        if isinstance(raw, bytes):
            continue
        reply = json.loads(raw)
        if reply.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind = reply["header"]["msg_type"]
        if kind == "execute_reply":
            replied = True
        elif kind == "status" and reply["content"]["execution_state"] == "idle":
            idle = True
    return (time.perf_counter() - began) * 1000


async def main(url, token):
    kernel = api(url, token, "POST", "/api/kernels", {"name": "python3"})
    ws_url = url.replace("http://", "ws://") + f"/api/kernels/{kernel['id']}/channels?session_id={SESSION}&token={token}"
    ws = await websocket_connect(ws_url)
    for _ in range(20):
        await run_cell(ws, "1+1")
    print(json.dumps({"ready": True, "kernel_id": kernel["id"]}), flush=True)
    loop = IOLoop.current()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] == "run":
            latencies = [await run_cell(ws, "1+1") for _ in range(int(words[1]))]
            print(json.dumps({"latencies": latencies}), flush=True)
    ws.close()
    api(url, token, "DELETE", f"/api/kernels/{kernel['id']}")


if __name__ == "__main__":
    IOLoop.current().run_sync(lambda: main(sys.argv[1], sys.argv[2]))
