"""compare_figures and verdicts_between_trees (``make compare``'s figures) on two hand-made reference
sets of 8 x 8 PNGs and three-row CSVs: the rows of identical, one-sided, changed and moved figures
with every deviation, tolerance, margin and envelope known by hand, the panels written, and the
overlay of B's curves on A's."""

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from PIL import Image

from helpers import shared_scope
from replication.diff.envelopes import IMAGE_COLUMN
from replication.diff.figure_changes import (
    FIGURE_CHANGE_COLUMNS,
    VERDICT_COLUMNS,
    _ratio,
    compare_figures,
    line_overlay,
    verdicts_between_trees,
)
from replication.diff.seeds import NO_SEEDS
from replication.diff.trees import Tree

WHITE = np.full((8, 8, 3), 255, np.uint8)
SPOT = WHITE.copy()
SPOT[2, 3, 0] = 225  # one channel of one pixel 30 darker: RMS sqrt(30^2 / 192)
SPOT_RMS = math.sqrt(30**2 / WHITE.size)
SETTINGS = {"envelope_factor": 3, "image_rms": 1.0, "data": {"atol": 1e-3, "rtol": 0.0}}
# The image floor 1 plus 3 x the image's envelope; the data floor 1e-3 plus 3 x the column's envelope.
# An envelope of a figure that is not compared here must not widen the tolerances of the others.
ENVELOPES = {("p/within", IMAGE_COLUMN): 2.0, ("p/within", "y"): 0.5, ("p/elsewhere", "y"): 100.0}
POINTS = pd.DataFrame({"x": [0.5, 1.0, 2.0], "y": [1.0, 2.0, 4.0]})
CURVES = pd.DataFrame({"step": [1, 2, 1, 2], "curve": ["a", "a", "b", "b"], "y": [1.0, 2.0, 3.0, 4.0]})


def write_figure(root, key, image=WHITE, data=None):
    (root / key).parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(image).save(root / f"{key}.png")
    if data is not None:
        data.to_csv(root / f"{key}.csv", index=False)


def reference_set(root, figures):
    root.mkdir(parents=True)
    (root / "settings.yaml").write_text("name: test\nsettings: {}\n")
    for key, (image, data) in figures.items():
        write_figure(root, key, image, data)
    return root


def with_y(frame, row, y):
    frame = frame.copy()
    frame.loc[row, "y"] = y
    return frame


@pytest.fixture(scope=shared_scope)
def compared(tmp_path_factory):
    """Two reference sets, their comparison, and the overlay figures drawn (closed figures kept)."""
    root = tmp_path_factory.mktemp("compare")
    a = reference_set(
        root / "a",
        {
            "p/same": (WHITE, POINTS),
            "p/same_image": (WHITE, None),
            "p/only_a": (WHITE, POINTS),
            "p/within": (WHITE, POINTS),
            "p/moved": (WHITE, CURVES),
            "p/reshaped": (WHITE, POINTS),
            "p/data_in_a": (WHITE, POINTS),
        },
    )
    b = reference_set(
        root / "b",
        {
            "p/same": (WHITE, POINTS),
            "p/same_image": (WHITE, None),
            "p/only_b": (WHITE, POINTS),
            "p/within": (SPOT, with_y(POINTS, 1, 2.5)),
            "p/moved": (WHITE, with_y(CURVES, 3, 5.0)),
            "p/reshaped": (WHITE, POINTS.assign(z=1.0)),
            "p/data_in_a": (SPOT, None),
        },
    )
    closed = []
    close = plt.close
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plt, "close", lambda fig=None: (closed.append(fig), close(fig)))
        figures, panels = compare_figures(Tree("A", a), Tree("B", b), root / "out", SETTINGS, ENVELOPES)
    return {"figures": figures, "panels": panels, "out": root / "out", "closed": closed}


def rows_of(compared, key):
    return compared["figures"][compared["figures"].key == key].set_index("quantity", drop=False)


def test_one_row_per_figure_and_quantity_in_the_tables_columns(compared):
    figures = compared["figures"]
    assert list(figures.columns) == FIGURE_CHANGE_COLUMNS
    assert list(figures.key.drop_duplicates()) == sorted(figures.key.unique())
    quantities = figures.groupby("key", sort=False).quantity.apply(lambda q: list(q.fillna("-")))
    assert quantities.to_dict() == {
        "p/data_in_a": ["image rms"],
        "p/moved": ["image rms", "step", "curve", "y"],
        "p/only_a": ["-"],
        "p/only_b": ["-"],
        "p/reshaped": ["image rms", "data"],
        "p/same": ["-"],
        "p/same_image": ["-"],
        "p/within": ["image rms", "x", "y"],
    }


def test_identical_and_one_sided_figures(compared):
    figures = compared["figures"].set_index("key")
    assert figures.loc["p/same", ["status", "message"]].tolist() == ["identical", "image and data byte-identical"]
    assert figures.loc["p/same_image", "status"] == "identical"  # the same image, no data on either side
    assert figures.loc["p/only_a", ["status", "message"]].tolist() == ["only in A", "p/only_a is only in A"]
    assert figures.loc["p/only_b", ["status", "message"]].tolist() == ["only in B", "p/only_b is only in B"]
    assert set(compared["panels"]) == {"p/within", "p/moved", "p/reshaped", "p/data_in_a"}


def test_trees_without_changed_figures_have_every_column(tmp_path):
    a = reference_set(tmp_path / "a", {"p/same": (WHITE, POINTS), "p/only_a": (WHITE, None)})
    b = reference_set(tmp_path / "b", {"p/same": (WHITE, POINTS)})
    figures, panels = compare_figures(Tree("A", a), Tree("B", b), tmp_path / "out", SETTINGS, {})
    assert list(figures.columns) == FIGURE_CHANGE_COLUMNS and panels == {}
    assert list(verdicts_between_trees(figures).status) == ["only in A", "identical"]


def test_a_change_within_the_envelope_is_within_noise(compared):
    rows = rows_of(compared, "p/within")
    assert set(rows.status) == {"within noise"}
    image = rows.loc["image rms"]
    assert image.deviation == pytest.approx(SPOT_RMS, rel=1e-3)
    assert image.tolerance == 1.0 + 3 * 2.0 and image.envelope == 2.0
    assert image.margin == pytest.approx(SPOT_RMS / 7.0, rel=1e-3)
    assert image.x_envelope == pytest.approx(SPOT_RMS / 2.0, rel=1e-3)
    y = rows.loc["y"]
    assert (y.deviation, y.envelope) == (0.5, 0.5)
    assert y.tolerance == pytest.approx(1e-3 + 3 * 0.5)
    assert y.margin == pytest.approx(0.5 / 1.501) and y.x_envelope == 1.0
    x = rows.loc["x"]
    assert (x.deviation, x.margin, x.envelope) == (0.0, 0.0, 0.0)
    assert x.x_envelope == 0.0  # no deviation: zero whatever the envelope
    assert image.message.startswith(f"image RMS {SPOT_RMS:.3g} <= 7; ")
    assert set(rows.seed_noise) == {NO_SEEDS}
    assert compared["panels"]["p/within"] == {"overlay": False, "changed_share": 1 / 64}


def test_a_change_beyond_the_floors_moved(compared):
    rows = rows_of(compared, "p/moved")
    assert set(rows.status) == {"moved"}
    image, y = rows.loc["image rms"], rows.loc["y"]
    # The images are byte-identical, the data moved: no envelope was measured for this figure.
    assert (image.deviation, image.tolerance, image.margin, image.envelope) == (0.0, 1.0, 0.0, 0.0)
    assert (y.deviation, y.tolerance, y.envelope) == (1.0, 1e-3, 0.0)
    assert y.margin == pytest.approx(1000.0) and y.x_envelope == np.inf
    assert rows.loc["curve"].deviation == 0.0
    assert compared["panels"]["p/moved"] == {"overlay": True, "changed_share": 0.0}


def test_data_that_changed_shape_moved_as_a_whole(compared):
    rows = rows_of(compared, "p/reshaped")
    assert set(rows.status) == {"moved"}
    data = rows.loc["data"]
    assert data.deviation == np.inf and np.isnan(data.tolerance) and np.isnan(data.envelope)
    assert np.isnan(data.margin) and np.isnan(data.x_envelope)
    assert data.message.startswith("image RMS 0 <= 1; columns differ: reference only [], regenerated only ['z']")


def test_a_figure_without_data_on_both_sides_compares_its_image_only(compared):
    row = rows_of(compared, "p/data_in_a").loc["image rms"]
    assert row.status == "moved" and row.deviation == pytest.approx(SPOT_RMS, rel=1e-3)
    assert row.message == f"image RMS {SPOT_RMS:.3g} > 1"
    assert row.seed_noise == NO_SEEDS
    assert compared["panels"]["p/data_in_a"]["overlay"] is False


def test_the_panels_of_each_compared_figure_are_written(compared):
    images = compared["out"] / "images" / "p"
    side_by_side = np.asarray(Image.open(images / "within.png"))
    assert side_by_side.shape == (8, 8 + 16 + 8, 3)  # A | B with a gap
    assert (side_by_side[:, :8] == WHITE).all() and (side_by_side[:, 24:] == SPOT).all()
    highlighted = np.asarray(Image.open(images / "within-diff.png"))
    assert tuple(highlighted[2, 3]) == (230, 20, 20) and tuple(highlighted[7, 7]) == (255, 255, 255)
    assert (images / "moved-overlay.png").is_file() and not (images / "within-overlay.png").exists()
    assert not (images / "same.png").exists()


def test_the_overlay_draws_b_over_a_with_both_names(compared):
    overlay = [fig for fig in compared["closed"] if fig is not None]
    assert len(overlay) == 1
    (axis,) = overlay[0].axes
    assert axis.get_title() == "y" and axis.get_legend().get_title().get_text() == "solid: A, dashed: B"
    assert [text.get_text() for text in axis.get_legend().get_texts()] == ["A", "B"]
    assert [list(line.get_ydata()) for line in axis.get_lines()] == [[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [3.0, 5.0]]


@pytest.mark.parametrize(
    "deviation, scale, ratio",
    [
        (2.0, 4.0, 0.5),
        (2.0, 0.5, 4.0),
        (1.0, 4.0, 0.25),
        (0.0, 0.0, 0.0),
        (2.0, 0.0, np.inf),
        (2.0, -1.0, np.inf),
        (None, 1.0, np.nan),
        (np.nan, 1.0, np.nan),
        (np.nan, 0.0, np.nan),
        (1.0, None, np.nan),
        (1.0, np.nan, np.nan),
        (0.0, np.nan, np.nan),
    ],
)
def test_ratio_of_a_deviation_to_its_scale(deviation, scale, ratio):
    assert _ratio(deviation, scale) == pytest.approx(ratio, nan_ok=True)


def verdict_rows():
    nan = np.nan
    rows = [
        ("p/z", "moved", "image rms", 0.5, 1.0, "beyond seed spread", "y", 0.2, "z moved"),
        ("p/z", "moved", "y", 3.0, 6.0, "beyond seed spread", "y", 0.2, "z moved"),
        ("p/z", "moved", "x", 1.0, 9.0, "beyond seed spread", "y", 0.2, "z moved"),
        ("p/a", "only in A", nan, nan, nan, NO_SEEDS, "", nan, "p/a is only in A"),
        ("p/m", "identical", nan, nan, nan, NO_SEEDS, "", nan, "byte-identical"),
        ("p/r", "moved", "data", nan, np.inf, NO_SEEDS, "", nan, "columns differ"),
    ]
    columns = ["key", "status", "quantity", "margin", "x_envelope", "seed_noise", "seed_column", "seed_range_a"]
    return pd.DataFrame(rows, columns=[*columns, "message"])


def test_a_figures_verdict_is_its_worst_quantity():
    verdicts = verdicts_between_trees(verdict_rows())
    assert list(verdicts.columns) == [*VERDICT_COLUMNS, "message"]
    assert list(verdicts.key) == ["p/a", "p/m", "p/r", "p/z"]
    moved = verdicts.set_index("key").loc["p/z"]
    assert (moved.status, moved.worst, moved.margin, moved.x_envelope) == ("moved", "y", 3.0, 6.0)
    assert (moved.seed_noise, moved.seed_column, moved.seed_range_a, moved.message) == (
        "beyond seed spread",
        "y",
        0.2,
        "z moved",
    )
    only = verdicts.set_index("key").loc["p/a"]
    assert (only.status, only.worst, only.message) == ("only in A", "", "p/a is only in A")
    assert np.isnan(only.margin) and np.isnan(only.x_envelope) and only.seed_noise == NO_SEEDS
    # No quantity with a margin: no worst quantity, and none of its multiples of the envelope.
    reshaped = verdicts.set_index("key").loc["p/r"]
    assert (reshaped.worst, reshaped.message) == ("", "columns differ")
    assert np.isnan(reshaped.margin) and np.isnan(reshaped.x_envelope)


def test_no_figures_no_verdicts():
    verdicts = verdicts_between_trees(verdict_rows().iloc[:0])
    assert verdicts.empty and list(verdicts.columns) == [*VERDICT_COLUMNS, "message"]


# The overlay of a line figure, drawn directly.


@pytest.fixture
def drawn(monkeypatch):
    """The figures line_overlay closes, kept for inspection."""
    closed = []
    close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: (closed.append(fig), close(fig)))
    return closed


def write_csv(path, frame):
    frame.to_csv(path, index=False)
    return path


def test_an_overlay_has_one_axes_per_measured_column_b_dashed_over_a(tmp_path, drawn):
    # Two curves (labelled by "curve" and "seed"), rows out of order: drawn sorted by step, curves in
    # sorted order; "extra" is only in A (not drawn), "seed" is an integer label.
    a = pd.DataFrame(
        {
            "step": [2, 1, 2, 1],
            "curve": ["b", "b", "a", "a"],
            "seed": [0, 0, 0, 0],
            "loss": [0.2, 0.1, 0.4, 0.3],
            "acc": [0.5, 0.6, 0.7, 0.8],
            "extra": [1.0, 1.0, 1.0, 1.0],
        }
    )
    b = a.drop(columns="extra").assign(loss=a.loss + 1.0)
    target = tmp_path / "deep" / "er" / "overlay.png"
    assert line_overlay(write_csv(tmp_path / "a.csv", a), write_csv(tmp_path / "b.csv", b), "A", "B", target)
    (fig,) = drawn
    assert not plt.fignum_exists(fig.number)
    assert tuple(fig.get_size_inches()) == pytest.approx((8.4, 3.2))
    with Image.open(target) as image:
        assert image.size == (840, 320)
    loss, acc = fig.axes
    assert (loss.get_title(), loss.get_xlabel(), acc.get_title(), acc.get_xlabel()) == ("loss", "step", "acc", "step")
    lines = loss.get_lines()
    assert [line.get_linestyle() for line in lines] == ["-", "-", "--", "--"]
    assert [line.get_color() for line in lines] == ["C0", "C1", "C0", "C1"]
    assert {line.get_linewidth() for line in lines} == {1.0}
    assert [line.get_label() for line in lines if not line.get_label().startswith("_")] == ["A", "B"]
    assert [list(line.get_xdata()) for line in lines] == [[1, 2]] * 4
    assert [list(line.get_ydata()) for line in lines] == [[0.3, 0.4], [0.1, 0.2], [1.3, 1.4], [1.1, 1.2]]
    assert [list(line.get_ydata()) for line in acc.get_lines()][:2] == [[0.8, 0.7], [0.6, 0.5]]
    assert loss.get_legend().get_title().get_text() == "solid: A, dashed: B" and acc.get_legend() is None
    # Drawn again into the folder that now exists.
    assert line_overlay(tmp_path / "a.csv", tmp_path / "b.csv", "A", "B", target)


def test_a_single_curve_overlay_has_no_legend_title(tmp_path, drawn):
    a = pd.DataFrame({"epoch": [1, 0], "loss": [0.5, 1.0]})
    b = a.assign(loss=[0.25, 0.75])
    target = tmp_path / "overlay.png"
    assert line_overlay(write_csv(tmp_path / "a.csv", a), write_csv(tmp_path / "b.csv", b), "A", "B", target)
    (fig,) = drawn
    (axis,) = fig.axes
    assert [line.get_linestyle() for line in axis.get_lines()] == ["-", "--"]
    assert [line.get_color() for line in axis.get_lines()] == ["C0", "C0"]
    assert [list(line.get_xdata()) for line in axis.get_lines()] == [[0, 1], [0, 1]]
    assert [line.get_label() for line in axis.get_lines()] == ["A", "B"]
    assert axis.get_legend().get_title().get_text() == ""


@pytest.mark.parametrize(
    "a, b",
    [
        (POINTS, POINTS),  # no step, time, epoch...: not a line figure
        (CURVES, CURVES.rename(columns={"step": "epoch"})),  # A's x is not B's
        (CURVES.rename(columns={"step": "epoch"}), CURVES),
        (CURVES.assign(y=[1, 2, 3, 4]), CURVES.assign(y=[1, 2, 3, 4])),  # nothing measured: integers only
    ],
)
def test_a_figure_without_a_common_x_or_measured_column_is_no_overlay(tmp_path, drawn, a, b):
    target = tmp_path / "overlay.png"
    assert not line_overlay(write_csv(tmp_path / "a.csv", a), write_csv(tmp_path / "b.csv", b), "A", "B", target)
    assert not target.exists() and drawn == []
