"""The host agent: owns a host's kernels for one lab, outlives its link for a lease.

``bootstrap.py`` travels as ``python3 -u -c <text>`` and starts or attaches to
the daemon (``daemon.py``); each kernel runs in its own PTY (``kernel_proc.py``)
with a sequenced, bounded output buffer (``outbuf.py``), its PTY bytes split by
``decoder.py``; ``proctree.py`` finds and ends a kernel's whole process tree;
``host.py`` knows the host's GPUs and versions. The daemon's loop ties together
``links.py`` (the lab's connections), ``dispatch.py`` (the request table),
``gpu_queue.py`` over ``slots.py`` (who gets the GPUs), ``interrupts.py``
(escalation), ``timers.py``, ``agent_settings.py``, ``health.py`` and
``runtime_dir.py``. Imports only ``mgpulab_wire``; nothing imports it.
"""
