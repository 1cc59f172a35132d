"""Rank identity of this process, from the launcher's environment (torchrun conventions)."""
from __future__ import annotations

import os


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"${name} must be an integer, got {raw!r}") from None


def rank() -> int:
    """Global rank ($RANK), 0 outside a multi-process run."""
    return _int_env("RANK", 0)


def world_size() -> int:
    """Number of ranks ($WORLD_SIZE), 1 outside a multi-process run."""
    return _int_env("WORLD_SIZE", 1)


def local_rank() -> int:
    """Rank on this host ($LOCAL_RANK), which picks the GPU on CUDA hosts."""
    return _int_env("LOCAL_RANK", 0)
