"""matplotlib's inline backend for the kernel, as ``MPLBACKEND=module://mgpulab_kernel.mpl_inline``
(the kernel sets it at start unless the environment already names a backend).

Figures are drawn with Agg and shown as PNG display data on ``plt.show()``;
the kernel calls :func:`flush_figures` after every cell, so a figure still open
at the end of a cell is shown too (as IPython's inline backend does), then
closed. Outside a kernel (a rank process inherits the variable) ``show()``
does nothing, like Agg. A PNG over the output cap is drawn again at a lower
resolution rather than dropped.
"""
from __future__ import annotations

import base64
import io
from typing import Any, Optional

from matplotlib import pyplot
from matplotlib._pylab_helpers import Gcf
from matplotlib.backend_bases import FigureManagerBase
from matplotlib.backends.backend_agg import FigureCanvasAgg

from . import outputs

FigureCanvas = FigureCanvasAgg
FigureManager = FigureManagerBase


def show(block: Optional[bool] = None) -> None:  # noqa: ARG001 - pyplot's signature
    """Every open figure becomes display data, then is closed."""
    flush_figures()


def flush_figures() -> None:
    managers = Gcf.get_all_fig_managers()
    try:
        for manager in managers:
            outputs.publish(figure_bundle(manager.canvas.figure, close=False))
    finally:
        for manager in managers:
            pyplot.close(manager.canvas.figure)


def figure_bundle(figure: Any, close: bool = True) -> dict[str, str]:
    """A figure as display data; shown figures are closed so the end of the cell does not show them again."""
    width, height = figure.get_size_inches() * figure.dpi
    plain = f"<Figure size {width:g}x{height:g} with {len(figure.axes)} Axes>"
    bundle = {"text/plain": plain}
    dpi = figure.dpi
    png = _png(figure, dpi)
    for _ in range(4):
        if len(png) <= outputs.MAX_REPR_CHARS:
            break
        # Scale the resolution so the image fits, with room to spare (PNG size is not linear in pixels).
        dpi *= 0.8 * (outputs.MAX_REPR_CHARS / len(png)) ** 0.5
        png = _png(figure, dpi)
    if len(png) <= outputs.MAX_REPR_CHARS:
        bundle["image/png"] = png
    else:
        bundle["text/plain"] = plain + " (its image is larger than the output limit and is not shown)"
    if close and Gcf.has_fignum(getattr(figure, "number", -1)):
        pyplot.close(figure)
    return bundle


def _png(figure: Any, dpi: float) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")
