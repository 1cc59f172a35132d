"""CPU emulation of ``torch.nn.parallel.scatter_gather`` (same structure, same results).

``scatter`` mirrors torch's ``scatter_map`` line by line; only the leaf differs:
``Scatter.apply`` (``comm.scatter``, i.e. ``tensor.chunk(len(devices), dim)``
then a copy to each GPU) becomes ``tensor.chunk`` with chunk 0 kept as a view
(on GPUs the chunk already on device 0 is not copied either) and the other
chunks cloned, so the copy cost is real. Virtual devices on GPUs pass their own
``place`` (a copy to the GPU each virtual device lives on). ``gather`` mirrors ``gather_map``;
``Gather.apply`` (``comm.gather``) becomes ``torch.cat`` with comm.gather's size
check and its scalar-unsqueeze warning.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, List, Optional, Sequence, Tuple

import torch

from ._emulated_device import as_plain


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


Place = Callable[[torch.Tensor, int], torch.Tensor]


def copy_to_device(chunk: torch.Tensor, index: int) -> torch.Tensor:
    """Emulated devices on the CPU: chunk 0 stays a view (as on device 0), the others are copied."""
    return chunk if index == 0 else chunk.clone(memory_format=torch.contiguous_format)


def scatter_tensor(tensor: torch.Tensor, devices: Sequence[int], dim: int = 0,
                   place: Optional[Place] = None) -> Tuple[torch.Tensor, ...]:
    if not devices:
        raise RuntimeError("Expected at least one device to scatter to")
    chunks = tensor.chunk(len(devices), dim)
    place = place or copy_to_device
    return tuple(place(c, i) for i, c in enumerate(chunks))


def scatter(inputs: Any, devices: Sequence[int], dim: int = 0, place: Optional[Place] = None) -> List[Any]:
    """Split ``inputs`` for ``devices`` exactly as ``torch.nn.parallel.scatter`` does.

    Tensors are chunked along ``dim`` (``torch.chunk`` sizes: ceil(B/n) each, so
    a batch of 6 on 4 devices gives 3 chunks of 2 and device 3 gets nothing);
    tuples, lists, dicts and namedtuples are scattered element-wise and
    truncated to the shortest; other objects are repeated once per device.
    ``place(chunk, i)`` puts chunk i on its device (default: :func:`copy_to_device`).
    """
    def scatter_map(obj: Any) -> Any:
        if isinstance(obj, torch.Tensor):
            return scatter_tensor(obj, devices, dim, place)
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in devices]

    try:
        return scatter_map(inputs)
    finally:
        scatter_map = None  # type: ignore[assignment]  # break the closure's reference cycle


def scatter_kwargs(inputs: tuple, kwargs: dict, devices: Sequence[int],
                   dim: int = 0, place: Optional[Place] = None) -> Tuple[tuple, tuple]:
    """``torch.nn.parallel.scatter_kwargs``: per-device ``(args, kwargs)`` padded to equal length."""
    scattered_inputs = scatter(inputs, devices, dim, place) if inputs else []
    scattered_kwargs = scatter(kwargs, devices, dim, place) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather_tensors(tensors: Sequence[torch.Tensor], dim: int = 0,
                   target: Optional[torch.device] = None) -> torch.Tensor:
    tensors = [as_plain(t) for t in tensors]
    if target is not None:  # virtual devices on several GPUs: bring every output to the output device
        tensors = [t if t.device == target else t.to(target) for t in tensors]
    if all(t.dim() == 0 for t in tensors) and dim == 0:
        tensors = [t.view(1) for t in tensors]
        warnings.warn("Was asked to gather along dimension 0, but all input tensors were "
                      "scalars; will instead unsqueeze and return a vector.")
    first = tensors[0]
    wrapped = dim if dim >= 0 else dim + first.dim()
    for t in tensors[1:]:
        if t.dim() != first.dim():
            raise RuntimeError("Expected all input tensors to have the same number of dimensions")
        expected = list(first.shape)
        expected[wrapped] = t.size(wrapped)
        if list(t.shape) != expected:
            raise RuntimeError(f"Gather got an input of invalid size: got {list(t.shape)}, "
                               f"but expected {expected}")
    return torch.cat(tensors, dim)


def gather(outputs: Sequence[Any], dim: int = 0, target: Optional[torch.device] = None) -> Any:
    """Combine per-device outputs on device 0 (``target``) as ``torch.nn.parallel.gather`` does."""
    def gather_map(outputs: Sequence[Any]) -> Any:
        out = outputs[0]
        if isinstance(out, torch.Tensor):
            return gather_tensors(outputs, dim, target)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs)))
        return type(out)(map(gather_map, zip(*outputs)))

    try:
        return gather_map(outputs)
    finally:
        gather_map = None  # type: ignore[assignment]
