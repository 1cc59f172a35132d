"""Benchmark: what the lab's per-step timing (StepTimer: phase clocks, a
metric frame per step, heartbeats) costs a training step.

CPU (default): runs the same small training loop with and without the timer,
interleaved in rounds so machine noise hits both alike, and reports the median
overhead. Frames are encoded and written to /dev/null, as a kernel writes them
to its tty. Usage: [HIDDEN=512] python3 tests/bench/timing_overhead.py [steps] [rounds]

CUDA (``--cuda``): the two workloads of issue 11 on GPU 0 — a 4-layer
4096-wide MLP at batch 512 (about 4.4 ms a step on an H100) and a 4-layer
1024-wide MLP at batch 64 (launch-bound, about 0.8 ms) — each as a plain loop,
the loop with ``loss.item()`` every step (what a sync costs), and the loop under
StepTimer without and with ``loss=``; minimum over rounds of 100 steps (5 by
default), timed from a synchronised start to a synchronised end. Budget: at
most +1 % (4.4 ms, with ``loss=``) and +5 % (0.8 ms). Usage:
python3 tests/bench/timing_overhead.py --cuda [steps] [rounds]
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "kernels"))

import torch  # noqa: E402

import mgpulab as lab  # noqa: E402
from mgpulab_wire import frames  # noqa: E402


HIDDEN = int(os.environ.get("HIDDEN", "512"))


def make():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 10))
    return model, torch.optim.SGD(model.parameters(), lr=0.01)


def batches(steps):
    generator = torch.Generator().manual_seed(1)
    return [(torch.randn(64, 256, generator=generator), torch.randint(0, 10, (64,), generator=generator)) for _ in range(steps)]


def plain(data):
    model, opt = make()
    loss_fn = torch.nn.CrossEntropyLoss()
    begin = time.perf_counter()
    for x, y in data:
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
    return (time.perf_counter() - begin) / len(data)


def timed(data):
    model, opt = make()
    loss_fn = torch.nn.CrossEntropyLoss()
    timer = lab.StepTimer(model)
    begin = time.perf_counter()
    for step, (x, y) in enumerate(timer.data(data)):
        with timer.phase("forward"):
            loss = loss_fn(model(x), y)
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step()
            opt.zero_grad()
        timer.step(step, samples=len(x), loss=loss)
    timer.close()
    return (time.perf_counter() - begin) / len(data)


def instrumentation_only(steps):
    """The timer's own cost: every phase entered and a frame emitted, with no work in between."""
    timer = lab.StepTimer()
    begin = time.perf_counter()
    for step in timer.data(range(steps)):
        with timer.phase("forward"):
            pass
        with timer.phase("backward"):
            pass
        with timer.phase("optimizer"):
            pass
        timer.step(step, samples=64, loss=0.5)
    timer.close()
    return (time.perf_counter() - begin) / steps


# -- CUDA -------------------------------------------------------------------------------------

CUDA_WORKLOADS = (("4-layer 4096-wide MLP, batch 512", 4096, 512), ("4-layer 1024-wide MLP, batch 64", 1024, 64))


def cuda_model(width):
    torch.manual_seed(0)
    layers = []
    for _ in range(3):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(width, 10)).cuda()
    return model, torch.optim.SGD(model.parameters(), lr=0.01)


def cuda_loop(width, batch, steps, variant):
    """Seconds per step of ``steps`` training steps; variant: plain | item | timer | timer+loss."""
    model, opt = cuda_model(width)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(batch, width, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")
    timer = lab.StepTimer(model) if variant.startswith("timer") else None
    torch.cuda.synchronize()
    begin = time.perf_counter()
    for step in range(steps):
        if timer is None:
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            if variant == "item":
                loss.item()
            continue
        with timer.phase("forward"):
            loss = loss_fn(model(x), y)
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step()
            opt.zero_grad()
        if variant == "timer+loss":
            timer.step(step, samples=batch, loss=loss)
        else:
            timer.step(step, samples=batch)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - begin
    if timer is not None:
        timer.close()
    return elapsed / steps


def main_cuda(steps, rounds):
    if not torch.cuda.is_available():
        print("no CUDA GPU on this host: nothing measured", file=sys.stderr)
        return 2
    frames.configure("0" * 32, fd=os.open(os.devnull, os.O_WRONLY))
    print(f"GPU: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, "
          f"Python {sys.version.split()[0]}; minimum of {rounds} × {steps} steps")
    print("| workload | plain step | with loss.item() | StepTimer, no loss= | StepTimer with loss= |")
    print("| --- | ---: | ---: | ---: | ---: |")
    variants = ("plain", "item", "timer", "timer+loss")
    for name, width, batch in CUDA_WORKLOADS:
        for variant in variants:
            cuda_loop(width, batch, 20, variant)  # warm-up: kernels, allocator, cuBLAS handles
        best = {v: float("inf") for v in variants}
        for index in range(rounds):
            order = variants if index % 2 == 0 else tuple(reversed(variants))  # drift favours none
            for variant in order:
                best[variant] = min(best[variant], cuda_loop(width, batch, steps, variant))
        base = best["plain"]
        cells = [f"{base * 1e3:.3f} ms"]
        for variant in variants[1:]:
            cells.append(f"{best[variant] * 1e3:.3f} ms ({(best[variant] / base - 1) * 100:+.1f} %)")
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


def main():
    if "--cuda" in sys.argv[1:]:
        args = [a for a in sys.argv[1:] if a != "--cuda"]
        sys.exit(main_cuda(int(args[0]) if args else 100, int(args[1]) if len(args) > 1 else 5))
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    torch.set_num_threads(1)
    frames.configure("0" * 32, fd=os.open(os.devnull, os.O_WRONLY))
    data = batches(steps)
    plain(data), timed(data)  # warm-up
    plain_times, timed_times = [], []
    for index in range(rounds):
        # alternate which goes first, so warm caches and clock drift favour neither
        if index % 2:
            timed_times.append(timed(data))
            plain_times.append(plain(data))
        else:
            plain_times.append(plain(data))
            timed_times.append(timed(data))
    base, with_timer = statistics.median(plain_times), statistics.median(timed_times)
    print(f"| model: 256→{HIDDEN}→10 MLP, batch 64, 1 thread | |")
    print(f"| step without timer | {base * 1e3:.3f} ms |")
    print(f"| step with StepTimer + metric frame | {with_timer * 1e3:.3f} ms |")
    print(f"| overhead per step, measured on the loop | {(with_timer - base) * 1e6:.1f} µs ({(with_timer / base - 1) * 100:.2f} %) |")
    alone = statistics.median(instrumentation_only(steps * 10) for _ in range(rounds))
    print(f"| the timer alone (phases + frame, no work) | {alone * 1e6:.1f} µs per step = {alone / base * 100:.2f} % of this step |")


if __name__ == "__main__":
    main()
