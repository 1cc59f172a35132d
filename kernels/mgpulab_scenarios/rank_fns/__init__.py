"""Rank functions for the scenarios' DDP experiments (rank processes import them by name).

Device-aware: on an NCCL process group each rank uses its GPU
(``lab.devices.rank_device()`` = ``cuda:LOCAL_RANK``), on gloo the CPU. With
``emit=True`` (the notebook cells) a rank logs its metrics — tagged with the
launch's ``run_id`` — so charts can draw them per rank, and returns the
metric messages it sent as ``series`` (the cell's evidence recorder adds them:
rank frames go from the rank's process straight to the lab, not through the
kernel).

Loss: ``loss`` is always the mean over the GLOBAL batch, as the one-device and
DataParallel variants log it, so every variant's loss line is comparable on
one chart: each step's ``Σ_r rows_r · loss_r / Σ_r rows_r`` over the ranks,
all-reduced once after the timed loop (a collective per step would change the
step times being measured) and logged by rank 0 only. Each rank also logs
its own shard's loss as ``rank_loss``. Where ranks run different numbers of
steps (the hang experiments) no global loss exists: they log ``rank_loss`` only.

The functions live by job: :mod:`.training` (runs that finish and are timed), :mod:`.faults`
(runs that break the lockstep on purpose), :mod:`.rank_kit` (what they all do the same way); the
scenario templates call them as ``rank_fns.<name>``.
"""
from __future__ import annotations

from .faults import (ddp_uneven_batches, ddp_collective_fault, ddp_oom_on_one_rank, ddp_dtype_mismatch,
                     ddp_without_init)
from .training import (ddp_train, PythonHeavy, ddp_forward_overhead, ddp_comm, comm_share, ddp_count_collectives,
                       ddp_replica_identity)

__all__ = ["ddp_train", "PythonHeavy", "ddp_forward_overhead", "ddp_comm", "comm_share", "ddp_count_collectives",
           "ddp_replica_identity", "ddp_uneven_batches", "ddp_collective_fault", "ddp_oom_on_one_rank",
           "ddp_dtype_mismatch", "ddp_without_init"]
