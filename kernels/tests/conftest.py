import os
import sys

import pytest

# Tests import the kernel packages from the source tree, as the kernel's bundle would.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pytest_configure(config):
    # also registered in kernels/pytest.ini; here too so a run from another root knows it
    config.addinivalue_line("markers", "cuda: needs CUDA GPUs (cuda(gpus=N): at least N, default 1)")


def pytest_collection_modifyitems(config, items):
    """Tests marked `cuda` are skipped, saying why, where this host has fewer GPUs than they need."""
    needed = [(item, item.get_closest_marker("cuda")) for item in items]
    needed = [(item, marker) for item, marker in needed if marker is not None]
    if not needed:
        return
    from mgpulab import devices
    have = devices.cuda_device_count()
    for item, marker in needed:
        want = int(marker.kwargs.get("gpus", 1))
        if have < want:
            what = "no CUDA GPU" if have == 0 else f"{have} CUDA GPU{'s' if have != 1 else ''}"
            item.add_marker(pytest.mark.skip(reason=f"needs {want} CUDA GPU{'s' if want != 1 else ''}; "
                                                    f"this host has {what}"))


# The smallest parameters that still exercise every experiment of each scenario: its small run.
SCENARIO_SMALL = {
    "dp-basics": {"devices": 2, "batch_size": 8, "hidden": 4, "d_in": 4, "steps": 1, "timing_repeats": 2,
                  "compare_ddp": False},
    "dp-not-starting": {"devices": 2, "input_size": 16, "hidden_size": 16, "batch_size": 4, "num_steps": 2},
    "params-not-updated": {"devices": 2, "batch_size": 8, "steps": 2},
    "incomplete-results-gil": {"devices": 2, "samples": 40, "batch_size": 10, "depth": 4, "repeats": 2,
                               "num_workers": 0, "sample_cost_ms": 0.0},
    "hangs": {"world_size": 2, "fault": "none", "steps": 2, "comm_delay_ms": 20.0},
}


@pytest.fixture
def small_run(request):
    """The headless run, with its SCENARIO_SMALL values, of the scenario the test module names as ``SCENARIO``.

    One scenario per test file, not all five in one fixture: pytest-xdist spreads them over its workers
    (one fixture running every scenario kept a GPU host's worker busy past the device check's limit)."""
    from mgpulab_scenarios.headless import run_scenario
    scenario_id = request.module.SCENARIO
    return run_scenario(scenario_id, SCENARIO_SMALL[scenario_id])
