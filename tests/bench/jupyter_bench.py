"""Jupyter's side of the benchmark: the same three measurements through
jupyter_client against ipykernel (Debian python3-ipykernel), printed as JSON."""
import json
import statistics
import sys
import time

from jupyter_client.manager import start_new_kernel


def run(client, code, timeout=600):
    """Executes code; returns (result text, bytes of stream output) once the kernel is idle again."""
    msg_id = client.execute(code, store_history=False)
    result, streamed = None, 0
    while True:
        msg = client.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "stream":
            streamed += len(msg["content"]["text"].encode("utf-8"))
        elif kind == "execute_result":
            result = msg["content"]["data"]["text/plain"]
        elif kind == "status" and msg["content"]["execution_state"] == "idle":
            return result, streamed


def start_warmed():
    """A kernel and its client, past their first cells (as the lab's side measures it)."""
    manager, client = start_new_kernel(kernel_name="python3")
    for _ in range(20):
        run(client, "1")
    return manager, client


def main():
    rounds, megabytes = int(sys.argv[1]), int(sys.argv[2])
    starts = []
    for _ in range(3):
        begin = time.perf_counter()
        manager, client = start_new_kernel(kernel_name="python3")
        assert run(client, "1")[0] == "1"
        starts.append((time.perf_counter() - begin) * 1000)
        client.stop_channels()
        manager.shutdown_kernel(now=True)

    manager, client = start_warmed()
    latencies = []
    for _ in range(rounds):
        begin = time.perf_counter()
        run(client, "1")
        latencies.append((time.perf_counter() - begin) * 1000)
    latencies.sort()

    code = f"import sys\nline = 'x' * 999 + '\\n'\nfor _ in range({megabytes * 1000}):\n    sys.stdout.write(line)\nsys.stdout.flush()"
    begin = time.perf_counter()
    _, streamed = run(client, code)
    seconds = time.perf_counter() - begin
    # The same again, as the lab's side measures it (tests/bench/kernel-traffic.ts).
    begin = time.perf_counter()
    _, warm_streamed = run(client, code)
    warm_seconds = time.perf_counter() - begin
    client.stop_channels()
    manager.shutdown_kernel(now=True)
    # A new kernel's first flood, in a client process that has taken two before (as the lab's side measures it).
    manager, client = start_warmed()
    begin = time.perf_counter()
    _, new_streamed = run(client, code)
    new_seconds = time.perf_counter() - begin
    client.stop_channels()
    manager.shutdown_kernel(now=True)
    print(json.dumps({
        "startMs": statistics.median(starts),
        "roundTripMedianMs": statistics.median(latencies),
        "roundTripP99Ms": latencies[int(len(latencies) * 0.99) - 1],
        "throughputMBps": streamed / 1e6 / seconds,
        "warmThroughputMBps": warm_streamed / 1e6 / warm_seconds,
        "newKernelThroughputMBps": new_streamed / 1e6 / new_seconds,
        "bytesReceived": streamed,
    }))


if __name__ == "__main__":
    main()
