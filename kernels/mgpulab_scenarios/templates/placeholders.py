"""The type of each scenario parameter, for the linter and the type checker reading the templates.

A template writes ``PARAM.batch_size`` where the rendered cell has the
validated literal (``64``); ``PARAM`` exists only for the tools: the renderer
drops the line that imports it and never runs this module's code.
``tests/test_scenario_templates.py`` checks these types against the
scenarios' parameters, so a template is checked with the types it is rendered with.
"""
from __future__ import annotations

from typing import Literal


class PARAM:
    batch_size: int
    comm_delay_ms: float
    compare_ddp: bool
    d_in: int
    depth: int
    device_memory_mib: float
    devices: int
    epochs: int
    fault: Literal["none", "uneven_steps", "skip_collective", "slow_rank"]
    fix: Literal["join", "distributed_sampler", "pg_timeout"]
    forward_kind: Literal["python", "tensor"]
    hang_timeout_s: float
    hidden: int
    hidden_size: int
    input_size: int
    lr: float
    manual_target: Literal["module_children", "replicas"]
    num_steps: int
    num_workers: int
    oom_batch_size: int
    output_size: int
    pg_timeout_s: float
    placement: Literal["auto", "cpu"]
    repeats: int
    sample_cost_ms: float
    samples: int
    seed: int
    seq_batch_size: int
    sleep_s: float
    steps: int
    timing_repeats: int
    trim_padding: bool
    weight_kind: Literal["parameter", "buffer", "plain_tensor"]
    world_size: int
