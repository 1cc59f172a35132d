"""The ``%%ranks`` cell magic (the other magics are the shell's: shell.py).

``%%ranks N`` runs the cell's code on N ranks under the toolkit's launcher,
outside the kernel process: fork/spawn of a notebook's ``__main__`` and "CUDA already initialised" traps do not apply, and a hung
rank cannot wedge the kernel.

    %%ranks 4 [--backend gloo|nccl] [--placement auto|cuda|cpu] [--timeout S] [--hang S] [--time-limit S] [--no-init]

``--placement cpu`` runs CPU ranks over gloo on a GPU host (for rank code that
keeps its tensors on the CPU); by default ranks get the GPUs (see
:func:`mgpulab.devices.detect`).
"""
from __future__ import annotations

import argparse
import shlex
from typing import Optional

RANKS_MAGIC = "%%ranks"


class MagicError(Exception):
    """A magic line that cannot be used; the message says how to fix it."""


class RanksFailed(RuntimeError):
    """The ranks did not all finish: the message is the launcher's diagnosis."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=RANKS_MAGIC, add_help=False, exit_on_error=False)
    parser.add_argument("nprocs", type=int)
    parser.add_argument("--backend", choices=["gloo", "nccl"], default=None)
    parser.add_argument("--placement", choices=["auto", "cuda", "cpu"], default="auto")
    parser.add_argument("--timeout", type=float, default=120.0, help="process-group timeout (s)")
    parser.add_argument("--hang", type=float, default=60.0, help="no progress for this long, once every rank has made some: stacks, then kill (s); "
                             "start-up before a rank's first step is bounded by max(60, S) instead")
    parser.add_argument("--time-limit", type=float, default=None, help="wall-clock limit for the whole run (s)")
    parser.add_argument("--no-init", action="store_true", help="the code calls init_process_group itself")
    return parser


def split_ranks_cell(code: str) -> Optional[tuple[argparse.Namespace, str]]:
    """(options, body) for a ``%%ranks`` cell, None for any other cell."""
    first, _, body = code.partition("\n")
    if not first.strip().startswith(RANKS_MAGIC):
        return None
    words = shlex.split(first.strip()[len(RANKS_MAGIC):])
    try:
        options, unknown = _parser().parse_known_args(words)
    except (argparse.ArgumentError, ValueError) as exc:
        raise MagicError(f"{RANKS_MAGIC}: {exc}. Usage: {RANKS_MAGIC} N [--backend gloo|nccl] [--placement auto|cuda|cpu] [--timeout S] [--hang S] [--time-limit S] [--no-init]") from None
    if unknown:
        raise MagicError(f"{RANKS_MAGIC}: unknown option(s) {' '.join(unknown)}")
    if not 1 <= options.nprocs <= 64:
        raise MagicError(f"{RANKS_MAGIC}: N must be between 1 and 64, not {options.nprocs}")
    # A blank first line keeps the body's line numbers equal to the cell's.
    return options, "\n" + body


def run_ranks_cell(options: argparse.Namespace, body: str) -> None:
    import mgpulab  # imported on use: it pulls in torch

    result = mgpulab.launch_code(
        body,
        nprocs=options.nprocs,
        backend=options.backend,
        placement=options.placement,
        timeout_s=options.timeout,
        hang_timeout_s=options.hang,
        time_limit_s=options.time_limit,
        init_process_group=not options.no_init,
    )
    print(f"[ranks] {result.status}: {result.summary}", flush=True)
    if not result.ok:
        raise RanksFailed(result.summary)
