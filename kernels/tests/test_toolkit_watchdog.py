"""Pure pieces of supervision: stall policy, stack summaries, output labelling, control framing."""
from __future__ import annotations

import pytest

from mgpulab import _channel, watchdog
from mgpulab._relay import LineLabeller

DUMP = """Thread 0x00007f31947c66c0 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait
  File "/usr/lib/python3.11/threading.py", line 975 in run
  File "/usr/lib/python3.11/threading.py", line 1038 in _bootstrap_inner
  File "/usr/lib/python3.11/threading.py", line 995 in _bootstrap

Current thread 0x00007f3194a81040 (most recent call first):
  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 1536 in all_reduce
  File "/home/me/train.py", line 40 in step
  File "/home/me/train.py", line 60 in main
  File "/usr/lib/python3/dist-packages/torch/multiprocessing/spawn.py", line 69 in _wrap
  File "<string>", line 1 in <module>
"""


def test_stall_policy():
    dog = watchdog.Watchdog(5.0, startup_s=30.0)
    for rank in (0, 1, 2):
        dog.started(rank, now=0.0)
    dog.beat(0, now=1.0, step=3)
    dog.beat(1, now=1.0, step=3)
    dog.exited(1, 0)
    # rank 2 is still starting: rank 0, silent past its stall limit, may be waiting for it in a collective
    assert dog.stalled(now=6.1) == []
    assert dog.stalled(now=29.9) == []
    late = dog.check(now=30.1)  # a start-up that never ends is reported, with its own limit
    assert late is not None and late.ranks == [2] and late.starting and late.limit_s == 30.0
    dog.beat(2, now=30.0, step=0)  # every live rank has started: now silence is a stall
    assert dog.stalled(now=30.1) == [0]
    stall = dog.check(now=30.1)
    assert stall is not None and not stall.starting and stall.limit_s == 5.0 and stall.silent_s > 29
    dog.beat(0, now=30.0, step=4)
    assert dog.stalled(now=34.9) == []
    assert dog.stalled(now=35.1) == [0, 2]


def test_start_up_is_never_judged_by_the_stall_limit():
    """Imports, CUDA initialisation and a slow first step: seconds of silence before a rank's first beat."""
    dog = watchdog.Watchdog(2.0)  # the default start-up limit
    assert dog.startup_s == watchdog.DEFAULT_STARTUP_S
    for rank in (0, 1):
        dog.started(rank, now=0.0)
    assert dog.stalled(now=watchdog.DEFAULT_STARTUP_S - 0.1) == []
    dog.beat(0, now=10.0, step=0)
    assert dog.starting(1) and not dog.starting(0)
    assert dog.stalled(now=watchdog.DEFAULT_STARTUP_S - 0.1) == []  # rank 0 waits for rank 1 to start
    assert dog.stalled(now=watchdog.DEFAULT_STARTUP_S + 0.1) == [1]
    assert watchdog.Watchdog(90.0).startup_s == 90.0  # never shorter than the stall limit


def test_code_that_may_never_beat_starts_until_its_entry():
    dog = watchdog.Watchdog(2.0, startup_s=30.0, startup_ends=watchdog.ENTRY)
    for rank in (0, 1):
        dog.started(rank, now=0.0)
    assert dog.stalled(now=10.0) == []  # neither has reached its code: start-up
    dog.entered(0, now=10.0)
    assert dog.stalled(now=20.0) == []  # rank 1 still starting: rank 0 may be waiting for it
    dog.entered(1, now=20.0)
    stall = dog.check(now=22.5)
    assert stall is not None and stall.ranks == [0, 1] and not stall.starting
    assert dog.to_probe(stall) == [0, 1]  # no beat yet: a stack may show them importing
    dog.still_starting(1, now=22.5)  # rank 1's stack showed an import
    assert dog.stalled(now=22.5) == [0]
    dog.beat(0, now=23.0, step=0)
    assert dog.to_probe(dog.check(now=25.1)) == [1]
    assert not dog.start_up_over(1, now=29.0) and dog.start_up_over(1, now=30.1)
    first_step = watchdog.Watchdog(2.0)
    first_step.started(0, now=0.0)
    first_step.entered(0, now=1.0)
    assert first_step.stalled(now=10.0) == []  # a function starts until its first beat


IMPORTING = """Current thread 0x00007f3194a81040 (most recent call first):
  File "/usr/lib/python3/dist-packages/torch/optim/_optim_utils.py", line 43 in <module>
  File "<frozen importlib._bootstrap>", line 488 in _call_with_frames_removed
  File "<frozen importlib._bootstrap_external>", line 940 in exec_module
  File "<frozen importlib._bootstrap>", line 1331 in _find_and_load
  File "/home/me/rank_code.py", line 2 in <module>
"""

CUDA_INIT = """Current thread 0x00007f3194a81040 (most recent call first):
  File "/usr/lib/python3/dist-packages/torch/cuda/__init__.py", line 319 in _lazy_init
  File "/home/me/train.py", line 12 in main
"""


def test_start_up_work_is_read_from_a_stack():
    assert watchdog.in_start_up(IMPORTING)
    assert watchdog.in_start_up(CUDA_INIT)
    assert not watchdog.in_start_up(DUMP)  # waiting in all_reduce is not start-up
    assert not watchdog.in_start_up("")


def test_stack_dump_parsing_and_summary():
    stacks = watchdog.parse_stack_dump(DUMP)
    assert len(stacks) == 2 and stacks[1].current
    assert watchdog.main_thread(stacks) is stacks[1]
    assert watchdog.where(DUMP) == "all_reduce (distributed_c10d.py:1536) ← step (train.py:40)"
    text = watchdog.summarise([
        watchdog.RankReport(1, "exited", exit_code=0),
        watchdog.RankReport(0, "killed", stack=DUMP, last_step=7),
    ])
    assert text == ("rank 0 in all_reduce (distributed_c10d.py:1536) ← step (train.py:40), last step 7; "
                    "rank 1 exited (code 0)")


def test_line_labeller_prefixes_lines_progress_bars_and_split_utf8():
    out = []
    labeller = LineLabeller("[rank 2] ", out.append)
    data = "a\nb\r\ncaf\u00e9 10%\r20%\rdone\npartial".encode()
    for i in range(len(data)):  # one byte at a time: splits inside \r\n and inside é
        labeller.feed(data[i:i + 1], now=0.0)
    labeller.flush_idle(now=0.1)
    assert "".join(out) == "[rank 2] a\n[rank 2] b\r\n[rank 2] caf\u00e9 10%\r[rank 2] 20%\r[rank 2] done\n"
    labeller.flush_idle(now=1.0)  # an unfinished line is shown once it has waited
    labeller.feed(b" more\n", now=1.0)
    labeller.feed(b"tail", now=1.0)
    labeller.close()
    assert "".join(out).endswith("[rank 2] partial more\n[rank 2] tail\n")


def test_control_messages_survive_arbitrary_splits():
    messages = [("hello", 123), ("beat", 5), ("result", b"\x00" * 70000), ("error", "E", "m", "tb")]
    data = b"".join(_channel.encode(m) for m in messages)
    decoder = _channel.Decoder()
    got = []
    for start in range(0, len(data), 4093):
        got.extend(decoder.feed(data[start:start + 4093]))
    assert got == messages


def test_handshake_is_checked():
    line = _channel.handshake("ab" * 16, "ctl", 3)
    assert _channel.parse_handshake(line) == ("ab" * 16, "ctl", 3)
    with pytest.raises(ValueError):
        _channel.parse_handshake(b"MGL1 token shell 0\n")


def test_lost_peer_errors_are_collateral():
    from mgpulab._supervisor import is_collateral
    assert is_collateral("RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:1")
    assert not is_collateral("ValueError: boom")
    assert not is_collateral("RuntimeError: [gloo] Timed out waiting 5000ms for recv operation to complete")
    assert not is_collateral(None)
