"""Small shared pieces for experiments: data, models, devices, timing, emulated memory budget.

Experiments place everything by the scenario's ``placement`` parameter through
the toolkit's device plan (:func:`device`, :func:`dp`, :func:`launch`), so the
headless verdicts run where the notebook's cells do and say the same thing
(:func:`mode_label`). Data and initial weights are made on the CPU from the
seed, then moved: the same numbers on every host.
"""
from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import torch
import torch.nn.functional as F
from torch import nn

import mgpulab as lab
from mgpulab.data_parallel import DataParallelModule, PhaseTimes


def placement(p: Mapping[str, Any]) -> str:
    """The scenario's placement value ("auto": the GPUs when the host has any; "cpu": the emulation)."""
    return str(p.get("placement", "auto"))


def device(p: Mapping[str, Any]) -> torch.device:
    """Where a single-device model and the data go (device 0 of the plan)."""
    return lab.devices.device(0, placement(p))


def data(seed: int, n: int, d_in: int, d_out: int = 1, to: Optional[torch.device] = None):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d_in, generator=g)
    w = torch.randn(d_in, d_out, generator=g)
    y = x @ w + 0.1 * torch.randn(n, d_out, generator=g)
    return (x, y) if to is None else (x.to(to), y.to(to))


def mlp(seed: int, d_in: int, hidden: int, d_out: int = 1, layers: int = 2,
        to: Optional[torch.device] = None) -> nn.Module:
    torch.manual_seed(seed + 1)
    mods: List[nn.Module] = []
    width = d_in
    for _ in range(layers - 1):
        mods += [nn.Linear(width, hidden), nn.ReLU()]
        width = hidden
    mods.append(nn.Linear(width, d_out))
    model = nn.Sequential(*mods)
    return model if to is None else model.to(to)


def dp(model: nn.Module, n: int, p: Mapping[str, Any], keep_replicas: bool = False) -> DataParallelModule:
    """DataParallel over n devices as the plan places them (the model moves to device 0 first)."""
    return lab.DataParallel(model.to(device(p)), device_ids=list(range(n)), placement=placement(p),
                            keep_replicas=keep_replicas)


def phases(model: nn.Module) -> PhaseTimes:
    """The phases of the DataParallel forward that just ran on ``model`` (its ``last_phases``)."""
    last = getattr(model, "last_phases", None)
    if not isinstance(last, PhaseTimes):
        raise RuntimeError(f"{type(model).__name__} has run no DataParallel forward")
    return last


def launch(target: Callable[..., Any], n: int, p: Mapping[str, Any], **options: Any) -> Any:
    """``lab.launch`` with the scenario's placement (the plan picks NCCL or gloo)."""
    return lab.launch(target, n, placement=placement(p), **options)


def mode_label(n: int, engine: str, p: Optional[Mapping[str, Any]] = None) -> str:
    return lab.devices.detect(n, engine, placement=placement(p or {})).label


def sync(where: Any) -> None:
    """Wait for the GPU (timing experiments measure whole steps; a no-op on the CPU)."""
    where = torch.device(where)
    if where.type == "cuda":
        torch.cuda.synchronize(where)


def grads(model: nn.Module) -> List[torch.Tensor]:
    """Detached copies of the gradients (on the model's device)."""
    return [p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p) for p in model.parameters()]


def max_abs_diff(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor]) -> float:
    return max(float((x - y).abs().max()) for x, y in zip(a, b)) if a else 0.0


def params_of(model: nn.Module) -> List[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def param_norm(model: nn.Module) -> float:
    return float(torch.sqrt(sum((p.detach() ** 2).sum() for p in model.parameters())))


def median_ms(fn: Callable[[], Any], repeats: int, warmup: int = 1, on: Any = "cpu") -> float:
    """Median wall time of ``fn`` (on a GPU ``on``: until the GPU has finished it)."""
    for _ in range(warmup):
        fn()
    sync(on)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync(on)
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times)


def train_step(model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> float:
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return float(loss)


def r(value: float, digits: int = 4) -> float:
    """Round for JSON evidence (keeps tiny differences visible)."""
    if value == 0 or not isinstance(value, float):
        return value
    return float(f"{value:.{digits}g}")


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
