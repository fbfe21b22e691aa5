"""Each figure check on its own (replication.figure_checks), on small figures drawn but not saved:
which axes it looks at, where a tick or point counts as inside, how it names axes and sides, and
the exact line it reports."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.ticker import AutoLocator, FixedFormatter, FixedLocator, FuncFormatter

from replication import figure_checks as checks


@pytest.fixture
def figures():
    """Figures made by a test, closed after it."""
    made = []

    def make(*args, **options):
        fig, axes = plt.subplots(*args, **options)
        made.append(fig)
        return fig, axes

    yield make
    for fig in made:
        plt.close(fig)


def drawn(fig):
    fig.canvas.draw()
    return fig


def unit_panel(figures, title="panel"):
    """One axes over [0, 1] x [0, 1] with ticks at both ends and the middle."""
    fig, ax = figures(figsize=(3, 2.4))
    ax.set(xlim=(0, 1), ylim=(0, 1), xticks=[0, 0.5, 1], yticks=[0, 0.5, 1], title=title)
    fig.tight_layout()
    return fig, ax


# Names of axes


def test_axes_are_named_by_their_titles_or_their_place(figures):
    fig, (first, second) = figures(1, 2)
    first.set_title("left part", loc="left")
    first.set_title("centre\nline")
    first.set_title("right part", loc="right")
    assert checks.axes_name(first) == "'centre line left part right part'"
    assert checks.axes_name(second) == "axes 2"


def test_a_colour_bar_is_named_by_its_label(figures):
    fig, ax = figures()
    image = ax.imshow([[0, 1], [2, 3]])
    labelled, bare = fig.colorbar(image, ax=ax, label="ratio"), fig.colorbar(image, ax=ax)
    assert checks.axes_name(labelled.ax) == "colour bar 'ratio'"
    assert checks.axes_name(bare.ax) == "colour bar"


# Ticks


def test_ticks_at_both_ends_of_the_view_count(figures):
    fig, ax = unit_panel(figures)
    ax.set_xticks([0, 1])
    ax.set_yticks([-1, 0, 1, 2])  # the first beyond the view: the others still count
    ax.set_ylim(0, 1)
    assert checks.tick_problems(drawn(fig)) == []


def test_a_scale_with_labels_left_empty_counts_only_the_written_ones(figures):
    fig, ax = unit_panel(figures)
    ax.xaxis.set_major_locator(AutoLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: "zero" if x == 0 else ""))
    assert checks.tick_problems(drawn(fig)) == ["'panel' x-axis: 1 labelled tick (at least 2 needed)"]


def test_names_given_alone_are_categories_each_to_be_named(figures):
    fig, ax = unit_panel(figures)
    ax.yaxis.set_major_locator(FixedLocator([0, 0.5, 1]))
    ax.yaxis.set_major_formatter(FixedFormatter(["low", "", "high"]))
    assert checks.tick_problems(drawn(fig)) == ["'panel' y-axis: 1 of 3 named ticks without a label"]


def test_named_ticks_at_the_ends_of_the_view_are_named(figures):
    fig, ax = unit_panel(figures)
    ax.set_yticks([0, 1], ["low", "high"])
    assert checks.tick_problems(drawn(fig)) == []


def test_categories_all_beyond_the_view_are_a_problem(figures):
    fig, ax = unit_panel(figures)
    ax.set_yticks([5, 6], ["far", "further"])
    ax.set_ylim(0, 1)
    assert checks.tick_problems(drawn(fig)) == ["'panel' y-axis: 0 of 0 named ticks without a label"]


def test_hidden_axes_and_axes_turned_off_are_not_checked(figures):
    fig, axes = figures(1, 4, figsize=(8, 2.4))
    hidden, off, axis_hidden, checked = axes
    for ax in axes:
        ax.set(xlim=(0, 1), ylim=(0, 1), xticks=[], yticks=[])
    hidden.set_visible(False)
    off.axis("off")
    axis_hidden.xaxis.set_visible(False)
    axis_hidden.yaxis.set_visible(False)
    checked.set_yticks([0, 1])
    assert checks.tick_problems(drawn(fig)) == ["axes 4 x-axis: 0 labelled ticks (at least 2 needed)"]


def test_a_polar_axes_draws_its_own_ticks(figures):
    fig = plt.figure()
    polar = fig.add_subplot(1, 2, 1, projection="polar")
    polar.set_xticks([])
    plain = fig.add_subplot(1, 2, 2)
    plain.set_xticks([])
    try:
        assert checks.tick_problems(drawn(fig)) == [
            "axes 2 x-axis: 0 labelled ticks (at least 2 needed)",
        ]
        assert checks.crowded_tick_labels(fig) == [] and checks.legend_problems(fig) == []
    finally:
        plt.close(fig)


def test_an_axis_shared_with_a_labelled_panel_needs_no_labels_of_its_own(figures):
    fig, (top, bottom) = figures(2, 1, sharex=True)
    for ax in (top, bottom):
        ax.set(xlim=(0, 1), ylim=(0, 1), xticks=[0, 1], yticks=[0, 1])
    assert checks.tick_problems(drawn(fig)) == []
    bottom.set_visible(False)  # a hidden panel labels nothing
    assert checks.tick_problems(drawn(fig)) == ["axes 1 x-axis: 0 labelled ticks (at least 2 needed)"]


def test_only_a_shared_axis_is_excused(figures):
    fig, (top, bottom) = figures(2, 1, sharex=True)
    for ax in (top, bottom):
        ax.set(xlim=(0, 1), ylim=(0, 1), xticks=[0, 1])
    top.set_yticks([])
    bottom.set_yticks([0, 1])
    assert checks.tick_problems(drawn(fig)) == ["axes 1 y-axis: 0 labelled ticks (at least 2 needed)"]


def test_a_colour_bar_labelled_at_its_ends_and_middle_passes(figures):
    fig, ax = figures(figsize=(3.5, 2.6))
    image = ax.imshow([[0.0, 1.0], [2.0, 4.0]], vmin=0, vmax=4)
    ax.set(xticks=[0, 1], yticks=[0, 1])
    bar = fig.colorbar(image, ax=ax, label="value")
    bar.set_ticks([0, 1.5, 2.5, 4])
    assert checks.tick_problems(drawn(fig)) == []
    bar.set_ticks([0, 1])
    assert checks.tick_problems(drawn(fig)) == ["colour bar 'value': 75% of its length without a labelled tick"]
    bar.set_ticks([3, 4])
    assert checks.tick_problems(drawn(fig)) == ["colour bar 'value': 75% of its length without a labelled tick"]


# Legend entries


def test_legend_entries_are_judged_by_what_their_artists_show(figures):
    fig, (quiet, ax) = figures(1, 2, figsize=(6, 2.4))
    quiet.plot([0, 1], [50, 60], label="outside, but no legend")
    quiet.set_ylim(0, 1)
    ax.set(xlim=(0, 1), ylim=(0, 1))
    ax.plot([0.2, 0.8], [0.5, 0.5], alpha=1, label="opaque")
    ax.plot([0.2, 0.8], [0.5, 0.5], alpha=0, label="transparent")
    ax.errorbar([0.5], [0.5], yerr=[0.1], label="error bar")
    ax.errorbar([0.5], [0.5], yerr=[0.1], fmt="none", label="bars only")
    ax.plot([-1, 0], [0.5, 0.5], label="ends on the left edge")
    ax.plot([1, 2], [0.5, 0.5], label="starts on the right edge")
    ax.plot([0.5, 0.5], [-1, 0], label="ends on the bottom edge")
    ax.plot([0.5, 0.5], [1, 2], label="starts on the top edge")
    ax.plot([0.2, 0.8], [-0.5, -0.5], label="below")
    ax.plot([1.5, 1.6], [0.5, 0.5], label="right")
    ax.plot([0.5, 0.6], [1.5, 1.6], label="above")
    ax.plot([-0.6, -0.5], [0.5, 0.5], label="left")
    ax.plot([np.nan, 0.5], [0.5, np.nan], label="no finite point")
    ax.scatter([0.5], [0.5], label="point inside")
    ax.scatter([0.5], [5], label="point above")
    ax.bar([0.5], [0.1], bottom=0.2, label="bar inside")
    ax.bar([0.5], [0.1], bottom=5, label="bar above")
    ax.fill_between([0.2, 0.8], [5, 5], [6, 6], label="band above")
    ax.legend(fontsize=3)
    assert sorted(checks.legend_problems(drawn(fig))) == sorted(
        f"axes 2: legend entry {name!r} shows nothing inside the axes"
        for name in (
            "transparent",
            "bars only",
            "below",
            "right",
            "above",
            "left",
            "no finite point",
            "point above",
            "bar above",
            "band above",
        )
    )


def test_an_artist_of_another_kind_is_not_judged(figures):
    fig, ax = figures()
    ax.set(xlim=(0, 1), ylim=(0, 1))
    note = ax.text(5, 5, "far away")
    renderer = drawn(fig).canvas.get_renderer()
    assert checks.shows_something_inside(note, ax, renderer) is True
    note.set_visible(False)
    assert checks.shows_something_inside(note, ax, renderer) is False


# Text on tick labels and crowded tick labels


def test_crowded_tick_labels_name_the_first_overlapping_pair_of_each_axis(figures):
    fig, (first, second) = figures(1, 2, figsize=(4, 2))
    for ax in (first, second):
        ax.set(xlim=(0, 1), ylim=(0, 1))
        ax.set_xticks([0, 0.02, 0.04, 0.5], ["first label", "second label", "third label", "far"])
    second.set_yticks([0, 0.01, 1], ["lower", "upper", "top"])
    problems = checks.crowded_tick_labels(drawn(fig))
    assert problems == [
        "axes 1 x-axis: tick labels 'first label' and 'second label' overlap",
        "axes 2 x-axis: tick labels 'first label' and 'second label' overlap",
        "axes 2 y-axis: tick labels 'lower' and 'upper' overlap",
    ]


def test_crowded_labels_are_found_in_order_along_the_axis(figures):
    fig, ax = unit_panel(figures)
    ax.set_xticks([1, 0.5, 0.52, 0], ["end", "middle", "close by", "start"])
    assert checks.crowded_tick_labels(drawn(fig)) == ["'panel' x-axis: tick labels 'middle' and 'close by' overlap"]


def test_text_on_tick_labels_names_the_axes_and_the_start_of_the_text(figures):
    fig, (first, second) = figures(1, 2, figsize=(6, 2.4))
    for ax in (first, second):
        ax.set(xlim=(0, 1), ylim=(0, 1), xticks=[0, 1], yticks=[0, 1])
    fig.tight_layout()
    long_text = "a long note that runs on and on over the labels of the axis"
    second.text(0, -0.02, long_text, transform=second.transAxes, va="top", fontsize=6)
    first.text(0.5, -0.05, "   ", transform=first.transAxes, va="top")  # blank: nothing to read
    hidden = first.text(0, -0.02, "hidden text", transform=first.transAxes, va="top")
    first.set_title("a title clear of the ticks")
    hidden.set_visible(False)
    assert checks.text_on_tick_labels(drawn(fig)) == [f"axes 2: text {long_text[:40]!r} lies on its tick labels"]


# The canvas


def test_content_beyond_each_side_of_the_canvas_is_named_with_its_excess(figures):
    fig, ax = figures(figsize=(3, 2))
    ax.set(xticks=[0, 1], yticks=[0, 1])
    assert checks.content_outside_canvas(drawn(fig)) == []
    fig.text(-0.1, 0.5, "L", ha="right")
    fig.text(0.5, -0.1, "B", va="top")
    fig.text(1.1, 0.5, "R", ha="left")
    fig.text(0.5, 1.1, "T", va="bottom")
    sides = checks.content_outside_canvas(drawn(fig))
    assert [line.split(" by ")[0] for line in sides] == ["left", "bottom", "right", "top"]
    excess = [float(line.split(" by ")[1].removesuffix(" in")) for line in sides]
    assert all(0.2 < value < 0.5 for value in excess), sides


def test_a_small_crossing_is_reported_and_a_tolerance_can_excuse_it(figures):
    fig, ax = figures(figsize=(3, 2))
    ax.set(xticks=[0, 1], yticks=[0, 1])
    fig.text(1.0, 0.5, "R" * 3, ha="left")
    sides = checks.content_outside_canvas(drawn(fig))
    assert len(sides) == 1 and sides[0].startswith("right by ")
    assert checks.content_outside_canvas(fig, tolerance_inches=1.0) == []


# Every check at once


def test_the_figures_problems_are_prefixed_by_their_check(figures):
    fig, ax = unit_panel(figures)
    ax.plot([0, 1], [5, 6], label="above")
    ax.legend()
    ax.set_yticks([0.5])
    ax.set_xticks([0, 0.01, 1], ["first", "second", "end"])
    fig.text(1.05, 0.5, "beyond", ha="left")
    fig.text(-0.05, 0.5, "before", ha="right")
    problems = checks.figure_problems(fig)
    assert problems[:3] == [
        "legend: 'panel': legend entry 'above' shows nothing inside the axes",
        "ticks: 'panel' y-axis: 1 labelled tick (at least 2 needed)",
        "overlap: 'panel' x-axis: tick labels 'first' and 'second' overlap",
    ]
    assert len(problems) == 4
    assert re.fullmatch(
        r"canvas: content crosses the canvas \(left by [\d.]+ in, right by [\d.]+ in\): make room in the layout",
        problems[3],
    ), problems[3]


def test_labels_of_hidden_or_switched_off_axes_are_not_read(figures):
    fig, axes = figures(1, 3, figsize=(7, 2.4))
    hidden, off, checked = axes
    for ax in axes:
        ax.set(xlim=(0, 1), ylim=(0, 1), yticks=[0, 1])
        ax.set_xticks([0, 0.01, 1], ["crowded", "labels", "end"])
    hidden.set_visible(False)
    off.axis("off")
    for ax in (hidden, off):
        ax.text(0, -0.02, "a note", transform=ax.transAxes, va="top")
    assert checks.crowded_tick_labels(drawn(fig)) == ["axes 3 x-axis: tick labels 'crowded' and 'labels' overlap"]
    assert checks.text_on_tick_labels(fig) == []


def test_a_minor_label_on_a_major_one_overlaps_it(figures):
    fig, ax = unit_panel(figures)
    ax.set_xticks([0.5], ["minor half"], minor=True)
    ax.xaxis.remove_overlapping_locs = False  # keep the minor tick where a major one is
    assert checks.crowded_tick_labels(drawn(fig)) == ["'panel' x-axis: tick labels '0.5' and 'minor half' overlap"]


def colour_bar(figures, low, high, ticks, labels=None):
    fig, ax = figures(figsize=(3.5, 2.6))
    image = ax.imshow([[low, high], [low, high]], vmin=low, vmax=high)
    ax.set(xticks=[0, 1], yticks=[0, 1])
    bar = fig.colorbar(image, ax=ax, label="value")
    bar.set_ticks(ticks, labels=labels)
    return drawn(fig)


def test_a_colour_bar_gap_of_exactly_the_limit_passes(figures):
    assert checks.COLOUR_BAR_GAP == 0.4
    assert checks.tick_problems(colour_bar(figures, 0, 10, [0, 4, 6, 10])) == []


def test_a_colour_bars_gaps_are_shares_of_its_own_range(figures):
    assert checks.tick_problems(colour_bar(figures, 10, 14, [10, 11.5, 12.5, 14])) == []
    assert checks.tick_problems(colour_bar(figures, 10, 14, [10, 11])) == [
        "colour bar 'value': 75% of its length without a labelled tick"
    ]


def test_a_colour_bar_with_named_ends_still_needs_ticks_along_it(figures):
    assert checks.tick_problems(colour_bar(figures, 0, 4, [0, 4], ["low", "high"])) == [
        "colour bar 'value': 100% of its length without a labelled tick"
    ]


def test_an_axis_hidden_alone_leaves_the_other_checked(figures):
    fig, ax = unit_panel(figures)
    ax.xaxis.set_visible(False)
    ax.set_yticks([])
    assert checks.tick_problems(drawn(fig)) == ["'panel' y-axis: 0 labelled ticks (at least 2 needed)"]
