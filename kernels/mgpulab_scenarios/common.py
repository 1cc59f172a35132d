"""Small shared pieces for the experiment cells and the DDP rank functions: data, models, an
emulated device memory budget, a replica's parameters.

A cell and its DDP ranks build the same batch (:func:`data`) and the same
model (:func:`mlp`) from the seed, so their variants compare like with like.
Data and initial weights are made on the CPU from the seed, then moved: the
same numbers on every host.
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

import mgpulab as lab


@contextlib.contextmanager
def still(what: str, every_s: float = 2.0) -> Iterator[None]:
    """While the block runs, print what the cell is waiting for every ``every_s`` seconds.

    A launch's rank processes print nothing while each imports torch and joins
    its process group (seconds, tens of seconds when a class starts them at
    once on a shared host): a participant sees the cell is busy with that, not
    stuck, and the gaps in its output stay short.
    """
    done = threading.Event()
    started = time.perf_counter()

    def tick() -> None:
        while not done.wait(every_s):
            print(f"  … {what} ({time.perf_counter() - started:.0f} s)", flush=True)

    thread = threading.Thread(target=tick, name="mgpulab-still", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def mode_label(n: int, engine: str, p: Optional[Mapping[str, Any]] = None) -> str:
    """The device plan's label for ``n`` devices of ``engine`` with the scenario's placement."""
    return lab.devices.detect(n, engine, placement=str((p or {}).get("placement", "auto"))).label


def data(seed: int, n: int, d_in: int, d_out: int = 1, to: Optional[torch.device] = None):
    """A regression batch from the seed (made on the CPU, then moved): the same numbers on every host."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d_in, generator=g)
    w = torch.randn(d_in, d_out, generator=g)
    y = x @ w + 0.1 * torch.randn(n, d_out, generator=g)
    return (x, y) if to is None else (x.to(to), y.to(to))


def mlp(seed: int, d_in: int, hidden: int, d_out: int = 1, layers: int = 2,
        to: Optional[torch.device] = None) -> nn.Module:
    """``layers`` Linear layers with ReLUs between (``layers=4``: the article's LargeModel), seeded."""
    torch.manual_seed(seed + 1)
    mods: List[nn.Module] = []
    width = d_in
    for _ in range(layers - 1):
        mods += [nn.Linear(width, hidden), nn.ReLU()]
        width = hidden
    mods.append(nn.Linear(width, d_out))
    model = nn.Sequential(*mods)
    return model if to is None else model.to(to)


def train_step(model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> float:
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return float(loss)


class SlowRows(Dataset):
    """``n`` regression rows (10 features, 1 target) from the seed, each costing ``cost_ms`` to load, as decoding
    an image or reading a file would. Defined here rather than in the cell so that DataLoader workers
    started by a forkserver (see :func:`worker_context`) can import it."""

    def __init__(self, n: int, cost_ms: float, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.x, self.y = torch.randn(n, 10, generator=g), torch.randn(n, 1, generator=g)
        self.cost_s = cost_ms / 1000.0

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> Tuple[torch.Tensor, torch.Tensor]:
        time.sleep(self.cost_s)
        return self.x[i], self.y[i]


def worker_context(num_workers: int) -> Optional[str]:
    """DataLoader's ``multiprocessing_context``: fork (the default) until this process has used CUDA, a
    forkserver after. A worker forked from a process with a CUDA context aborts as soon as it touches CUDA
    state it inherited (freeing an inherited CUDA tensor is enough): "DataLoader worker exited unexpectedly"."""
    return "forkserver" if num_workers > 0 and torch.cuda.is_initialized() else None


# -- emulated device memory budget ---------------------------------------------------------

class EmulatedOOM(RuntimeError):
    """Raised when a forward would exceed an emulated device memory budget (CPU only)."""


def mlp_bytes_per_device(model: nn.Module, rows: int) -> Dict[str, int]:
    """Parameter + gradient bytes and activation bytes for ``rows`` samples through an MLP."""
    param = sum(p.numel() * p.element_size() for p in model.parameters())
    widths = []
    for m in model.modules():
        if isinstance(m, nn.Linear):
            widths += [m.in_features, m.out_features]
    activations = rows * sum(widths) * 4
    return {"parameters": param, "gradients": param, "activations": activations,
            "total": 2 * param + activations}


def check_budget(model: nn.Module, chunk_rows: Sequence[int], budget_mib: float) -> List[Dict[str, Any]]:
    """Per-device emulated memory need; raises EmulatedOOM naming the first device over budget."""
    out = []
    for device, rows in enumerate(chunk_rows):
        need = mlp_bytes_per_device(model, rows)
        out.append({"device": device, "rows": rows, "need_mib": need["total"] / 2 ** 20})
        if need["total"] > budget_mib * 2 ** 20:
            raise EmulatedOOM(
                f"emulated OOM on emulated device {device}: needs {need['total'] / 2 ** 20:.2f} MiB "
                f"(parameters+gradients {2 * need['parameters'] / 2 ** 20:.2f} MiB, activations for {rows} rows "
                f"{need['activations'] / 2 ** 20:.2f} MiB) > budget {budget_mib:.2f} MiB — this is a CPU "
                "emulation of a device memory limit, not a real CUDA OOM")
    return out


def replica_parameters(original: nn.Module, replica: nn.Module) -> List[torch.Tensor]:
    """A DataParallel replica's parameter tensors, in the original's order.

    Replicas hold them as plain (non-leaf) tensor attributes, which
    ``replica.parameters()`` does not list: they are looked up by the
    original's parameter names.
    """
    out: List[torch.Tensor] = []
    for name, _ in original.named_parameters():
        obj: Any = replica
        for part in name.split("."):
            obj = getattr(obj, part, None)
        if isinstance(obj, torch.Tensor):
            out.append(obj)
    return out
