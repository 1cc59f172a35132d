"""The display protocol and matplotlib's inline backend in a real kernel."""
from __future__ import annotations

import base64

import pytest

from kernel_run import run_kernel

REPRS = '''
class Rich:
    def _repr_html_(self): return "<b>h</b>"
    def _repr_markdown_(self): return "**m**"
    def _repr_latex_(self): return "$x^2$"
    def _repr_svg_(self): return "<svg xmlns='http://www.w3.org/2000/svg'/>"
    def _repr_png_(self): return b"\\x89PNG"
    def _repr_jpeg_(self): return b"\\xff\\xd8"
    def __repr__(self): return "Rich()"
'''


@pytest.mark.parametrize("without", ["", "ipython,jedi"], ids=["ipython", "fallback"])
def test_repr_methods_become_mime_types_for_results_and_display(without):
    result, shown = run_kernel([REPRS + "Rich()", "display(Rich(), 5)"], without)
    data = result.of("execute_result")[0]["data"]
    assert data == {"text/plain": "Rich()", "text/html": "<b>h</b>", "text/markdown": "**m**", "text/latex": "$x^2$",
                    "image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg'/>",
                    "image/png": base64.b64encode(b"\x89PNG").decode(), "image/jpeg": base64.b64encode(b"\xff\xd8").decode()}
    assert [m["data"]["text/plain"] for m in shown.of("display_data")] == ["Rich()", "5"]


def test_ipython_display_classes_render_through_the_kernel():
    pytest.importorskip("IPython")
    (cell,) = run_kernel(["from IPython.display import HTML, Markdown, Latex, SVG, Math, display, publish_display_data\n"
                          "display(HTML('<b id=x>bold</b>'))\n"
                          "display(Markdown('*m*'), Latex('$y$'), Math('z'))\n"
                          "publish_display_data({'text/html': '<i>raw</i>', 'application/javascript': 'alert(1)'})\n"
                          "display({'text/plain': 'p', 'text/html': '<u>u</u>'}, raw=True)\n"
                          "import IPython.display as d\nd.display(SVG('<svg xmlns=\"http://www.w3.org/2000/svg\"/>'))"])
    assert cell.status == "ok", cell.of("error")
    shown = [m["data"] for m in cell.of("display_data")]
    assert shown[0]["text/html"] == "<b id=x>bold</b>"
    assert shown[1]["text/markdown"] == "*m*" and shown[2]["text/latex"] == "$y$" and "z" in shown[3]["text/latex"]
    assert shown[4] == {"text/html": "<i>raw</i>"}  # javascript is not a type the notebook runs
    assert shown[5] == {"text/plain": "p", "text/html": "<u>u</u>"}
    assert "image/svg+xml" in shown[6]
    assert "IPython.core.display.HTML object" not in cell.text


def test_figures_are_shown_on_show_and_at_the_end_of_the_cell_then_closed():
    pytest.importorskip("matplotlib")
    shown, open_at_end, nothing, as_value = run_kernel([
        "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\nprint('between')",
        "fig = plt.figure()\nplt.plot([3, 1])\nprint('drawn')",
        "len(plt.get_fignums())",
        "fig2, ax = plt.subplots()\nfig2",
    ])
    for cell in (shown, open_at_end):
        (figure,) = cell.of("display_data")
        assert figure["data"]["image/png"].startswith(base64.b64encode(b"\x89PNG").decode()[:6])
        assert figure["data"]["text/plain"].startswith("<Figure size")
    assert nothing.of("execute_result")[0]["data"]["text/plain"] == "0"  # shown figures were closed
    assert "image/png" in as_value.of("execute_result")[0]["data"] and as_value.of("display_data") == []  # not twice


def test_a_figure_too_large_for_the_output_cap_is_drawn_smaller():
    pytest.importorskip("matplotlib")
    (cell,) = run_kernel(["import numpy as np, matplotlib.pyplot as plt\n"
                          "fig = plt.figure(figsize=(30, 30), dpi=200)\nplt.imshow(np.random.default_rng(0).random((400, 400)))"])
    (figure,) = cell.of("display_data")
    from mgpulab_kernel.outputs import MAX_REPR_CHARS
    assert "image/png" in figure["data"] and len(figure["data"]["image/png"]) <= MAX_REPR_CHARS


def test_the_kernel_runs_without_matplotlib(tmp_path):
    # A matplotlib that cannot be imported, ahead of the real one on the path.
    (tmp_path / "matplotlib").mkdir()
    (tmp_path / "matplotlib" / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    import os
    plain, missing = run_kernel(["import os\nx = 1\nos.environ['MPLBACKEND']", "import matplotlib"],
                                env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}"})
    assert plain.status == "ok"
    assert plain.of("execute_result")[0]["data"]["text/plain"] == "'module://mgpulab_kernel.mpl_inline'"
    assert missing.status == "error" and missing.of("error")[0]["ename"] == "ImportError"
