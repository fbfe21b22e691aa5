"""The one figure-saving function: PDF + PNG + CSV, byte-identical for the same data."""

import hashlib
import json
import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from replication.plotting import PNG_DPI, apply_style, save_figure


def draw(colour="C0", title="a title"):
    apply_style()
    fig, ax = plt.subplots(figsize=(3, 2))
    x = np.linspace(0, 1, 50)
    ax.plot(x, x**2, color=colour)
    ax.set_title(title)
    fig.tight_layout()
    return fig, pd.DataFrame({"x": x, "y": x**2})


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_save_figure_writes_pdf_png_and_data(tmp_path):
    fig, data = draw()
    paths = save_figure(fig, tmp_path / "sub" / "fig.pdf", data)
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["fig.csv", "fig.pdf", "fig.png"]
    assert paths["pdf"].read_bytes().startswith(b"%PDF")
    assert paths["png"].read_bytes().startswith(b"\x89PNG")
    pd.testing.assert_frame_equal(pd.read_csv(paths["csv"]), data, check_exact=False, rtol=1e-9)
    image = plt.imread(paths["png"])
    assert image.shape[:2] == (2 * PNG_DPI, 3 * PNG_DPI)  # the figure's size at the fixed dpi, exactly


@pytest.mark.parametrize("laid_out", [True, False], ids=["laid-out", "laid-out-by-the-check"])
def test_the_png_is_what_savefig_writes_byte_for_byte(tmp_path, laid_out):
    """The PNG comes from the checks' drawing at the PNG's dpi, not from a drawing of its own: the
    same bytes as savefig's of the figure as saved, the figure's dpi as it was."""
    fig, _ = draw()
    if not laid_out:  # tick labels over the canvas's left edge: the tight layout comes first
        fig.subplots_adjust(left=0.0)
    dpi = fig.dpi
    paths = save_figure(fig, tmp_path / "fig.pdf")
    assert fig.dpi == dpi
    if not laid_out:
        assert fig.subplotpars.left > 0.05  # moved by the tight layout before the PNG was taken
    fig.savefig(tmp_path / "savefig.png", format="png", dpi=PNG_DPI, metadata={"Software": None})
    assert digest(paths["png"]) == digest(tmp_path / "savefig.png")


def test_a_longer_title_keeps_the_pixel_size(tmp_path):
    short = save_figure(draw(title="a")[0], tmp_path / "a" / "fig.pdf")
    long = save_figure(draw(title="a longer title, (p, q) = (0.5, 0.8)")[0], tmp_path / "b" / "fig.pdf")
    assert plt.imread(short["png"]).shape == plt.imread(long["png"]).shape
    assert digest(short["png"]) != digest(long["png"])


@pytest.mark.parametrize(
    "place",
    [
        lambda fig, ax: fig.suptitle("above the canvas", y=1.1),
        lambda fig, ax: ax.set_xlabel("a label " * 20),
        lambda fig, ax: ax.set_title("a title far too long for a figure three inches wide"),
    ],
    ids=["suptitle", "label", "title"],
)
def test_content_cut_off_at_the_canvas_is_an_error(tmp_path, place):
    fig, _ = draw()
    place(fig, fig.axes[0])
    with pytest.raises(ValueError, match="content crosses the canvas"):
        save_figure(fig, tmp_path / "fig.pdf")
    assert not (tmp_path / "fig.pdf").exists()


def test_same_data_gives_byte_identical_files(tmp_path):
    fig, data = draw()
    first = save_figure(fig, tmp_path / "a" / "fig.pdf", data)
    fig, data = draw()
    second = save_figure(fig, tmp_path / "b" / "fig.pdf", data)
    for kind in ("pdf", "png", "csv"):
        assert digest(first[kind]) == digest(second[kind]), kind
    pdf = first["pdf"].read_bytes()
    assert b"CreationDate" not in pdf and b"ModDate" not in pdf and b"Producer" not in pdf


def test_different_data_gives_different_files(tmp_path):
    first = save_figure(draw("C0")[0], tmp_path / "a" / "fig.pdf")
    second = save_figure(draw("C3")[0], tmp_path / "b" / "fig.pdf")
    assert digest(first["png"]) != digest(second["png"])


def test_no_partial_file_on_failure(tmp_path):
    fig, _ = draw()

    class Broken(pd.DataFrame):
        def to_csv(self, *args, **kwargs):
            raise RuntimeError("disk full")

    try:
        save_figure(fig, tmp_path / "fig.pdf", Broken({"x": [1]}))
    except RuntimeError:
        pass
    assert not (tmp_path / "fig.csv").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_content_a_layout_can_fit_gets_the_tight_layout(tmp_path):
    """A figure laid out by hand (or not at all) whose legend or labels cross the canvas is laid out
    once by matplotlib and saved at its fixed size."""
    apply_style()
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, 1], label="curve")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))
    ax.set(xlabel="t", ylabel="y")
    paths = save_figure(fig, tmp_path / "fig.pdf")
    assert plt.imread(paths["png"]).shape[:2] == (2 * PNG_DPI, 3 * PNG_DPI)


def test_the_theme_file_is_what_seaborn_sets():
    """plotting_theme.json holds seaborn's set_theme as the installed seaborn does it (after seaborn
    changes, `python -m replication.plotting` rewrites it)."""
    from replication.plotting import THEME_FILE, seaborn_theme

    assert json.loads(THEME_FILE.read_text()) == seaborn_theme()


STATE = """
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.colors as colors
import matplotlib.pyplot as plt
from replication import plotting
{setup}
rc = {{key: repr(value) for key, value in plt.rcParams.items()}}
codes = {{code: colors.to_rgb(code) for code in plotting.COLOUR_CODES}}
print(json.dumps({{"rc": rc, "codes": codes, "seaborn": "seaborn" in sys.modules}}))
"""


def style_state(setup: str) -> dict:
    """matplotlib's rcParams and colour codes in a fresh interpreter after ``setup``."""
    command = [sys.executable, "-c", STATE.format(setup=setup)]
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def test_the_style_is_seaborns_theme_without_importing_seaborn():
    """apply_style() leaves matplotlib as seaborn's set_theme and the project's STYLE over it do,
    every rcParam and colour code alike, and seaborn is not imported."""
    ours = style_state("plotting.apply_style()")
    seaborns = style_state(
        "import seaborn as sns\nsns.set_theme(**plotting.THEME)\nplt.rcParams.update(plotting.STYLE)"
    )
    assert not ours.pop("seaborn") and seaborns.pop("seaborn")
    assert ours == seaborns
    assert ours["codes"]["k"] == [0.1, 0.1, 0.1]  # not matplotlib's black: the theme is there
