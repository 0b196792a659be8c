"""What the worker adds to IPython's display machinery (wire contract §1.9): the `e2b/data`,
`e2b/chart` and `image/png` formats, JSON for plain lists and dicts, inline matplotlib figures,
and PIL images shown or saved as png results."""

import io
import sys
import weakref

import sandbar_json
from IPython.core.formatters import JSONFormatter
from traitlets import ObjectName, Unicode

# Jupyter's inline backend saves figures tightly cropped; so do we.
PNG_SAVE_OPTIONS = {"format": "png", "bbox_inches": "tight"}


class DataFormatter(JSONFormatter):
    """`e2b/data`: a pandas DataFrame as a column → values object."""

    format_type = Unicode("e2b/data")
    print_method = ObjectName("_repr_e2b_data_")


class ChartFormatter(JSONFormatter):
    """`e2b/chart`: a matplotlib Figure as chart JSON."""

    format_type = Unicode("e2b/chart")
    print_method = ObjectName("_repr_e2b_chart_")


def dataframe_data(frame):
    return {
        str(column): [sandbar_json.jsonable(value, fallback=str) for value in values.tolist()]
        for column, values in frame.items()
    }


def list_or_dict_json(value):
    try:
        return sandbar_json.jsonable(value)
    except (sandbar_json.NotJsonable, RecursionError):
        return None


# Figures rendered for a display during the current cell, so that the end of the cell does
# not display them a second time.
figures_displayed_in_cell = weakref.WeakSet()


def figure_png(figure):
    figures_displayed_in_cell.add(figure)
    buffer = io.BytesIO()
    figure.canvas.print_figure(buffer, **PNG_SAVE_OPTIONS)
    return buffer.getvalue()


def figure_chart(figure):
    import sandbar_charts

    return sandbar_charts.chart_of_figure(figure)


def install(shell):
    formatters = shell.display_formatter.formatters
    formatters["e2b/data"] = DataFormatter(parent=shell.display_formatter)
    formatters["e2b/chart"] = ChartFormatter(parent=shell.display_formatter)
    formatters["e2b/data"].for_type_by_name("pandas.core.frame", "DataFrame", dataframe_data)
    formatters["e2b/chart"].for_type_by_name("matplotlib.figure", "Figure", figure_chart)
    formatters["image/png"].for_type_by_name("matplotlib.figure", "Figure", figure_png)
    formatters["application/json"].for_type(list, list_or_dict_json)
    formatters["application/json"].for_type(dict, list_or_dict_json)
    install_inline_matplotlib(shell)
    install_pil_display()


def install_inline_matplotlib(shell):
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("module://sandbar_inline")

    def display_figures_left_open():
        # Only when the user's code brought pyplot in: it has figures to show only then.
        if "matplotlib.pyplot" in sys.modules:
            import sandbar_inline

            if matplotlib.get_backend() == "module://sandbar_inline":
                sandbar_inline.display_open_figures(except_figures=figures_displayed_in_cell)

    def start_cell():
        figures_displayed_in_cell.clear()

    shell.events.register("pre_run_cell", lambda info: start_cell())
    shell.events.register("post_run_cell", lambda result: display_figures_left_open())


def install_pil_display():
    try:
        from PIL import Image
    except ImportError:
        return
    from IPython.display import display

    original_save = Image.Image.save

    def show(self, title=None, **options):
        display(self)

    def save(self, fp, format=None, **params):
        original_save(self, fp, format, **params)
        if isinstance(fp, (str, bytes)) or hasattr(fp, "__fspath__"):
            display(self)

    show.__doc__ = Image.Image.show.__doc__
    save.__doc__ = original_save.__doc__
    Image.Image.show = show
    Image.Image.save = save
