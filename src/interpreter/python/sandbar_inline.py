"""The worker's matplotlib backend (`module://sandbar_inline`): figures render with Agg, and
`plt.show()` displays every open figure as a result and closes it, as Jupyter's inline backend
does. Figures still open when a cell ends are displayed by `display_open_figures`, which the
worker runs after each cell, unless the cell displayed them already (`fig` as its last
expression, `display(fig)`)."""

from matplotlib import pyplot
from matplotlib._pylab_helpers import Gcf
from matplotlib.backend_bases import FigureManagerBase
from matplotlib.backends.backend_agg import FigureCanvasAgg

FigureCanvas = FigureCanvasAgg
FigureManager = FigureManagerBase


def show(block=None):
    display_open_figures()


def display_open_figures(except_figures=()):
    """Displays every open figure but `except_figures`, then closes them all."""
    from IPython.display import display

    try:
        for manager in Gcf.get_all_fig_managers():
            if manager.canvas.figure not in except_figures:
                display(manager.canvas.figure)
    finally:
        pyplot.close("all")
