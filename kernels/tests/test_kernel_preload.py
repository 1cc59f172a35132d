"""A `preload` request imports modules in the background (a guided scenario's kernel: torch and the toolkit),
and then leaves what they made to no later collection: those objects live as long as the kernel, and every
full collection would walk them again (about 100,000 with torch, 15 ms on a quiet core, which a nice-19
kernel under a class's contention can wait hundreds of ms for). What a cell makes afterwards is collected
as always."""
from kernel_run import run_kernel

_WAIT_FOR_PRELOAD = "import threading\n[t.join() for t in threading.enumerate() if t.name == 'mgpulab-preload']\n"


def test_what_a_preload_imported_is_frozen_and_later_garbage_is_still_collected():
    (cell,) = run_kernel([
        {"type": "preload", "modules": ["decimal", "email.parser"]},
        _WAIT_FOR_PRELOAD
        + "import gc, sys, decimal\n"
        + "tracked = {id(o) for o in gc.get_objects()}\n"
        + "class Cycle:\n    pass\n"
        + "a = Cycle(); a.me = a; a_id = id(a); del a\n"
        + "collected = gc.collect()\n"
        + "(gc.get_freeze_count() > 1000, id(vars(decimal)) in tracked, id(vars(sys.modules['email.parser'])) in tracked,"
        + " collected >= 1, a_id not in {id(o) for o in gc.get_objects()})",
    ])
    assert cell.status == "ok", cell.text
    result = cell.of("execute_result")[0]["data"]["text/plain"]
    assert result == "(True, False, False, True, True)", result
