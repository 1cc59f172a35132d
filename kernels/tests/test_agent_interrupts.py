"""mgpulab_agent.interrupts: SIGINT first, stacks after the grace, then SIGTERM and SIGKILL, each
step only while it is still the same interrupt of a running kernel; one interrupt_result. The
kernel's PTY is real (its tty end raw, so 0x03 and 0x1c arrive as bytes); its process is a sleeper
in its own session, so the signals are real too."""
import contextlib
import os
import selectors
import subprocess
import sys
import tty

import pytest

from agent_parts import Clock, kernel, link_pair
from mgpulab_agent.interrupts import KILL_AFTER_TERM_S, STACKS_BEFORE_TERM_S, Escalation
from mgpulab_agent.links import Links
from mgpulab_agent.timers import Timers


class Events:
    def on_line(self, link, line):
        pass

    def on_link_closed(self, link):
        pass


@pytest.fixture
def world():
    sel = selectors.DefaultSelector()
    clock = Clock()
    timers = Timers(clock)
    links = Links(sel, {}, Events())
    link, peer = link_pair(sel)
    links.open.append(link)
    watched = []
    escalation = Escalation(timers, links, watched.append)
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(slave, False)
    busy = kernel("k1")
    busy.master, busy.state, busy.outstanding = master, "running", 1
    yield escalation, busy, link, peer, clock, slave, watched
    os.close(master)
    os.close(slave)
    sel.close()


@contextlib.contextmanager
def _sleeper(ignoring):
    """A process in its own session that ignores ``ignoring`` (signal names), until SIGKILL."""
    ignores = "".join(f"signal.signal(signal.{name}, signal.SIG_IGN); " for name in ignoring)
    process = subprocess.Popen([sys.executable, "-c", f"import signal, time; {ignores}print('ready', flush=True); time.sleep(60)"],
                               stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert process.stdout.readline() == b"ready\n"
        yield process
    finally:
        process.kill()
        process.wait()
        process.stdout.close()


def _typed(slave):
    try:
        return os.read(slave, 100)
    except BlockingIOError:
        return b""


def test_an_idle_kernel_is_not_interrupted(world):
    escalation, busy, link, peer, _, slave, _ = world
    busy.outstanding = 0
    escalation.interrupt(link, "r1", busy, 1.0)
    assert peer.frames() == [{"type": "interrupt_result", "requestId": "r1", "kernel": "k1", "step": "not-running", "elapsedMs": 0}]
    assert _typed(slave) == b""


def test_a_cell_that_stops_on_sigint_ends_the_interrupt_there(world):
    escalation, busy, link, peer, clock, slave, watched = world
    escalation.interrupt(link, "r1", busy, 1.0)
    assert _typed(slave) == b"\x03" and watched == [busy]
    escalation.interrupt(link, "r2", busy, 1.0)
    assert peer.frames()[0]["message"] == "kernel k1 is already being interrupted"
    busy.outstanding = 0
    escalation.after_output(busy)
    [result] = peer.frames()
    assert (result["requestId"], result["step"]) == ("r1", "sigint") and busy.interrupt is None
    clock.now += 10
    escalation.timers.run_due()
    assert _typed(slave) == b"", "no escalation after the interrupt ended"


def test_a_cell_that_ignores_sigint_gets_stacks_then_sigterm_then_sigkill(world):
    escalation, busy, link, peer, clock, slave, _ = world
    with _sleeper(["SIGTERM"]) as sleeper:  # it ignores SIGTERM, so the last step is needed
        busy.pid = sleeper.pid
        escalation.interrupt(link, "r1", busy, 1.0)
        assert _typed(slave) == b"\x03"
        clock.now += 1.0
        escalation.timers.run_due()
        assert _typed(slave) == b"\x1c" and busy.interrupt.step == "sigint"
        clock.now += STACKS_BEFORE_TERM_S
        escalation.timers.run_due()
        assert busy.interrupt.step == "sigterm" and busy.ending == "the cell did not stop on interrupt"
        assert sleeper.poll() is None, "SIGTERM is ignored by this one"
        clock.now += KILL_AFTER_TERM_S
        escalation.timers.run_due()
        assert sleeper.wait(10) == -9
        escalation.done(busy)
        [result] = peer.frames()
        assert (result["requestId"], result["step"]) == ("r1", "sigkill")


def test_the_result_goes_to_every_link_when_the_requester_has_gone(world):
    escalation, busy, link, peer, _, _, _ = world
    other, other_peer = link_pair(escalation.links.sel)
    escalation.links.open.append(other)
    escalation.interrupt(link, "r1", busy, 1.0)
    escalation.links.close(link)
    escalation.done(busy, "sigint")
    assert [m["requestId"] for m in other_peer.frames()] == ["r1"]


def test_ending_a_tree_asks_then_kills_after_the_grace(world):
    escalation, busy, _, _, clock, _, _ = world
    with _sleeper(["SIGTERM", "SIGHUP"]) as sleeper:
        busy.pid = sleeper.pid
        escalation.end_tree(busy, "stopped by the lab", 0.5)
        assert busy.ending == "stopped by the lab" and sleeper.poll() is None
        clock.now += 0.5
        escalation.timers.run_due()
        assert sleeper.wait(10) == -9
