"""The scenarios' cell templates, one real Python file per templated cell.

Never imported: :func:`mgpulab_scenarios.core.load_template` reads each file as
text and the catalog renders it into a notebook cell, with every ``PARAM.x``
replaced by the validated literal of parameter ``x``. Being files, they are
linted and type-checked like the rest of the kernel code (``PARAM``'s types
are in ``placeholders.py``).
"""
