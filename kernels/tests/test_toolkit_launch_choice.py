"""How a launch starts: the launcher choice (torchrun only where it is quick), what each rank is
given (its planned device, gloo on loopback), and errors that say how to fix a backend mismatch."""
from __future__ import annotations

import pytest

import mgpulab as lab
from mgpulab import _rank, launcher

LIMITS = {"time_limit_s": 90, "timeout_s": 60}


@pytest.mark.parametrize("requested, works, fqdn_s, nprocs, expected, words", [
    ("auto", True, 0.001, 2, launcher.TORCHRUN, "torchrun works here"),
    ("auto", True, None, 2, launcher.SPAWN, "did not answer within 0.25 s"),      # no DNS: the resolver times out
    ("auto", True, 0.05, 4, launcher.SPAWN, "each of its 7 agent events and here it took 50 ms"),
    ("auto", True, 0.02, 2, launcher.TORCHRUN, "torchrun works here"),              # 5 calls × 20 ms fit the budget
    ("auto", False, 0.001, 2, launcher.SPAWN, "broken"),
    ("torchrun", False, None, 2, launcher.TORCHRUN, "requested although broken"),
    ("spawn", True, 0.001, 2, launcher.SPAWN, "requested"),
])
def test_torchrun_only_where_it_works_and_names_resolve_quickly(requested, works, fqdn_s, nprocs, expected, words):
    why = "torchrun works here" if works else "broken"
    name, note = launcher.choose_launcher(requested, works, why, fqdn_s, nprocs)
    assert name == expected and words in note


def test_bad_launcher_names_are_refused():
    with pytest.raises(ValueError, match="launcher must be"):
        launcher.choose_launcher("mpirun", True, "", 0.0, 2)


def test_this_hosts_name_resolution_is_measured_once():
    took = launcher.name_resolution_s()
    assert took is None or 0 <= took < launcher.NAME_PROBE_S
    assert launcher.name_resolution_s() is took  # cached per process


@pytest.mark.parametrize("message, words", [
    ("No backend type associated with device type cpu", "placement='cpu'"),
    ("NCCL error: invalid usage, Duplicate GPU detected : rank 0 and rank 1 both on CUDA device", "two ranks on one GPU"),
    ("No backend type associated with device type cuda", "placement='auto'"),
])
def test_backend_mismatches_say_how_to_fix_them(message, words):
    assert words in _rank.backend_hint(message, _rank.RankSpec(2, "nccl", "", "", ""))
    assert _rank.backend_hint("division by zero", _rank.RankSpec(2, "nccl", "", "", "")) is None


def test_gloo_is_told_to_use_the_loopback_unless_the_user_chose():
    assert _rank.single_host_env({"GLOO_SOCKET_IFNAME": "eth0"}) == {}
    env = _rank.single_host_env({})
    assert env in ({"GLOO_SOCKET_IFNAME": "lo"}, {"GLOO_SOCKET_IFNAME": "lo0"}, {})


RANK_ENV = """import os, mgpulab as lab
print("device", os.environ["MGPULAB_DEVICE"], lab.devices.rank_device(), "gloo-if", os.environ.get("GLOO_SOCKET_IFNAME"))
"""


def test_each_rank_gets_its_planned_device(capsys):
    result = lab.launch_code(RANK_ENV, 2, placement="cpu", init_process_group=True, **LIMITS)
    assert result.ok, result.summary
    assert result.device_mode["devices"] == ["cpu", "cpu"] and result.backend == "gloo"
    out = capsys.readouterr().out
    loopback = _rank.single_host_env({}).get("GLOO_SOCKET_IFNAME")
    for rank in (0, 1):
        assert f"[rank {rank}] device cpu cpu gloo-if {loopback}" in out
    assert f"[launch] 2 ranks · {result.device_mode['label']} · " in out  # the echo is the plan's label


def test_a_backend_error_reaches_the_caller_with_the_fix():
    code = "raise RuntimeError('No backend type associated with device type cpu')\n"
    result = lab.launch_code(code, 2, **LIMITS)
    assert result.status == "failed"
    assert "launch with placement='cpu'" in result.summary


def test_a_rank_keeps_the_users_own_gloo_interface(monkeypatch, capsys):
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "users-if0")  # no process group here, so gloo never opens it
    result = lab.launch_code("import os\nprint('if', os.environ['GLOO_SOCKET_IFNAME'])\n", 1, **LIMITS)
    assert result.ok, result.summary
    assert "[rank 0] if users-if0" in capsys.readouterr().out


def test_a_ranks_cell_can_ask_for_cpu_ranks():
    from mgpulab_kernel import magics
    options, body = magics.split_ranks_cell("%%ranks 2 --placement cpu\nprint(1)\n")
    assert (options.nprocs, options.placement, body) == (2, "cpu", "\nprint(1)\n")
    assert magics.split_ranks_cell("%%ranks 2\nx\n")[0].placement == "auto"
    with pytest.raises(magics.MagicError, match="invalid choice: 'gpu'"):
        magics.split_ranks_cell("%%ranks 2 --placement gpu\nx\n")
