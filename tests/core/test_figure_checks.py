"""The checks every figure passes before it is saved (replication.figure_checks, run by save_figure):
each fails on a small figure broken on purpose, naming figure, axes and problem, and passes once
the figure is fixed."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import TwoSlopeNorm

from replication.plotting import apply_style, save_figure


def panel(title="panel", size=(3, 2.4)):
    apply_style()
    fig, ax = plt.subplots(figsize=size)
    ax.plot([0, 1], [0.5, 0.6], label="inside")
    ax.set_title(title)
    fig.tight_layout()
    return fig, ax


def fails(fig, tmp_path, pattern):
    with pytest.raises(ValueError, match=pattern):
        save_figure(fig, tmp_path / "fig.pdf")
    assert not list(tmp_path.iterdir()), "nothing written"


def saves(fig, tmp_path):
    assert save_figure(fig, tmp_path / "fig.pdf")["png"].is_file()


# Ticks


@pytest.mark.parametrize(
    "break_it, problem",
    [
        (lambda ax: ax.set_yticks([]), r"'panel' y-axis: 0 labelled ticks"),
        (lambda ax: ax.set_xticks([0.5]), r"'panel' x-axis: 1 labelled tick \(at least 2 needed\)"),
        (lambda ax: ax.set_yticks([0.5, 0.55, 0.6], ["", "", ""]), r"'panel' y-axis: 3 of 3 named ticks without"),
        (lambda ax: ax.set_yticks([0.5, 0.55, 0.6], ["low", "", "high"]), r"'panel' y-axis: 1 of 3 named ticks"),
    ],
    ids=["no ticks", "one tick", "names left empty", "a name left out"],
)
def test_an_axis_without_two_labelled_ticks_is_an_error(tmp_path, break_it, problem):
    fig, ax = panel()
    break_it(ax)
    fails(fig, tmp_path, r"fig\.pdf: ticks: " + problem)


def test_one_named_category_is_a_labelled_axis(tmp_path):
    fig, ax = panel()
    ax.barh([0], [0.7], label="share")
    ax.set_yticks([0], ["(0.8, 0.3)"])
    saves(fig, tmp_path)


def test_panels_sharing_an_axis_are_labelled_on_the_outer_one(tmp_path):
    apply_style()
    fig, axes = plt.subplots(2, 2, figsize=(5, 4), sharex=True, sharey=True)
    for ax in axes.ravel():
        ax.plot([0, 1], [0, 1])
    fig.tight_layout()
    saves(fig, tmp_path)


def colour_bar_figure(ticks_on_both_sides: bool):
    """A diverging colour bar white at 1 over values from 0.3 to 6: its lower half is short in
    values but half the bar."""
    apply_style()
    fig, ax = plt.subplots(figsize=(3.5, 2.6))
    image = ax.imshow([[0.3, 2.0], [4.0, 6.0]], cmap="coolwarm", norm=TwoSlopeNorm(vcenter=1, vmin=0.3, vmax=6))
    bar = fig.colorbar(image, ax=ax, label="ratio")
    bar.set_ticks([0.4, 0.7, 1, 2, 4, 6] if ticks_on_both_sides else [1, 2, 3, 4, 5, 6])
    ax.set_title("panel")
    fig.tight_layout()
    return fig, bar


def test_a_colour_bar_with_an_unlabelled_part_is_an_error(tmp_path):
    fig, _ = colour_bar_figure(ticks_on_both_sides=False)
    fails(fig, tmp_path, r"ticks: colour bar 'ratio': 50% of its length without a labelled tick")


def test_a_colour_bar_without_ticks_is_an_error(tmp_path):
    fig, bar = colour_bar_figure(ticks_on_both_sides=True)
    bar.set_ticks([])
    fails(fig, tmp_path, r"ticks: colour bar 'ratio': 0 labelled ticks")


def test_a_colour_bar_labelled_along_its_length_passes(tmp_path):
    saves(colour_bar_figure(ticks_on_both_sides=True)[0], tmp_path)


# Legend entries


def test_a_legend_entry_with_nothing_inside_its_axes_is_an_error(tmp_path):
    fig, ax = panel()
    ax.plot([0, 1], [18.0, 23.0], label="far above")
    ax.axhline(0.55, label="reference")  # drawn in axes coordinates along x: inside
    ax.scatter([0.5], [40.0], label="a point above")
    ax.fill_between([0, 1], [30, 30], [31, 31], label="a band above")
    ax.bar([0.5], [0.1], bottom=50, label="a bar above")
    ax.bar([0.5], [0.0], bottom=0.5, label="a bar of length 0 inside")  # shows its value: listed
    ax.plot([0, 1], [0.5, 0.6], label="hidden", visible=False)
    ax.plot([0, 1], [30.0, 31.0])  # no label: not in the legend, may lie outside
    ax.set_ylim(0.4, 0.7)
    ax.legend(fontsize=5)
    expected = [f"legend: 'panel': legend entry {name!r} shows nothing inside the axes" for name in
                ("far above", "a point above", "a band above", "hidden", "a bar above")]  # fmt: skip
    fails(fig, tmp_path, "^" + ".*fig\\.pdf: " + "; ".join(expected) + "$")


def test_a_curve_that_enters_the_axes_anywhere_counts_as_shown(tmp_path):
    fig, ax = panel()
    ax.plot([0, 1, 2], [20.0, 0.5, np.nan], label="comes down")
    ax.fill_between([0, 1], [0.45, 0.5], [0.55, 0.6], alpha=0.2, label="band")
    ax.set_yscale("log")
    ax.set_ylim(0.1, 1.0)
    ax.legend()
    saves(fig, tmp_path)


def test_three_dimensional_axes_are_left_to_their_view(tmp_path):
    apply_style()
    fig = plt.figure()
    ax = fig.add_subplot(projection="3d")
    ax.plot([0, 1], [0, 1], [50, 60], label="out of the z-range")
    ax.set_zlim(0, 1)
    ax.legend()
    saves(fig, tmp_path)


# Text on tick labels


@pytest.mark.parametrize(
    "place",
    [
        lambda ax: ax.text(0.5, -0.08, "a note under the axes", transform=ax.transAxes, ha="center", va="top"),
        lambda ax: ax.set_xlabel("iteration", labelpad=-14),
    ],
    ids=["note", "axis label"],
)
def test_text_on_tick_labels_is_an_error(tmp_path, place):
    fig, ax = panel()
    place(ax)
    note = "(a note under the axes|iteration)"
    fails(fig, tmp_path, rf"fig\.pdf: overlap: 'panel': text '{note}' lies on its tick labels")


def test_text_beside_the_tick_labels_passes(tmp_path):
    fig, ax = panel()
    ax.text(0.5, 0.1, "a note inside", transform=ax.transAxes, ha="center")
    ax.set_xlabel("iteration")
    fig.tight_layout()
    saves(fig, tmp_path)


def test_every_problem_of_a_figure_is_named_at_once(tmp_path):
    fig, ax = panel()
    ax.set_yticks([])
    ax.plot([0, 1], [9, 9], label="off")
    ax.set_ylim(0, 1)
    ax.legend()
    with pytest.raises(ValueError) as error:
        save_figure(fig, tmp_path / "fig.pdf")
    assert "legend: 'panel': legend entry 'off'" in str(error.value)
    assert "ticks: 'panel' y-axis: 0 labelled ticks" in str(error.value)


def test_tick_labels_on_each_other_are_an_error(tmp_path):
    fig, ax = panel()
    ax.set_xticks(np.linspace(0, 1, 40), [f"label {i}" for i in range(40)])
    fails(fig, tmp_path, r"overlap: 'panel' x-axis: tick labels 'label 0' and 'label 1' overlap")


# The smoke trees


@pytest.mark.pipeline
@pytest.mark.parametrize(
    "tree, manifest",
    [("smoke_run", "all"), ("phase_smoke_run", "phase"), ("plateau_smoke_run", "plateau")],
    ids=["figures/all", "figures/phase", "figures/plateau"],
)
def test_every_figure_of_the_smoke_trees_passes_the_checks(request, tree, manifest):
    """A figure is written only once it passes the checks (a failing one fails its job, and the
    tree's build): every figure the tree's manifest lists has its PNG, and no job logged a check's
    error."""
    import pandas as pd

    workdir = request.getfixturevalue(tree)
    listed = pd.read_csv(workdir / "figures" / manifest, sep="\t").path
    figures = [path for path in listed if path.endswith(".pdf")]
    assert figures, f"figures/{manifest} lists no figure"
    assert [path for path in figures if not (workdir / path).with_suffix(".png").is_file()] == []
    failed = [log for log in (workdir / "logs").rglob("*.log") if "ValueError: figures/" in log.read_text()]
    assert failed == []
