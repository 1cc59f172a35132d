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
