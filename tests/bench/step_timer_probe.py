"""Where a StepTimer step's host time goes on a GPU: the cost of each CUDA call it makes, and a profile.

StepTimer's overhead on a launch-bound step (tests/bench/timing_overhead.py --cuda) is host time: every
microsecond the training loop's thread spends in the timer is a microsecond later for the next kernel
launch. This probe times, in a tight loop on GPU 0, each host-side primitive a step issues (stream
lookup, event record, event query, elapsed time, a pinned copy, building and emitting a frame), then
profiles the timer+loss loop of the 1024-wide workload and prints the functions with the most own time.
Usage: python3 tests/bench/step_timer_probe.py [iterations]
"""
import cProfile
import io
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "kernels"))
sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402

import mgpulab as lab  # noqa: E402
from mgpulab import metrics  # noqa: E402
from mgpulab_wire import frames  # noqa: E402


def per_call_us(fn, n):
    for _ in range(min(n, 200)):
        fn()
    begin = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - begin) / n * 1e6


def main() -> int:
    if not torch.cuda.is_available():
        print("no CUDA GPU on this host: nothing measured", file=sys.stderr)
        return 2
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    frames.configure("0" * 32, fd=os.open(os.devnull, os.O_WRONLY))
    device = torch.device("cuda", 0)
    torch.ones(1, device=device)
    stream = torch.cuda.current_stream(device)
    timing = torch.cuda.Event(enable_timing=True)
    plain = torch.cuda.Event()
    done_a, done_b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    done_a.record(stream)
    done_b.record(stream)
    torch.cuda.synchronize()
    scalar = torch.ones((), device=device)
    pinned = torch.empty((), pin_memory=True)
    values = {"data_ms": 0.1, "forward_ms": 0.4, "backward_ms": 0.5, "optimizer_ms": 0.2, "step_ms": 1.2,
              "samples": 64, "loss": 2.3}
    rows = [
        ("torch.cuda.current_stream(device)", lambda: torch.cuda.current_stream(device)),
        ("torch.cuda.current_stream()", lambda: torch.cuda.current_stream()),
        ("timing event.record(stream)", lambda: timing.record(stream)),
        ("timing event.record()", lambda: timing.record()),
        ("plain event.record(stream)", lambda: plain.record(stream)),
        ("event.query() (done)", lambda: done_b.query()),
        ("event.synchronize() (done)", lambda: done_b.synchronize()),
        ("start.elapsed_time(end)", lambda: done_a.elapsed_time(done_b)),
        ("pinned.copy_(cuda scalar, non_blocking)", lambda: pinned.copy_(scalar, non_blocking=True)),
        ("float(pinned scalar)", lambda: float(pinned)),
        ("metrics.metric_message(7 values)", lambda: metrics.metric_message(1, values, rank=0)),
        ("frames.emit(message) to /dev/null", lambda m=metrics.metric_message(1, values, rank=0): frames.emit(m)),
        ("time.perf_counter()", time.perf_counter),
    ]
    print(f"GPU: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, Python {sys.version.split()[0]}")
    print("| host call | µs per call |")
    print("| --- | ---: |")
    for name, fn in rows:
        print(f"| {name} | {per_call_us(fn, n):.2f} |")
    torch.cuda.synchronize()

    import timing_overhead as bench
    for variant in ("timer", "timer+loss"):
        bench.cuda_loop(1024, 64, 50, variant)
        profile = cProfile.Profile()
        profile.enable()
        bench.cuda_loop(1024, 64, 500, variant)
        profile.disable()
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(22)
        print(f"\n== profile of 500 steps, {variant}, 1024-wide ==")
        print("\n".join(line for line in text.getvalue().splitlines() if line.strip())[:6000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
