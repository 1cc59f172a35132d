"""CPU emulation of ``torch.nn.parallel.replicate``, run on every forward.

Structure and sharing follow torch's ``replicate`` exactly: new module objects
from ``Module._replicate_for_data_parallel`` (a shallow copy of ``__dict__``),
children re-linked per replica, parameters set as non-leaf tensors, buffers
set per replica. What ``Broadcast`` / ``comm.broadcast_coalesced`` do on GPUs:

* replica 0 (the source device): parameters are autograd *views* of the
  originals (same storage), buffers are the *same tensor objects* — so in-place
  updates made in forward on replica 0 (BatchNorm running stats, an in-place
  counter ``self.n += 1`` on a buffer) reach the original module, exactly as
  DataParallel documents;
* replicas 1..n-1: parameters are differentiable copies (``clone``, or ``to``
  the replica's GPU for virtual devices; gradients flow back to the
  originals), buffers are detached copies. Updates there, and any attribute
  rebinding on any replica, are lost after forward.

Emulation only: plain tensor attributes are wrapped on replicas 1..n-1 so that
using them raises the GPU's cross-device error (see ``_emulated_device``).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Dict, List, Optional, Sequence

import torch
from torch import nn

from ._emulated_device import wrap_attribute


def _copy(tensor: torch.Tensor, target: Optional[torch.device]) -> torch.Tensor:
    """A differentiable copy on ``target`` (a clone where it already lives)."""
    if target is None or tensor.device == target:
        return tensor.clone()
    return tensor.to(target, copy=True)


def _broadcast(tensors: List[torch.Tensor], count: int, detach: bool,
               targets: Optional[Sequence[torch.device]] = None) -> List[List[torch.Tensor]]:
    if not tensors:
        return [[] for _ in range(count)]
    where: List[Optional[torch.device]] = list(targets) if targets is not None else [None] * count
    if detach:
        first = list(tensors)
        rest = [[_copy(t.detach(), where[j]) for t in tensors] for j in range(1, count)]
    else:
        first = [t.view_as(t) for t in tensors]
        rest = [[_copy(t, where[j]) for t in tensors] for j in range(1, count)]
    return [first] + rest


def _check_replicatable(network: nn.Module) -> None:
    try:
        # private in torch (absent from its type stubs), present in 1.13 and 2.x
        from torch.nn.parallel.replicate import _replicatable_module  # type: ignore[attr-defined]
    except ImportError:  # private helper moved: skip the ScriptModule check
        return
    if not _replicatable_module(network):
        raise RuntimeError("Cannot replicate network where python modules are childrens of ScriptModule")


def replicate(network: nn.Module, devices: Sequence[int], detach: bool = False,
              targets: Optional[Sequence[torch.device]] = None) -> List[nn.Module]:
    """One replica of ``network`` per emulated device index in ``devices``.

    ``targets``: the torch device each replica's copies go to (virtual devices on
    GPUs); None keeps them where the originals are (the CPU emulation).
    """
    _check_replicatable(network)
    if not devices:
        return []
    count = len(devices)
    home = devices[0]

    params: List[torch.Tensor] = list(network.parameters())
    param_indices = {p: i for i, p in enumerate(params)}
    param_copies = _broadcast(params, count, detach, targets)

    buffers = list(network.buffers())
    buffers_rg = [b for b in buffers if b.requires_grad and not detach]
    buffers_not_rg = [b for b in buffers if not (b.requires_grad and not detach)]
    indices_rg = {b: i for i, b in enumerate(buffers_rg)}
    indices_not_rg = {b: i for i, b in enumerate(buffers_not_rg)}
    copies_rg = _broadcast(buffers_rg, count, detach, targets)
    copies_not_rg = _broadcast(buffers_not_rg, count, True, targets)

    modules = list(network.modules())
    module_indices: Dict[nn.Module, int] = {}
    module_copies: List[List[nn.Module]] = [[] for _ in devices]
    for i, module in enumerate(modules):
        module_indices[module] = i
        for j in range(count):
            replica = module._replicate_for_data_parallel()
            replica._former_parameters = OrderedDict()
            if devices[j] != home:
                _wrap_plain_tensors(replica, module, home)
            module_copies[j].append(replica)

    for i, module in enumerate(modules):
        for key, child in module._modules.items():
            for j in range(count):
                replica = module_copies[j][i]
                if child is None:
                    replica._modules[key] = None
                else:
                    setattr(replica, key, module_copies[j][module_indices[child]])
        for key, param in module._parameters.items():
            for j in range(count):
                replica = module_copies[j][i]
                if param is None:
                    replica._parameters[key] = None
                else:
                    copy = param_copies[j][param_indices[param]]
                    setattr(replica, key, copy)
                    replica._former_parameters[key] = copy
        for key, buf in module._buffers.items():
            for j in range(count):
                replica = module_copies[j][i]
                if buf is None:
                    replica._buffers[key] = None
                elif buf.requires_grad and not detach:
                    setattr(replica, key, copies_rg[j][indices_rg[buf]])
                else:
                    setattr(replica, key, copies_not_rg[j][indices_not_rg[buf]])

    return [module_copies[j][0] for j in range(count)]


def _wrap_plain_tensors(replica: nn.Module, original: nn.Module, home: int) -> None:
    for name, value in vars(original).items():
        if isinstance(value, torch.Tensor) and not isinstance(value, nn.Parameter):
            replica.__dict__[name] = wrap_attribute(value, home, f"{type(original).__name__}.{name}")
