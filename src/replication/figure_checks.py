"""What keeps a figure from reading at a glance, found before it is saved (``plotting.save_figure``):
an axis or colour bar without labelled ticks, a legend entry whose artist shows nothing inside its
axes, text that crosses the canvas or lies on tick labels, tick labels on each other. Each check
returns one line per problem, naming the axes (its title, else its place) and what is wrong."""

from __future__ import annotations

import matplotlib.collections
import matplotlib.container
import matplotlib.lines
import matplotlib.patches
import matplotlib.pyplot as plt
import matplotlib.text
import numpy as np
from matplotlib.ticker import FixedFormatter, FixedLocator, FuncFormatter
from matplotlib.transforms import Bbox

# A colour bar with a stretch this long (share of its length, ends included) between labelled
# ticks has a part whose values a reader cannot tell.
COLOUR_BAR_GAP = 0.4
# Overlaps smaller than this (inches, both ways: a pixel at 100 dpi) are glyph padding, not overlap.
OVERLAP_INCHES = 0.01


def axes_name(ax) -> str:
    """How a problem names an axes: its title, a colour bar by its label or its parent's title, else
    its place among the figure's axes."""
    colour_bar = getattr(ax, "_colorbar", None)
    if colour_bar is not None:
        label = colour_bar.long_axis.get_label_text()
        return f"colour bar {label!r}" if label else "colour bar"
    titles = [ax.get_title(loc) for loc in ("center", "left", "right")]
    title = " ".join(t for t in titles if t).replace("\n", " ")
    return repr(title) if title else f"axes {ax.figure.axes.index(ax) + 1}"


def _visible_labels(axis, renderer) -> list[tuple[float, matplotlib.text.Text]]:
    """(position along the axis as a share of its length, label) of every tick label drawn within the
    axis' view, majors and minors."""
    low, high = sorted(axis.get_view_interval())
    scale = axis.get_transform()
    span = np.diff(scale.transform([low, high]))[0]
    shown = []
    for tick in axis.get_major_ticks() + axis.get_minor_ticks():
        location = tick.get_loc()
        if location is None or not low <= location <= high or not tick.get_visible():
            continue
        for label in (tick.label1, tick.label2):
            if label.get_visible() and label.get_text().strip():
                share = (scale.transform([location])[0] - scale.transform([low])[0]) / span if span else 0.0
                shown.append((float(share), label))
                break
    return shown


def _major_labels(axis) -> list:
    return [label for tick in axis.get_major_ticks() for label in (tick.label1, tick.label2)]


def _named_ticks(axis) -> int | None:
    """How many major ticks lie in the axis' view when its labels are names given with the ticks
    (``set_xticks(positions, labels)``: categories, each to be labelled); None for a scale."""
    formatter, locator = axis.get_major_formatter(), axis.get_major_locator()
    # labels given with fixed ticks become a FuncFormatter over them, given alone a FixedFormatter
    if not isinstance(formatter, FixedFormatter) and not (
        isinstance(formatter, FuncFormatter) and isinstance(locator, FixedLocator)
    ):
        return None
    low, high = sorted(axis.get_view_interval())
    return sum(1 for location in axis.get_majorticklocs() if low <= location <= high)


def _shares_labelled_axis(ax, which: str, renderer) -> bool:
    """Whether a sibling sharing ``ax``'s x or y axis labels it (shared axes label the outer panels)."""
    group = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    return any(
        _visible_labels(getattr(other, f"{which}axis"), renderer)
        for other in group.get_siblings(ax)
        if other is not ax and other.get_visible()
    )


def tick_problems(fig: plt.Figure) -> list[str]:
    """Axes of 2-D panels and colour bars with fewer than 2 labelled ticks over their visible range
    (a scale needs two to be read; an axis of named ticks, categories, needs each named), and
    colour bars with a long stretch (``COLOUR_BAR_GAP``) that no labelled tick marks."""
    renderer = fig.canvas.get_renderer()
    problems = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison or ax.name != "rectilinear":
            continue  # 3-D and polar axes draw their own ticks
        colour_bar = getattr(ax, "_colorbar", None)
        axes = {"": colour_bar.long_axis} if colour_bar is not None else {"x": ax.xaxis, "y": ax.yaxis}
        for which, axis in axes.items():
            if not axis.get_visible():
                continue
            shown = _visible_labels(axis, renderer)
            what = f"{axes_name(ax)}{f' {which}-axis' if which else ''}"
            if which and not shown and _shares_labelled_axis(ax, which, renderer):
                continue
            named = _named_ticks(axis) if which else None
            if named is not None:  # categories: each tick its name, however few
                unnamed = named - len([share for share, label in shown if label in _major_labels(axis)])
                if unnamed or not named:
                    problems.append(f"{what}: {unnamed} of {named} named ticks without a label")
            elif len(shown) < 2:  # a scale: two labels to read it by
                problems.append(f"{what}: {len(shown)} labelled tick{'s' * (len(shown) != 1)} (at least 2 needed)")
            elif colour_bar is not None:
                marks = np.sort([0.0, 1.0] + [share for share, _ in shown])
                gap = float(np.max(np.diff(marks)))
                if gap > COLOUR_BAR_GAP:
                    problems.append(f"{what}: {gap:.0%} of its length without a labelled tick")
    return problems


def _handle_artists(handle) -> list:
    """The artists a legend handle stands for (a container's parts)."""
    if isinstance(handle, matplotlib.container.ErrorbarContainer):
        return [handle.lines[0]] if handle.lines[0] is not None else []
    if isinstance(handle, matplotlib.container.Container):
        return list(handle)
    return [handle]


def _points_inside(points: np.ndarray, transform, ax) -> bool:
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    points = points[np.isfinite(points).all(axis=1)]
    if not len(points):
        return False
    u, v = ax.transAxes.inverted().transform(transform.transform(points)).T
    return bool(np.any((u >= -1e-9) & (u <= 1 + 1e-9) & (v >= -1e-9) & (v <= 1 + 1e-9)))


def shows_something_inside(artist, ax, renderer) -> bool:
    """Whether ``artist`` draws anything visible inside ``ax``'s limits: a line or scatter point
    there, or a patch or collection whose drawn extent meets the axes' box."""
    if not artist.get_visible() or artist.get_alpha() == 0:
        return False
    if isinstance(artist, matplotlib.lines.Line2D):
        return _points_inside(artist.get_xydata(), artist.get_transform(), ax)
    if isinstance(artist, matplotlib.collections.PathCollection):
        return _points_inside(artist.get_offsets(), artist.get_offset_transform(), ax)
    if isinstance(artist, matplotlib.patches.Patch | matplotlib.collections.Collection):
        # within the axes' box, touching counts: a bar of length 0 there shows its value, 0
        return Bbox.intersection(artist.get_window_extent(renderer), ax.bbox) is not None
    return True  # an artist of another kind: not judged


def legend_problems(fig: plt.Figure) -> list[str]:
    """Legend entries (of each 2-D axes' legend) whose artist shows nothing inside the axes: the
    legend would list what the figure does not show."""
    renderer = fig.canvas.get_renderer()
    problems = []
    for ax in fig.axes:
        if ax.get_legend() is None or ax.name != "rectilinear":
            continue  # 3-D axes project their data with the view
        for handle, label in zip(*ax.get_legend_handles_labels()):
            parts = _handle_artists(handle)
            if not any(shows_something_inside(part, ax, renderer) for part in parts):
                problems.append(f"{axes_name(ax)}: legend entry {label!r} shows nothing inside the axes")
    return problems


def content_outside_canvas(fig: plt.Figure, tolerance_inches: float = 0.02) -> list[str]:
    """The sides of the canvas that the drawn content (text, legends, axes) crosses: with a fixed
    canvas such content would be cut off."""
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())
    width, height = fig.get_size_inches()
    sides = {"left": -drawn.x0, "bottom": -drawn.y0, "right": drawn.x1 - width, "top": drawn.y1 - height}
    return [f"{side} by {excess:.2f} in" for side, excess in sides.items() if excess > tolerance_inches]


def _tick_labels(fig: plt.Figure, renderer) -> list[tuple[object, matplotlib.text.Text]]:
    labels = []
    for ax in fig.axes:
        if ax.get_visible() and ax.axison and ax.name == "rectilinear":
            for axis in (ax.xaxis, ax.yaxis):
                if axis.get_visible():
                    labels += [(ax, label) for _, label in _visible_labels(axis, renderer)]
    return labels


def _overlap(a: Bbox, b: Bbox, dpi: float) -> bool:
    """Whether two boxes in pixels at ``dpi`` overlap by more than OVERLAP_INCHES both ways."""
    both = Bbox.intersection(a, b)
    limit = OVERLAP_INCHES * dpi
    return both is not None and both.width > limit and both.height > limit


def crowded_tick_labels(fig: plt.Figure) -> list[str]:
    """Axes whose neighbouring tick labels overlap each other (too many for the axis' length)."""
    renderer = fig.canvas.get_renderer()
    problems = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison or ax.name != "rectilinear":
            continue
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = sorted(_visible_labels(axis, renderer), key=lambda shown: shown[0])
            boxes = [label.get_window_extent(renderer) for _, label in labels]
            for (_, first), (_, second), a, b in zip(labels, labels[1:], boxes, boxes[1:]):
                if _overlap(a, b, fig.dpi):
                    problems.append(
                        f"{axes_name(ax)} {which}-axis: tick labels {first.get_text()!r} and "
                        f"{second.get_text()!r} overlap"
                    )
                    break
    return problems


def text_on_tick_labels(fig: plt.Figure) -> list[str]:
    """Texts (titles, axis labels, notes, legend entries) drawn over some axes' tick labels."""
    renderer = fig.canvas.get_renderer()
    ticks = _tick_labels(fig, renderer)
    # Every tick's label, drawn or not (ticks beyond the view keep visible but undrawn labels).
    tick_texts = {
        id(label)
        for ax in fig.axes
        for axis in (ax.xaxis, ax.yaxis)
        for tick in axis.get_major_ticks() + axis.get_minor_ticks()
        for label in (tick.label1, tick.label2)
    }
    tick_boxes = [(ax, label.get_window_extent(renderer)) for ax, label in ticks]  # once, not once per text
    problems = []
    for text in fig.findobj(matplotlib.text.Text):
        if id(text) in tick_texts or not text.get_visible() or not text.get_text().strip():
            continue
        extent = text.get_window_extent(renderer)
        hit = next((ax for ax, box in tick_boxes if _overlap(extent, box, fig.dpi)), None)
        if hit is not None:
            problems.append(f"{axes_name(hit)}: text {text.get_text()[:40]!r} lies on its tick labels")
    return problems


def figure_problems(fig: plt.Figure) -> list[str]:
    """Every problem of the checks above, the figure drawn once first (ticks and text get their
    final places only when drawn)."""
    fig.canvas.draw()
    problems = [f"legend: {line}" for line in legend_problems(fig)]
    problems += [f"ticks: {line}" for line in tick_problems(fig)]
    problems += [f"overlap: {line}" for line in text_on_tick_labels(fig) + crowded_tick_labels(fig)]
    outside = content_outside_canvas(fig)
    if outside:
        problems.append(f"canvas: content crosses the canvas ({', '.join(outside)}): make room in the layout")
    return problems
