"""The kernel-side packages import each other in one direction only.

    mgpulab_wire       the protocol and frames (below everything)
      ▲
    mgpulab            the experiment toolkit
      ▲
    mgpulab_kernel     the kernel (runs %%ranks through the toolkit)
    mgpulab_scenarios  the scenario catalog (runs on the toolkit)
    mgpulab_agent      the host agent (on mgpulab_wire alone; nothing imports it)

Every import counts, also one inside a function (a lazy import hides a cycle,
it does not break it), and so does a module looked up by name
(``sys.modules.get("…")``, ``importlib.import_module("…")``). Modules within a
package must not form a cycle either.
"""
import ast
import os
from collections import defaultdict

import pytest

KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("mgpulab_wire", "mgpulab", "mgpulab_kernel", "mgpulab_scenarios", "mgpulab_agent")
# What each package may import from the others (the layering above).
ALLOWED = {
    "mgpulab_wire": set(),
    "mgpulab": {"mgpulab_wire"},
    "mgpulab_kernel": {"mgpulab_wire", "mgpulab"},
    "mgpulab_scenarios": {"mgpulab_wire", "mgpulab", "mgpulab_kernel"},
    "mgpulab_agent": {"mgpulab_wire"},
}
_BY_NAME = {("sys", "modules", "get"), ("importlib", "import_module"), ("__import__",)}


def _modules():
    found = {}
    for package in PACKAGES:
        for root, _, files in os.walk(os.path.join(KERNELS, package)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(root, name)
                    dotted = os.path.relpath(path, KERNELS)[:-3].replace(os.sep, ".")
                    found[dotted[: -len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
    return found


def _dotted(func):
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return tuple(reversed(parts))


def imports_of(module, path):
    """Every module name ``module`` imports, wherever the import statement is."""
    tree = ast.parse(open(path, encoding="utf-8").read(), filename=path)
    base = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base.split(".")[: len(base.split(".")) - (node.level - 1)]
                target = ".".join(anchor + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                # `from pkg import submodule` imports the submodule; `from pkg import name`, pkg itself
                # (module_graph falls back from "pkg.name" to "pkg" when there is no such module)
                yield f"{target}.{alias.name}"
        elif isinstance(node, ast.Call) and _dotted(node.func) in _BY_NAME and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value


def module_graph():
    modules = _modules()

    def resolve(name):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph = defaultdict(set)
    for module, path in modules.items():
        for name in imports_of(module, path):
            target = resolve(name)
            if target and target != module:
                graph[module].add(target)
    return modules, graph


def _package(module):
    return module.split(".")[0]


def find_cycle(graph):
    """One cycle as a list of nodes, or None."""
    state = {}

    def visit(node, trail):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return trail[trail.index(nxt):] + [nxt] if nxt in trail else [node, nxt]
            if nxt not in state:
                found = visit(nxt, trail + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_the_toolkit_never_imports_the_kernel():
    modules, graph = module_graph()
    offenders = sorted(f"{m} -> {t}" for m in modules if _package(m) == "mgpulab"
                       for t in graph[m] if _package(t) == "mgpulab_kernel")
    assert offenders == []


def test_packages_import_only_downwards_and_form_no_cycle():
    modules, graph = module_graph()
    packages = defaultdict(set)
    for module in modules:
        for target in graph[module]:
            if _package(target) != _package(module):
                packages[_package(module)].add(_package(target))
                assert _package(target) in ALLOWED[_package(module)], f"{module} imports {target}"
    assert find_cycle(packages) is None
    assert "mgpulab_wire" in packages["mgpulab"] and "mgpulab" in packages["mgpulab_kernel"], "the graph was read"


@pytest.mark.parametrize("package", PACKAGES)
def test_modules_within_a_package_form_no_cycle(package):
    _, graph = module_graph()
    inside = {m: {t for t in targets if _package(t) == package} for m, targets in graph.items() if _package(m) == package}
    assert find_cycle(inside) is None


def test_the_cycle_finder_finds_a_lazy_import_cycle(tmp_path):
    # heartbeat and metrics once imported each other inside functions: that is still a cycle
    module = tmp_path / "heartbeat.py"
    module.write_text("def beat():\n    from . import metrics\n    return metrics\n")
    assert "pkg.metrics" in set(imports_of("pkg.heartbeat", str(module)))
    assert find_cycle({"pkg.heartbeat": {"pkg.metrics"}, "pkg.metrics": {"pkg.heartbeat"}}) is not None
    assert find_cycle({"pkg.heartbeat": set(), "pkg.metrics": {"pkg.heartbeat"}}) is None


def test_the_agent_imports_only_the_wire_and_nothing_imports_the_agent():
    modules, graph = module_graph()
    assert "mgpulab_agent.daemon" in modules, "the agent was read"
    outside = sorted(f"{m} -> {t}" for m in modules if _package(m) == "mgpulab_agent"
                     for t in graph[m] if _package(t) not in ("mgpulab_agent", "mgpulab_wire"))
    into = sorted(f"{m} -> {t}" for m in modules if _package(m) != "mgpulab_agent"
                  for t in graph[m] if _package(t) == "mgpulab_agent")
    assert outside == [] and into == []
