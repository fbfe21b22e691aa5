"""Image comparison of a regenerated figure with its reference (RMS via matplotlib)."""

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from conftest import shared_scope
from replication.diff import compare_image
from replication.plotting import apply_style, save_figure

TOLERANCE = 1.0


def draw(pdf, colour="C0", scale=1.0, size=(3, 2)):
    """Two curves through save_figure, as every figure of the project is made."""
    import matplotlib.pyplot as plt

    apply_style()
    x = np.linspace(0, 1, 50)
    data = pd.concat(
        [
            pd.DataFrame({"curve": "a", "x": x, "y": np.sin(3 * x) * scale}),
            pd.DataFrame({"curve": "b", "x": x, "y": np.cos(3 * x)}),
        ],
        ignore_index=True,
    )
    fig, ax = plt.subplots(figsize=size)
    for (name, group), c in zip(data.groupby("curve"), (colour, "C1")):
        ax.plot(group.x, group.y, color=c, lw=2, label=name)
    ax.legend()
    return save_figure(fig, pdf, data)


def nonzero_pixels(path):
    return int((np.asarray(Image.open(path).convert("RGB")) > 0).any(axis=2).sum())


@pytest.fixture(scope=shared_scope)
def drawn(tmp_path_factory):
    """The reference and its regenerations, each drawn once for the module."""
    root = tmp_path_factory.mktemp("figures")
    variants = {
        "reference": {},
        "again": {},
        "recoloured": {"colour": "C3"},
        "perturbed": {"scale": 1.05},
        "larger": {"size": (4, 2.5)},
    }
    return {name: draw(root / name / "fig.pdf", **kwargs)["png"] for name, kwargs in variants.items()}


def compare(drawn, name, out, tolerance=TOLERANCE):
    return compare_image(drawn[name], drawn["reference"], tolerance, out / "fig")


def test_identical_regeneration_passes(tmp_path, drawn):
    result = compare(drawn, "again", tmp_path)
    assert result.passed and result.rms == 0.0
    assert (tmp_path / "fig.png").exists()
    assert nonzero_pixels(tmp_path / "fig-diff.png") == 0


def test_changed_colour_fails_with_diff_image(tmp_path, drawn):
    result = compare(drawn, "recoloured", tmp_path)
    assert not result.passed and result.rms > TOLERANCE
    assert "RMS" in result.message
    assert nonzero_pixels(tmp_path / "fig-diff.png") > 100
    # The side-by-side image holds both, so it is wider than either.
    assert Image.open(tmp_path / "fig.png").width > 2 * Image.open(drawn["reference"]).width


def test_perturbed_curve_fails_with_diff_image(tmp_path, drawn):
    result = compare(drawn, "perturbed", tmp_path)
    assert not result.passed
    assert nonzero_pixels(tmp_path / "fig-diff.png") > 0


def test_tolerance_decides(tmp_path, drawn):
    rms = compare(drawn, "recoloured", tmp_path / "a").rms
    assert compare(drawn, "recoloured", tmp_path / "b", rms * 1.01).passed
    assert not compare(drawn, "recoloured", tmp_path / "c", rms * 0.99).passed


def test_size_change_fails(tmp_path, drawn):
    result = compare(drawn, "larger", tmp_path)
    assert not result.passed and np.isnan(result.rms)
    assert "size" in result.message
