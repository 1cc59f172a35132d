"""Ranks whose start-up is slow on purpose, as torch 2.x on a GPU host makes it (see test_toolkit_start_up.py).

Importing this package takes ``$SLOW_START_IMPORT_S`` seconds (the rank's target module: imported while
the rank unpickles what it runs, as ``import torch`` is). The rank functions then import
:mod:`slow_start.lazy` inside the function, as ``torch.optim`` is imported lazily (``$SLOW_START_LAZY_S``),
and their first step is slow too (``$SLOW_START_FIRST_STEP_S``: CUDA context and module loading).
"""
import os
import time

time.sleep(float(os.environ.get("SLOW_START_IMPORT_S", "0")))


def train(steps: int) -> int:
    import torch
    import torch.distributed as dist

    import mgpulab as lab
    import importlib
    importlib.import_module("slow_start.lazy")  # slow on purpose
    t = torch.ones(1)
    for step in range(steps):
        if step == 0:
            time.sleep(float(os.environ.get("SLOW_START_FIRST_STEP_S", "0")))
        dist.all_reduce(t)
        lab.log(step, loss=float(t))
    return steps


def stuck_import_on_rank(rank: int) -> None:
    """Rank ``rank`` never finishes importing: a start-up that never ends."""
    import importlib

    import torch.distributed as dist
    if dist.get_rank() == rank:
        importlib.import_module("slow_start.never")  # never returns
    train(3)
