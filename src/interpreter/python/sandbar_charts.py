"""Chart JSON of a matplotlib Figure, in the shapes of the wire contract §1.9.

A figure with one drawn axes is that axes' chart; with several, a `superchart` whose elements
are the axes' charts. A blank figure, or one that cannot be read, gives `{}`.
"""

import datetime
import math
import re

from matplotlib import category, dates
from matplotlib.collections import PathCollection
from matplotlib.container import BarContainer
from matplotlib.lines import Line2D
from matplotlib.patches import PathPatch, Rectangle, Wedge
from matplotlib.text import Text

# A unit is written after the label in parentheses ("Time (s)") or brackets ("Power [W]").
UNIT_PATTERN = re.compile(r"(?:^|\s)\((.+?)\)|\[(.+?)\]")


def chart_of_figure(figure):
    try:
        # Tick locations and labels, and autoscaled limits, are settled by a draw.
        figure.draw_without_rendering()
        axes = [ax for ax in figure.get_axes() if not is_blank(ax)]
        if not axes:
            return {}
        if len(axes) == 1:
            return chart_of_axes(axes[0])
        return {
            "type": "superchart",
            "title": text_or_none(suptitle(figure)),
            "elements": [chart_of_axes(ax) for ax in axes],
        }
    except Exception:
        return {}


def suptitle(figure):
    if hasattr(figure, "get_suptitle"):
        return figure.get_suptitle()
    title = getattr(figure, "_suptitle", None)
    return title.get_text() if title is not None else ""


def drawn_artists(ax):
    """What is drawn on the axes, leaving out texts (titles, annotations, pie labels)."""
    artists = [*ax.lines, *ax.patches, *ax.collections, *ax.images, *ax.tables, *ax.artists]
    return [artist for artist in artists if not isinstance(artist, Text)]


def is_blank(ax):
    return not drawn_artists(ax) and not ax.get_title()


def chart_type(ax):
    artists = drawn_artists(ax)
    if artists and all(isinstance(artist, Line2D) for artist in artists):
        return "line"
    if any(isinstance(artist, PathPatch) for artist in artists) and all(
        isinstance(artist, (PathPatch, Line2D)) for artist in artists
    ):
        return "box_and_whisker"
    if any(isinstance(collection, PathCollection) for collection in ax.collections):
        return "scatter"
    if any(isinstance(patch, Wedge) for patch in ax.patches):
        return "pie"
    if any(isinstance(patch, Rectangle) for patch in ax.patches):
        return "bar"
    return "unknown"


def chart_of_axes(ax):
    kind = chart_type(ax)
    if kind == "line":
        return {**point_chart(ax, kind), "elements": line_elements(ax)}
    if kind == "scatter":
        return {**point_chart(ax, kind), "elements": scatter_elements(ax)}
    if kind == "bar":
        return bar_chart(ax)
    if kind == "box_and_whisker":
        return box_chart(ax)
    if kind == "pie":
        return {"type": "pie", "title": text_or_none(ax.get_title()), "elements": pie_elements(ax)}
    return {"type": "unknown", "title": text_or_none(ax.get_title()), "elements": []}


def text_or_none(text):
    return text if text else None


def unit_of(label):
    match = UNIT_PATTERN.search(label) if label else None
    return (match.group(1) or match.group(2)) if match else None


def chart_2d(kind, ax, swap_axes=False):
    x_label = text_or_none(ax.get_xlabel())
    y_label = text_or_none(ax.get_ylabel())
    if swap_axes:
        x_label, y_label = y_label, x_label
    return {
        "type": kind,
        "title": text_or_none(ax.get_title()),
        "x_label": x_label,
        "y_label": y_label,
        "x_unit": unit_of(x_label),
        "y_unit": unit_of(y_label),
    }


# Line and scatter charts


def point_chart(ax, kind):
    return {
        **chart_2d(kind, ax),
        "x_ticks": ticks(ax.xaxis, ax.get_xticks()),
        "x_tick_labels": [label.get_text() for label in ax.get_xticklabels()],
        "x_scale": scale(ax.xaxis, ax.get_xscale()),
        "y_ticks": ticks(ax.yaxis, ax.get_yticks()),
        "y_tick_labels": [label.get_text() for label in ax.get_yticklabels()],
        "y_scale": scale(ax.yaxis, ax.get_yscale()),
    }


def is_date_axis(axis):
    return (
        isinstance(axis.get_major_locator(), dates.DateLocator)
        or isinstance(
            axis.get_major_formatter(),
            (dates.AutoDateFormatter, dates.ConciseDateFormatter, dates.DateFormatter),
        )
        or period_frequency(axis) is not None
    )


def period_frequency(axis):
    """The frequency of a pandas time-series axis (`Series.plot()` of a DatetimeIndex), whose
    coordinates are period ordinals, else None."""
    if type(axis.get_major_formatter()).__name__ != "TimeSeries_DateFormatter":
        return None
    return getattr(axis.axes, "freq", None)


def date_of(axis, number):
    frequency = period_frequency(axis)
    if frequency is not None:
        import pandas

        return pandas.Period(ordinal=round(number), freq=frequency).to_timestamp().isoformat()
    return dates.num2date(number).isoformat()


def is_categorical_axis(axis):
    return isinstance(axis.get_major_locator(), category.StrCategoryLocator)


def scale(axis, scale_name):
    if is_date_axis(axis):
        return "datetime"
    if scale_name == "linear" and is_categorical_axis(axis):
        return "categorical"
    return scale_name


def ticks(axis, values):
    if is_date_axis(axis):
        return [date_of(axis, float(value)) for value in values]
    return [tidy(value) for value in values]


def coordinate(value, axis):
    """A point coordinate: ISO text for dates, a float for numbers, text for categories."""
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if hasattr(value, "to_timestamp"):
        # a pandas Period
        return value.to_timestamp().isoformat()
    type_name = type(value).__name__
    if type_name == "datetime64":
        import numpy

        return numpy.datetime_as_string(value, unit="s")
    if isinstance(value, str):
        return value
    if is_date_axis(axis):
        return date_of(axis, float(value))
    number = float(value)
    return number if math.isfinite(number) else None


def points(xs, ys, ax):
    return [[coordinate(x, ax.xaxis), coordinate(y, ax.yaxis)] for x, y in zip(xs, ys)]


def line_elements(ax):
    elements = []
    for index, line in enumerate(ax.get_lines()):
        label = line.get_label()
        if label.startswith("_"):
            label = f"Line {index}"
        elements.append({"label": label, "points": points(line.get_xdata(), line.get_ydata(), ax)})
    return elements


def scatter_elements(ax):
    elements = []
    for collection in ax.collections:
        if not isinstance(collection, PathCollection):
            continue
        offsets = collection.get_offsets()
        elements.append(
            {
                "label": collection.get_label(),
                "points": points([x for x, _ in offsets], [y for _, y in offsets], ax),
            }
        )
    return elements


# Bar charts


def bar_chart(ax):
    containers = [c for c in ax.containers if isinstance(c, BarContainer)]
    horizontal = bool(containers) and all(
        getattr(c, "orientation", None) == "horizontal" for c in containers
    )
    # The chart's x axis is the category axis, so horizontal bars swap the labels.
    chart = chart_2d("bar", ax, swap_axes=horizontal)
    category_axis = ax.yaxis if horizontal else ax.xaxis
    elements = []
    for index, container in enumerate(containers):
        group = container.get_label()
        if not group or group.startswith("_"):
            group = f"Group {index}"
        for bar in container.patches:
            if horizontal:
                position = bar.get_y() + bar.get_height() / 2
                value, bar_width = bar.get_width(), abs(bar.get_height())
            else:
                position = bar.get_x() + bar.get_width() / 2
                value, bar_width = bar.get_height(), abs(bar.get_width())
            elements.append(
                {
                    "label": tick_label_at(category_axis, position, reach=bar_width),
                    "value": tidy(value),
                    "group": group,
                }
            )
    return {**chart, "elements": elements}


def tick_label_at(axis, position, reach=1e-9):
    """The label of the tick nearest to `position` on `axis`, if one lies within `reach`
    (grouped bars sit beside their category's tick), else the position as text."""
    nearest = None
    for location, label in zip(axis.get_majorticklocs(), axis.get_majorticklabels()):
        distance = abs(location - position)
        if label.get_text() and distance <= reach + 1e-9:
            if nearest is None or distance < nearest[0]:
                nearest = (distance, label.get_text())
    return nearest[1] if nearest else f"{tidy(position):g}"


def tidy(number, digits=12):
    """`number` as a float without floating-point noise (0.30000000000000004 → 0.3)."""
    return float(f"{float(number):.{digits}g}")


# Pie charts


def pie_elements(ax):
    return [
        {
            "label": wedge.get_label(),
            # pie() computes in float32: 7 significant digits are all there is.
            "angle": tidy(abs(wedge.theta2 - wedge.theta1), digits=7),
            "radius": tidy(wedge.r, digits=7),
        }
        for wedge in ax.patches
        if isinstance(wedge, Wedge)
    ]


# Box-and-whisker charts: read back from the artists `boxplot(..., patch_artist=True)` draws:
# one box patch per dataset (first to third quartile), a median line across it, two whiskers
# running from the box to the extremes, two caps, and the fliers (markers only) as outliers.


def box_chart(ax):
    boxes = [patch for patch in ax.patches if isinstance(patch, PathPatch)]
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) > 0]
    markers_only = [line for line in lines if line.get_linestyle() in ("None", "none", "", " ")]
    segments = [line for line in lines if line not in markers_only]
    vertical = is_vertical_boxplot(segments)
    chart = chart_2d("box_and_whisker", ax, swap_axes=not vertical)
    category_axis = ax.xaxis if vertical else ax.yaxis

    def along(line):
        """(positions, values) of a line: category-axis and value-axis coordinates."""
        xs = [float(v) for v in line.get_xdata()]
        ys = [float(v) for v in line.get_ydata()]
        return (xs, ys) if vertical else (ys, xs)

    elements = []
    for box in boxes:
        vertices = box.get_path().vertices
        position_values = vertices[:, 0] if vertical else vertices[:, 1]
        value_values = vertices[:, 1] if vertical else vertices[:, 0]
        low, high = float(min(position_values)), float(max(position_values))
        first_quartile, third_quartile = float(min(value_values)), float(max(value_values))

        def within(position, low=low, high=high):
            return low - 1e-9 <= position <= high + 1e-9

        stats = {"min": first_quartile, "median": None, "max": third_quartile}
        for line in segments:
            positions, values = along(line)
            if not all(within(position) for position in positions):
                continue
            if len(set(values)) == 1 and len(set(positions)) > 1:
                # The median spans the box; caps are narrower.
                spans_box = math.isclose(min(positions), low) and math.isclose(max(positions), high)
                if spans_box and first_quartile - 1e-9 <= values[0] <= third_quartile + 1e-9:
                    stats["median"] = values[0]
                continue
            if len(set(positions)) == 1:
                if math.isclose(max(values), first_quartile):
                    stats["min"] = min(values)
                elif math.isclose(min(values), third_quartile):
                    stats["max"] = max(values)
        outliers = []
        for line in markers_only:
            positions, values = along(line)
            outliers += [value for position, value in zip(positions, values) if within(position)]
        elements.append(
            {
                "label": tick_label_at(category_axis, (low + high) / 2, reach=(high - low) / 2),
                "min": tidy(stats["min"]),
                "first_quartile": tidy(first_quartile),
                "median": tidy(stats["median"] if stats["median"] is not None else first_quartile),
                "third_quartile": tidy(third_quartile),
                "max": tidy(stats["max"]),
                "outliers": [tidy(value) for value in outliers],
            }
        )
    return {**chart, "elements": elements}


def is_vertical_boxplot(segments):
    """Vertical boxes have more horizontal segments (medians and caps) than vertical ones
    (whiskers); horizontal boxes the other way round."""
    horizontal_segments = sum(1 for line in segments if len(set(line.get_ydata())) == 1)
    vertical_segments = sum(1 for line in segments if len(set(line.get_xdata())) == 1)
    return horizontal_segments >= vertical_segments
