"""Start-up is not a hang: a rank that imports for seconds, or whose first step is slow, is starting.

On a GPU host with torch 2.x a rank spends seconds between its launch and its first step: importing torch
and what the cell imports lazily, creating its CUDA context, loading the first kernels' modules. The
watchdog must not call that a hang at a short ``hang_timeout_s`` (the hangs scenario uses 3 s), on either
launcher; and a start-up that never ends is still stopped, by the start-up limit, saying where each rank was.
Reproduced here without a GPU by making the imports and the first step slow on purpose (``slow_start``).
"""
import pytest

import mgpulab as lab
from test_toolkit_supervision import LAUNCHERS, assert_all_gone, start_up_s

import slow_start


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_slow_imports_and_a_slow_first_step_are_not_a_hang(monkeypatch, launcher):
    monkeypatch.setenv("SLOW_START_IMPORT_S", "3")  # the target's module: imported by each rank at start
    monkeypatch.setenv("SLOW_START_LAZY_S", "3")  # imported inside the rank function, after the process group
    monkeypatch.setenv("SLOW_START_FIRST_STEP_S", "3")  # the first step (CUDA context, module loading)
    result = lab.launch(slow_start.train, 2, args=(4,), hang_timeout_s=2, time_limit_s=120, **LAUNCHERS[launcher])
    assert result.ok, result.summary
    assert result.results == [4, 4]
    assert result.duration_s > 9  # it really was slow: 3 s three times, each longer than hang_timeout_s


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_a_start_up_that_never_ends_is_stopped_by_the_start_up_limit(monkeypatch, launcher):
    monkeypatch.setenv("SLOW_START_IMPORT_S", "0")
    limit = round(start_up_s(launcher) + 6)  # long enough for the ranks to reach the stuck import, however slow the host
    for _ in range(4):
        result = lab.launch(slow_start.stuck_import_on_rank, 2, args=(1,), hang_timeout_s=2, startup_timeout_s=limit,
                            time_limit_s=limit + 120, timeout_s=limit + 120, **LAUNCHERS[launcher])
        assert result.status == "start_timeout", result.summary
        if all(o.ready for o in result.ranks):  # both reached their code (a loaded host may take longer)
            break
        limit *= 2
    assert result.summary.startswith(f"ranks 0, 1 did not reach a first step within the start-up limit of {limit} s")
    rank0, rank1 = result.ranks
    assert rank0.state == rank1.state == "killed"
    # where each rank was: rank 1 still importing, rank 0 waiting for it in the first collective
    assert rank1.where is not None and "never.py" in rank1.where, result.summary
    assert "rank 1 starting, in " in result.summary and "rank 0 starting, in all_reduce" in result.summary
    assert_all_gone(result)


SLOW_CELL = """
import importlib, torch, torch.distributed as dist
importlib.import_module("slow_start.lazy")  # slow on purpose, like torch.optim on torch 2.x
t = torch.ones(1)
dist.all_reduce(t)
print("sum", t.item())
"""

STUCK_CELL = """
import torch, torch.distributed as dist
if dist.get_rank() == 0:
    dist.all_reduce(torch.ones(1))
else:
    import time
    time.sleep(600)
"""


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_code_that_imports_slowly_after_its_entry_is_starting_and_code_that_waits_is_hung(monkeypatch, launcher):
    """A cell's code may never beat, so its start-up ends when it reaches the code; a rank importing there (its
    stack says so) is still starting, while one waiting in a collective is stalled at hang_timeout_s."""
    monkeypatch.setenv("SLOW_START_LAZY_S", "5")
    slow = lab.launch_code(SLOW_CELL, 2, init_process_group=True, hang_timeout_s=2, time_limit_s=120,
                           **LAUNCHERS[launcher])
    assert slow.ok, slow.summary
    stuck = lab.launch_code(STUCK_CELL, 2, init_process_group=True, hang_timeout_s=2, time_limit_s=120,
                            **LAUNCHERS[launcher])
    assert stuck.status == "hang", stuck.summary
    assert "rank 0 in all_reduce" in stuck.summary and "rank 1 in <module> (rank_code.py:7)" in stuck.summary
    assert stuck.duration_s < 30 + start_up_s(launcher)  # the stall limit, not the start-up limit
