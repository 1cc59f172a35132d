"""The run tag (``run_id``) this process's metric messages carry unless told otherwise.

Its own module so that :mod:`mgpulab.metrics` and :mod:`mgpulab.heartbeat`
(which metrics calls) both read it without importing each other.
"""
from __future__ import annotations

from typing import Optional

from mgpulab_wire.protocol_generated import MAX_METRIC_TAG_CHARS

_run_id: Optional[str] = None


def check_run_id(run_id: object) -> str:
    """``run_id`` if the lab can carry it: a non-empty string of at most MAX_METRIC_TAG_CHARS characters."""
    if not isinstance(run_id, str) or not run_id:
        raise ValueError("run_id must be a non-empty string or None")
    if len(run_id) > MAX_METRIC_TAG_CHARS:
        raise ValueError(f"run_id must be at most {MAX_METRIC_TAG_CHARS} characters, got {len(run_id)}")
    return run_id


def set_run_id(run_id: Optional[str]) -> None:
    """Tag this process's metric messages with ``run_id`` (None: untagged)."""
    global _run_id
    _run_id = None if run_id is None else check_run_id(run_id)


def current_run_id() -> Optional[str]:
    return _run_id
