"""Benchmark: what lab.launch costs beyond starting the rank interpreters themselves.

For each launcher (torch.multiprocessing spawn, and torchrun where it runs — on
Debian's torch 1.13 / Python 3.11 through the tests' shim that fixes its
option parsing), N launches of empty rank code (``pass``) with the process
group initialised (gloo on the CPU), timed from the call to the return. The
floor any launcher pays is the ranks' own start — a Python interpreter that
imports torch and torch.distributed — measured by starting N such
interpreters at once; launch overhead = launch time − that floor. Also
reports socket.getfqdn(), which torch 2.x's torchrun agent calls for each of
its events (slow where there is no DNS).

Usage: python3 tests/bench/launch_overhead.py [ranks] [repeats]
"""
import os
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "kernels"))

import mgpulab as lab  # noqa: E402
from mgpulab import launcher  # noqa: E402

SHIM = os.path.join(ROOT, "kernels", "tests", "torchrun_shim.py")


def floor_s(ranks):
    """N interpreters importing torch and torch.distributed at once (what every rank pays)."""
    begin = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "kernels"))
    procs = [subprocess.Popen([sys.executable, "-c", "import torch, torch.distributed, mgpulab._rank"], env=env)
             for _ in range(ranks)]
    for proc in procs:
        proc.wait()
    return time.perf_counter() - begin


def launch_s(ranks, **options):
    begin = time.perf_counter()
    result = lab.launch_code("pass\n", ranks, init_process_group=True, echo=False, time_limit_s=120, **options)
    took = time.perf_counter() - begin
    if not result.ok:
        raise RuntimeError(f"launch failed: {result.summary}")
    return took


def main():
    ranks = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    began = time.perf_counter()
    socket.getfqdn(socket.gethostname())
    fqdn_ms = (time.perf_counter() - began) * 1000
    import torch
    print(f"torch {torch.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} cores, {ranks} ranks, "
          f"median of {repeats}")
    print(f"socket.getfqdn(): {fqdn_ms:.1f} ms here; auto launcher: {launcher._pick_launcher('auto', ranks)}")
    rows = [("torch.multiprocessing.spawn", {"launcher": "spawn"})]
    rows.append(("torchrun" + (" (tests' shim)" if not launcher.torchrun_status()[0] else ""),
                 {"launcher": "torchrun", "torchrun_cmd": None if launcher.torchrun_status()[0] else
                  [sys.executable, SHIM]}))
    for _, options in rows:
        launch_s(ranks, **options)  # warm-up (page cache)
    # interleaved rounds, so load from elsewhere on the machine hits every row alike
    floors, took = [], {name: [] for name, _ in rows}
    for _ in range(repeats):
        floors.append(floor_s(ranks))
        for name, options in rows:
            took[name].append(launch_s(ranks, **options))
    print("| launcher | launch, empty rank code | ranks' own start (floor) | launcher overhead (median of rounds) |")
    print("| --- | ---: | ---: | ---: |")
    for name, _ in rows:
        overhead = statistics.median(t - f for t, f in zip(took[name], floors))
        print(f"| {name} | {statistics.median(took[name]):.2f} s | {statistics.median(floors):.2f} s | "
              f"{overhead:+.2f} s |")


if __name__ == "__main__":
    main()
