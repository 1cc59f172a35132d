"""mgpulab_agent.timers: one-shot actions on a clock, run by the agent's loop."""
from agent_parts import Clock
from mgpulab_agent.timers import Timers


def test_due_actions_run_in_time_order_and_same_time_in_scheduling_order():
    clock = Clock()
    timers = Timers(clock)
    ran = []
    timers.after(2.0, lambda: ran.append("late"))
    timers.after(1.0, lambda: ran.append("first"))
    timers.after(1.0, lambda: ran.append("second"))
    timers.run_due()
    assert ran == []
    clock.now += 1.0
    timers.run_due()
    assert ran == ["first", "second"]
    clock.now += 5.0
    timers.run_due()
    assert ran == ["first", "second", "late"]


def test_a_cancelled_timer_never_runs_and_does_not_shorten_the_wait():
    clock = Clock()
    timers = Timers(clock)
    ran = []
    early = timers.after(0.5, lambda: ran.append("early"))
    timers.after(3.0, lambda: ran.append("kept"))
    early.cancel()
    assert timers.wait(10.0) == 3.0
    behind = timers.after(4.0, lambda: ran.append("behind"))  # not at the head: still in the heap when due
    behind.cancel()
    clock.now += 5.0
    timers.run_due()
    assert ran == ["kept"]


def test_the_wait_is_capped_and_never_negative():
    clock = Clock()
    timers = Timers(clock)
    assert timers.wait(1.0) == 1.0
    timers.after(5.0, lambda: None)
    assert timers.wait(1.0) == 1.0
    clock.now += 7.0
    assert timers.wait(1.0) == 0.0


def test_an_action_may_schedule_another_that_runs_on_a_later_turn():
    clock = Clock()
    timers = Timers(clock)
    ran = []
    timers.after(1.0, lambda: timers.after(1.0, lambda: ran.append("then")))
    clock.now += 1.0
    timers.run_due()
    assert ran == []
    clock.now += 1.0
    timers.run_due()
    assert ran == ["then"]
