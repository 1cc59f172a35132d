"""Optional libraries the kernel uses when the interpreter has them (IPython,
jedi). GPU hosts often run a bare Python with torch only, so every use has a
fallback; ``MGPULAB_KERNEL_WITHOUT=ipython,jedi`` makes the kernel take the
fallbacks even where the libraries are installed (the tests run both paths).
"""
from __future__ import annotations

import importlib.util
import os

WITHOUT_ENV = "MGPULAB_KERNEL_WITHOUT"


def available(name: str) -> bool:
    """Whether `name` ("IPython", "jedi") may be imported: installed and not switched off."""
    switched_off = {part.strip().lower() for part in os.environ.get(WITHOUT_ENV, "").split(",")}
    if name.lower() in switched_off:
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
