"""`python -m mgpulab_kernel` runs the bootstrap in place (used when the package is on disk)."""
import os
import runpy

runpy.run_path(os.path.join(os.path.dirname(__file__), "bootstrap.py"))
