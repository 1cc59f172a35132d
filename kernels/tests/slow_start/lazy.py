"""A lazily imported module that is slow to import (``$SLOW_START_LAZY_S``), like torch.optim on torch 2.x."""
import os
import time

time.sleep(float(os.environ.get("SLOW_START_LAZY_S", "0")))
