import os
import sys

# Tests import the kernel packages from the source tree, as the kernel's bundle would.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
