"""Runs that go wrong: a hang, a dying rank, a time limit — each detected, explained, and killed."""
from __future__ import annotations

import os
import sys

import pytest

import mgpulab as lab
import toolkit_rank_fns as fns

TESTS = os.path.dirname(os.path.abspath(__file__))


def assert_all_gone(result):
    for outcome in result.ranks:
        assert outcome.pid is not None
        with pytest.raises(ProcessLookupError):
            os.kill(outcome.pid, 0)


SHIM = [sys.executable, os.path.join(TESTS, "torchrun_shim.py")]
# Both launchers, as `auto` picks them on different hosts (torchrun where it works and DNS is quick, as on
# a GPU host; spawn here). The shim makes Debian's torchrun work on Python 3.11 (see torchrun_shim.py).
LAUNCHERS = {"spawn": {"launcher": "spawn"}, "torchrun": {"launcher": "torchrun", "torchrun_cmd": SHIM}}
_start_up = {}


def start_up_s(name):
    """How long a launch with this launcher takes here to start its ranks and end (measured once)."""
    if name not in _start_up:
        result = lab.launch(fns.hello, 2, args=("start-up",), time_limit_s=120, **LAUNCHERS[name])
        assert result.ok, result.summary
        _start_up[name] = result.duration_s
    return _start_up[name]


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_skipped_collective_is_detected_stacks_shown_and_killed(capsys, launcher):
    # the process-group timeout (60 s) is far away: only the watchdog can end this in time
    result = lab.launch(fns.skip_collective, 2, args=(2,), timeout_s=60, hang_timeout_s=3,
                        time_limit_s=60, **LAUNCHERS[launcher])
    assert result.status == "hang", result.summary
    assert result.duration_s < 20 + start_up_s(launcher)
    rank0, rank1 = result.ranks
    assert rank0.state == rank1.state == "killed"
    assert "in all_reduce" in rank0.stack and "skip_collective" in rank0.stack
    assert rank0.where.startswith("all_reduce (distributed_c10d.py:")
    assert "skip_collective (toolkit_rank_fns.py:" in rank0.where
    assert "skip_collective" in rank1.stack and "wait" in rank1.stack
    assert result.summary.startswith("no heartbeat from rank")
    assert "rank 0 in all_reduce" in result.summary and "rank 1 in wait" in result.summary
    err = capsys.readouterr().err
    assert "[rank 0] Current thread" in err or "[rank 0] Thread" in err  # stacks shown, labelled
    assert_all_gone(result)


@pytest.mark.parametrize("launcher", LAUNCHERS)
@pytest.mark.parametrize("how, reason", [
    ("raise", "ValueError: boom on purpose"),
    ("signal", "killed by SIGKILL"),
    ("exit", "exited with code 3"),
])
def test_a_dying_rank_stops_the_others(how, reason, launcher):
    result = lab.launch(fns.fail_on_rank, 2, args=(1, how), timeout_s=60, time_limit_s=60, **LAUNCHERS[launcher])
    assert result.status == "failed"
    assert result.summary.startswith(f"rank 1 failed first: {reason}"), result.summary
    assert result.ranks[1].state == "failed" and reason in result.ranks[1].reason
    assert result.ranks[1].exit_code == {"raise": 1, "signal": -9, "exit": 3}[how]
    # gloo noticed the peer, or the launcher (torchrun: its agent) stopped it
    assert result.ranks[0].state in ("failed", "killed"), result.summary
    if result.ranks[0].state == "killed":
        assert result.ranks[0].reason == "killed by the launcher: rank 1 failed"
    assert result.duration_s < 20 + start_up_s(launcher)  # not the 60 s process-group timeout
    if how == "raise":
        assert "boom on purpose" in result.ranks[1].traceback
        assert "toolkit_rank_fns.py" in result.ranks[1].traceback
    assert_all_gone(result)


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_time_limit_kills_with_stacks(launcher):
    # The limit must fall after both ranks reached block_forever; how long start-up takes depends on the host and
    # its load, so a run whose ranks were still starting (and are reported so) is repeated with a longer limit.
    limit = round(start_up_s(launcher) + 4)
    for _ in range(4):
        result = lab.launch(fns.block_forever, 2, time_limit_s=limit, timeout_s=60, **LAUNCHERS[launcher])
        assert result.status == "time_limit"
        assert result.duration_s < limit + 15
        assert all(o.state == "killed" for o in result.ranks)
        if all(o.ready for o in result.ranks):
            break
        assert "starting" in result.summary, result.summary  # killed while starting: said so
        limit *= 2
    assert all("block_forever" in o.stack for o in result.ranks), result.summary
    assert f"time limit of {limit:g} s reached" in result.summary
    assert "rank 0 in wait" in result.summary and "rank 1 in wait" in result.summary
    assert all(o.reason == f"killed by the launcher: time limit {limit:g} s" for o in result.ranks)
    assert_all_gone(result)


def test_torchrun_path_with_a_working_torchrun(capsys):
    works, why = lab.torchrun_status()
    if sys.version_info[:2] == (3, 11):
        import torch
        if torch.__version__.startswith("1.13"):
            assert not works and "Std.from_str" in why
    result = lab.launch(fns.hello, 2, args=("via torchrun",), launcher="torchrun", torchrun_cmd=SHIM,
                        time_limit_s=90)
    assert result.ok, result.summary
    assert result.launcher == "torchrun"
    assert [r["sum"] for r in result.results] == [1.0, 1.0]
    assert [r["world"] for r in result.results] == [2, 2]
    out = capsys.readouterr().out
    assert "[rank 1] hello via torchrun from rank 1" in out


class FakeDiagnostics:
    """Stands in for the child registry (mgpulab_wire.processes) the kernel's stack requests read:
    records which ranks the launcher registers."""

    def __init__(self):
        self.live, self.seen = {}, {}

    def register_process(self, pid, label, stack_path):
        self.live[pid] = self.seen[pid] = (label, stack_path)

    def unregister_process(self, pid):
        self.live.pop(pid, None)


def test_sigquit_dumps_a_ranks_stack_without_stopping_it(capsys, monkeypatch):
    from mgpulab_wire import processes
    fake = FakeDiagnostics()
    monkeypatch.setattr(processes, "register_process", fake.register_process)
    monkeypatch.setattr(processes, "unregister_process", fake.unregister_process)
    result = lab.launch(fns.dump_own_stack, 2, time_limit_s=60)
    assert result.ok, result.summary
    # the kernel's own stack requests saw both ranks while they ran, and none after
    assert sorted(label for label, _ in fake.seen.values()) == ["rank 0", "rank 1"]
    assert set(fake.seen) == {o.pid for o in result.ranks} and fake.live == {}
    assert result.results == ["done", "done"]
    assert all("dump_own_stack" in o.stack for o in result.ranks)
    err = capsys.readouterr().err
    assert "[rank 1] Current thread" in err and "dump_own_stack" in err
