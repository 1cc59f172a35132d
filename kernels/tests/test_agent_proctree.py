"""The agent's walk of its kernels' process trees (proctree.py), with real processes: this test process plays
the agent (the kernels are its children), each "kernel" starts a child that leaves its session, and each
carries its own tag in its environment. One Snapshot serves every kernel's walk of a moment: /proc is read
once, and each of the agent's children's environments at most once, however many kernels there are (with
a read per kernel, 60 kernels cost the agent half a core)."""
import os
import subprocess
import sys

import pytest

import agent_parts
from mgpulab_agent import proctree
from mgpulab_agent.kernel_proc import remember_trees

# A kernel that starts a child in a session of its own (as torchrun's agents do), prints its pid, then waits.
_KERNEL = (
    "import subprocess, sys\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import sys; sys.stdin.read()'], stdin=subprocess.PIPE,"
    " start_new_session=True)\n"
    "print(child.pid, flush=True)\n"
    "sys.stdin.read()\n"
)


@pytest.fixture
def kernels():
    started = []
    for i in range(3):
        tag = f"MGPULAB_AGENT_KERNEL=k{i}:test"
        env = {**os.environ, "MGPULAB_AGENT_KERNEL": f"k{i}:test"}
        proc = subprocess.Popen([sys.executable, "-c", _KERNEL], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env=env, start_new_session=True)
        grandchild = int(proc.stdout.readline())
        started.append((proc, grandchild, tag.encode()))
    yield started
    for proc, grandchild, _ in started:
        for pid in (grandchild, proc.pid):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        proc.wait(10)


def test_one_snapshot_walks_every_kernel_and_reads_each_environment_once(kernels, monkeypatch):
    reads = []
    real = proctree._environment
    monkeypatch.setattr(proctree, "_environment", lambda pid: reads.append(pid) or real(pid))
    snapshot = proctree.Snapshot()
    trees = []
    for proc, grandchild, tag in kernels:
        trees.append(proctree.tree(proc.pid, set(), tag, snapshot))
    for (proc, grandchild, _), found in zip(kernels, trees):
        assert proc.pid in found and grandchild in found, "the kernel and the child it started in its own session"
        others = {p.pid for p, _, _ in kernels if p is not proc}
        assert not others & set(found), "no other kernel's processes"
    assert len(reads) == len(set(reads)), f"an environment read twice in one snapshot: {sorted(reads)}"


def test_a_walk_without_a_snapshot_reads_proc_itself(kernels):
    proc, grandchild, tag = kernels[0]
    known = set()
    found = proctree.tree(proc.pid, known, tag)
    assert {proc.pid, grandchild} <= set(found)
    assert {(pid, p.start) for pid, p in found.items()} <= known, "what a walk saw is remembered"


def test_the_agents_walk_reads_proc_once_for_all_its_kernels(kernels, monkeypatch):
    scans = []
    real = proctree.all_procs
    monkeypatch.setattr(proctree, "all_procs", lambda: scans.append(1) or real())
    procs = []
    for i, (proc, grandchild, tag) in enumerate(kernels):
        kernel = agent_parts.kernel(f"k{i}")
        kernel.pid, kernel.state, kernel.tag = proc.pid, "running", tag
        procs.append((kernel, proc.pid, grandchild))
    quiet = agent_parts.kernel("queued")  # not running: no tree to walk
    remember_trees([kernel for kernel, _, _ in procs] + [quiet])
    assert len(scans) == 1, f"{len(scans)} reads of /proc for {len(procs)} kernels"
    for kernel, pid, grandchild in procs:
        assert {pid, grandchild} <= {seen for seen, _ in kernel.known}
    assert not quiet.known
