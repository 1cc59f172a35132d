"""Identity of emulated CPU devices, and the cross-device error they must raise.

All emulated devices are the same ``torch.device("cpu")``, so torch itself can
never say "these two tensors are on different devices". What emulation can
track is the one case DataParallel users actually hit: a module holds a plain
tensor attribute (not a registered parameter or buffer). ``replicate()``
copies parameters and buffers to every device but copies only the *reference*
to other attributes, so on GPUs replica *i > 0* computes with a tensor that
still lives on device 0 and fails with "Expected all tensors to be on the same
device". Emulation wraps such attributes, on replicas *i > 0* only, in a
tensor subclass that remembers its home device and raises the same error when
an operation mixes it with tensors of the replica's own device.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

import torch

_state = threading.local()


def current_device() -> Optional[int]:
    """Emulated device index whose replica runs on this thread, or None."""
    return getattr(_state, "device", None)


def device_name(index: int) -> str:
    """How error messages name emulated device ``index`` on this thread ("cpu:1", "virtual device 1 (cuda:0)")."""
    naming = getattr(_state, "naming", None)
    return naming(index) if naming is not None else f"cpu:{index}"


@contextlib.contextmanager
def on_device(index: int, naming: Optional[Callable[[int], str]] = None) -> Iterator[None]:
    previous, previous_naming = current_device(), getattr(_state, "naming", None)
    _state.device = index
    _state.naming = naming
    try:
        yield
    finally:
        _state.device, _state.naming = previous, previous_naming


class EmulatedDeviceMismatch(RuntimeError):
    """Raised where CUDA raises "Expected all tensors to be on the same device"."""


_MOVES = frozenset({"to", "cuda", "type_as", "copy_"})


class OnOtherDevice(torch.Tensor):
    """A plain tensor attribute as seen from a replica on another emulated device.

    Concrete subclasses (one per attribute, see :func:`wrap_attribute`) set
    ``home`` (the emulated device the tensor lives on) and ``owner``
    (``"CustomLayer.scale"``, for the message).

    Faithful: mixing it with a tensor of the replica's device in any op raises
    (0-dim tensors created in ``forward`` are let through: on GPUs a CPU scalar
    mixes freely). Results of ops on it alone stay on its home device, as on
    GPUs. ``.to(device)``, ``.cuda()``, ``.type_as(x)`` move it to the
    replica's device (emulation cannot tell ``.to("cpu")`` from
    ``.to(x.device)``, so any explicit move counts as the fix).
    """

    home: int = 0
    owner: str = "?"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        here = current_device()
        if here is not None and here != cls.home:
            name = getattr(func, "__name__", "")
            if name in _MOVES and _is_move(name, args, kwargs):
                with torch._C.DisableTorchFunction():
                    result = func(*args, **kwargs)
                return as_plain(result)
            if _has_local_tensor(args, kwargs):
                raise EmulatedDeviceMismatch(mismatch_message(cls.owner, here, cls.home))
        return super().__torch_function__(func, types, args, kwargs)


def mismatch_message(owner: str, here: int, home: int) -> str:
    return (
        f"Expected all tensors to be on the same device, but found at least two devices, "
        f"{device_name(here)} and {device_name(home)}! (emulated devices)\n"
        f"[mgpulab] `{owner}` is a plain tensor attribute, not a registered parameter or "
        f"buffer. DataParallel's replicate() copies parameters and buffers to every device "
        f"but only copies the reference to other attributes, so replica {here} still "
        f"computes with the tensor on device {home}. On GPUs this is the same RuntimeError "
        f"(cuda:{here} and cuda:{home}). Fix: register it (self.register_buffer(...) or "
        f"nn.Parameter), or move it in forward: `.to(x.device)`."
    )


_classes: Dict[Tuple[int, str], type] = {}
_classes_lock = threading.Lock()


def wrap_attribute(tensor: torch.Tensor, home: int, owner: str) -> torch.Tensor:
    """The attribute tensor as replicas on devices other than ``home`` see it."""
    key = (home, owner)
    with _classes_lock:
        cls = _classes.get(key)
        if cls is None:
            cls = type("OnOtherDevice", (OnOtherDevice,), {"home": home, "owner": owner})
            _classes[key] = cls
    return tensor.as_subclass(cls)


def as_plain(value: Any) -> Any:
    """Strip the emulation subclass (tensors, or tuples/lists of them)."""
    if isinstance(value, OnOtherDevice):
        with torch._C.DisableTorchFunction():
            return value.as_subclass(torch.Tensor)
    if isinstance(value, (tuple, list)):
        return type(value)(as_plain(v) for v in value)
    return value


def _is_move(name: str, args: tuple, kwargs: dict) -> bool:
    if name in ("cuda", "type_as"):
        return True
    if name == "copy_":
        # dst.copy_(src): a cross-device copy is legal; only src may be foreign here
        return len(args) >= 2 and isinstance(args[1], OnOtherDevice) and not isinstance(args[0], OnOtherDevice)
    targets = list(args[1:]) + [kwargs.get("device"), kwargs.get("other")]
    return any(isinstance(t, (torch.device, str, int, torch.Tensor)) and not isinstance(t, bool)
               for t in targets if t is not None)


def _has_local_tensor(value: Any, kwargs: Optional[dict] = None, depth: int = 0) -> bool:
    if kwargs:
        if _has_local_tensor(list(kwargs.values()), None, depth):
            return True
    if isinstance(value, OnOtherDevice):
        return False
    if isinstance(value, torch.Tensor):
        return value.dim() > 0
    if depth < 3 and isinstance(value, (tuple, list)):
        return any(_has_local_tensor(v, None, depth + 1) for v in value)
    if depth < 3 and isinstance(value, dict):
        return any(_has_local_tensor(v, None, depth + 1) for v in value.values())
    return False
