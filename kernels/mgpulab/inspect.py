"""What every replica (DataParallel) or rank (DDP) holds: checksums side by side.

* :func:`replica_state` — the original module and each replica of the last
  forward (build the wrapper with ``keep_replicas=True``). Shows updates made
  inside ``forward`` that stay on replicas (lost), and which reach the
  original (in-place on replica 0, e.g. BatchNorm running stats from device
  0's chunk only). Replicas are snapshots taken at that forward: after
  ``optimizer.step()`` the original (and replica 0, which shares its
  storage) moves on while replicas 1..n-1 keep the old values.
* :func:`rank_state` — collective (call it on every rank): each rank's
  checksums, gathered with ``all_gather_object``. Shows unsynchronised
  buffers (BatchNorm running stats under DDP) or parameters that drifted.

Each row is a parameter, buffer, tensor attribute or plain number attribute
(``self.calls``; attributes of torch's own modules are configuration and left out); a tensor's value is its sum (float64) and its digest a hash
of its bytes, so "diverged" means "not bit-identical".
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn

from ._emulated_device import as_plain

Entry = Tuple[str, Optional[float], Optional[str]]  # (kind, value, digest)


@dataclass
class StateRow:
    name: str
    kind: str  # parameter | buffer | tensor attribute | attribute
    values: List[Optional[float]]
    digests: List[Optional[str]]

    @property
    def diverged(self) -> bool:
        return len(set(self.digests)) > 1


@dataclass
class StateTable:
    """Checksums per column (replica or rank); ``render()`` for text."""

    title: str
    columns: List[str]
    rows: List[StateRow] = field(default_factory=list)

    def diverged(self) -> List[StateRow]:
        return [row for row in self.rows if row.diverged]

    def row(self, name: str) -> StateRow:
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(name)

    def to_dict(self) -> dict:
        return {"title": self.title, "columns": self.columns,
                "rows": [{"name": r.name, "kind": r.kind, "values": r.values, "digests": r.digests,
                          "diverged": r.diverged} for r in self.rows]}

    def render(self, only_diverged: bool = False, max_rows: int = 200) -> str:
        rows = self.diverged() if only_diverged else self.rows
        header = ["", "name", "kind", *self.columns]
        body = []
        for row in rows[:max_rows]:
            reference = row.digests[0]
            cells = [_format(v) + ("*" if d != reference else "") for v, d in zip(row.values, row.digests)]
            body.append(["≠" if row.diverged else "", row.name, row.kind, *cells])
        widths = [max(len(str(line[i])) for line in [header, *body]) for i in range(len(header))]
        lines = [self.title, "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
        lines += ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in body]
        if len(rows) > max_rows:
            lines.append(f"… {len(rows) - max_rows} more rows")
        differing = self.diverged()
        if differing:
            names = ", ".join(r.name for r in differing[:8]) + (" …" if len(differing) > 8 else "")
            lines.append(f"≠ {len(differing)} of {len(self.rows)} entries differ (* = differs from "
                         f"{self.columns[0]}): {names}")
        else:
            lines.append(f"all {len(self.rows)} entries identical across {len(self.columns)} columns")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


def module_state(module: nn.Module, layout: Optional[nn.Module] = None) -> Dict[str, Entry]:
    """Checksums of ``module``'s parameters, buffers and attributes.

    ``layout`` names what to look at (default: ``module`` itself); pass the
    original module to read a DataParallel replica, whose parameters are
    plain attributes rather than registered parameters.
    """
    layout = module if layout is None else layout
    out: Dict[str, Entry] = {}
    for prefix, sub in layout.named_modules():
        target = _resolve(module, prefix)
        dot = f"{prefix}." if prefix else ""
        for key, value in sub._parameters.items():
            if value is not None:
                out[dot + key] = _tensor_entry("parameter", getattr(target, key, None))
        for key, value in sub._buffers.items():
            if value is not None:
                out[dot + key] = _tensor_entry("buffer", getattr(target, key, None))
        for key, value in vars(sub).items():
            if key.startswith("_") or key == "training" or _is_torch_module(sub):
                continue  # torch's own modules hold configuration there (in_features, eps, …)
            current = target.__dict__.get(key) if target is not None else None
            if isinstance(value, torch.Tensor):
                out[dot + key] = _tensor_entry("tensor attribute", current)
            elif isinstance(value, (bool, int, float)):
                out[dot + key] = _number_entry(current)
    return out


def compare(states: Sequence[Dict[str, Entry]], columns: Sequence[str], title: str) -> StateTable:
    """A table from per-column ``module_state`` dicts (rows in first-seen order)."""
    names: List[str] = []
    for state in states:
        names.extend(n for n in state if n not in names)
    rows = []
    for name in names:
        entries = [state.get(name) for state in states]
        kind = next(e[0] for e in entries if e is not None)
        rows.append(StateRow(name, kind, [e[1] if e else None for e in entries],
                             [e[2] if e else None for e in entries]))
    return StateTable(title, list(columns), rows)


def replica_state(dp_model: nn.Module, include_original: bool = True) -> StateTable:
    """The original module and each replica of the last forward (needs ``keep_replicas=True``)."""
    replicas = list(getattr(dp_model, "last_replicas", []) or [])
    if not replicas:
        raise ValueError("no replicas kept: build it with lab.DataParallel(model, keep_replicas=True) "
                         "and run a forward first")
    original = dp_model.module
    if not isinstance(original, nn.Module):
        raise TypeError(f"{type(dp_model).__name__} wraps no module: expected a DataParallel model")
    phases = getattr(dp_model, "last_phases", None)
    devices = phases.devices if phases is not None else list(range(len(replicas)))
    states = [module_state(r, layout=original) for r in replicas]
    columns = [f"replica {i} (dev {d})" for i, d in enumerate(devices[:len(replicas)])]
    if include_original:
        states.insert(0, module_state(original))
        columns.insert(0, "original")
    return compare(states, columns, "DataParallel replicas after the last forward")


def rank_state(model: nn.Module, group: Any = None) -> StateTable:
    """Every rank's checksums (collective: call on all ranks; each gets the table)."""
    import torch.distributed as dist
    module = getattr(model, "module", model)
    local = module_state(module)
    gathered: List[Any] = [None] * dist.get_world_size(group)
    dist.all_gather_object(gathered, local, group=group)
    return compare(gathered, [f"rank {r}" for r in range(len(gathered))], "DDP ranks")


def _is_torch_module(module: nn.Module) -> bool:
    return type(module).__module__.startswith("torch.")


def _resolve(module: nn.Module, path: str) -> Optional[nn.Module]:
    current: Optional[nn.Module] = module
    for part in path.split(".") if path else []:
        current = current._modules.get(part) if current is not None else None
    return current


def _tensor_entry(kind: str, value: Any) -> Entry:
    if not isinstance(value, torch.Tensor):
        return (kind, None, None)
    tensor = as_plain(value).detach()
    if tensor.is_meta or tensor.layout != torch.strided:
        return (kind, None, f"{tensor.layout}/{tensor.device.type}")
    tensor = tensor.cpu().contiguous()
    numbers = tensor.abs() if tensor.is_complex() else tensor
    total = float(numbers.double().sum())
    raw = tensor.reshape(-1).view(torch.uint8) if tensor.element_size() > 1 else tensor.reshape(-1)
    digest = hashlib.blake2b(raw.numpy().tobytes() + str(tuple(tensor.shape)).encode(), digest_size=8)
    return (kind, total, digest.hexdigest())


def _number_entry(value: Any) -> Entry:
    if not isinstance(value, (bool, int, float)):
        return ("attribute", None, None)
    return ("attribute", float(value), repr(value))


def _format(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:.6g}"
