"""Test-only torchrun for Debian's torch 1.13 on Python 3.11, to exercise the launcher's torchrun path.

On 3.11, iterating an IntFlag skips the zero member, so ``Std.from_str("0")``
returns None and torchrun dies in ``to_map``. This shim maps None back to
``Std.NONE`` and runs the real ``torch.distributed.run``. Not used by the product.
"""
import sys

from torch.distributed.elastic.multiprocessing import api

_original = api.Std.from_str.__func__


def _from_str(cls, value):
    result = _original(cls, value)
    return api.Std.NONE if result is None else result


api.Std.from_str = classmethod(_from_str)

from torch.distributed.run import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
