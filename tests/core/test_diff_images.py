"""Image comparison of a regenerated figure with its reference (RMS via matplotlib)."""

import numpy as np
import pytest
from PIL import Image

from helpers import draw, shared_scope
from replication.diff import compare_image, image_rms_between, side_by_side
from replication.diff.images import highlighted_difference, padded, read_rgb

TOLERANCE = 1.0


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


def png(path, array):
    Image.fromarray(np.asarray(array, np.uint8)).save(path)
    return path


def test_an_rms_equal_to_the_tolerance_passes(tmp_path):
    white = np.full((4, 4, 3), 255)
    marked = white.copy()
    marked[0, 0] = 0
    a, b = png(tmp_path / "a.png", marked), png(tmp_path / "b.png", white)
    rms = image_rms_between(a, b)
    assert rms == pytest.approx(255 * np.sqrt(3 / 48))  # three channels of one of 16 pixels, by 255
    at_bound = compare_image(a, b, rms, tmp_path / "at")
    assert at_bound.passed is True and at_bound.message == f"image RMS {rms:.3g} <= {rms:.3g}"
    below = compare_image(a, b, rms * 0.999, tmp_path / "below")
    assert below.passed is False and below.message == f"image RMS {rms:.3g} > {rms * 0.999:.3g}"
    # The difference image: black where the images agree, bright at the changed pixel.
    difference = np.asarray(Image.open(tmp_path / "at-diff.png").convert("RGB"))
    assert difference.shape == (4, 4, 3) and difference[1:].max() == 0 and difference[0, 0].min() > 0


def test_image_rms_by_hand(tmp_path):
    """The measure of the diff and of the image envelopes (replication.diff.envelopes) alike."""
    white = np.full((2, 3, 3), 255)
    marked = white.copy()
    marked[1, 2] = [225, 255, 195]  # one pixel: -30 in red, -60 in blue
    a, b = png(tmp_path / "a.png", white), png(tmp_path / "b.png", marked)
    # RMS over the 18 channel values of the 0-255 scale: sqrt((30^2 + 60^2) / 18) = 15.81...
    assert image_rms_between(b, a) == pytest.approx(np.sqrt((30**2 + 60**2) / 18), rel=1e-6)
    assert image_rms_between(a, a) == 0.0


def test_sizes_in_the_message_are_width_x_height(tmp_path):
    ref, got = png(tmp_path / "ref.png", np.zeros((4, 6, 3))), png(tmp_path / "got.png", np.zeros((5, 7, 3)))
    result = compare_image(got, ref, 1.0, tmp_path / "out")
    assert result.passed is False and np.isnan(result.rms)
    assert result.message == "image size 7x5, reference 6x4"
    assert np.isnan(image_rms_between(got, ref)) and image_rms_between(ref, ref) == 0.0


def test_side_by_side_places_images_left_to_right_top_aligned():
    red = np.zeros((2, 4, 3), np.uint8)
    red[..., 0] = 200
    blue = np.zeros((5, 2, 3), np.uint8)
    blue[..., 2] = 200
    green = np.zeros((3, 5, 3), np.uint8)
    green[..., 1] = 200
    canvas = side_by_side([red, blue, green], gap=1)
    assert canvas.shape == (5, 4 + 1 + 2 + 1 + 5, 3) and canvas.dtype == np.uint8
    assert (canvas[:2, 0:4] == red[0, 0]).all() and (canvas[2:, 0:4] == 255).all()  # white below the short one
    assert (canvas[:, 4] == 255).all() and (canvas[:, 7] == 255).all()  # the gaps
    assert (canvas[:, 5:7] == blue[0, 0]).all()
    assert (canvas[:3, 8:13] == green[0, 0]).all() and (canvas[3:, 8:13] == 255).all()
    assert side_by_side([red]).shape == (2, 4, 3)  # default gap 16 only between images
    assert side_by_side([red, blue]).shape == (5, 4 + 16 + 2, 3)


def test_side_by_side_scales_each_image_to_a_height():
    wide = np.full((2, 4, 3), 100, np.uint8)  # 2 high, 4 wide
    tall = np.full((10, 1, 3), 100, np.uint8)  # scaled to 4 high: 0.4 pixels wide, kept at 1
    canvas = side_by_side([wide, tall], gap=2, height=4)
    assert canvas.shape == (4, 8 + 2 + 1, 3)  # 2 x 4 becomes 4 x 8
    assert (canvas[:, :8] == 100).all() and (canvas[:, 10] == 100).all()  # a flat colour stays flat


def test_a_size_change_still_draws_the_difference_on_a_common_canvas(tmp_path, drawn):
    result = compare(drawn, "larger", tmp_path)
    assert not result.passed and "size" in result.message
    difference = np.asarray(Image.open(tmp_path / "fig-diff.png"))
    larger, base = np.asarray(Image.open(drawn["larger"])), np.asarray(Image.open(drawn["reference"]))
    assert difference.shape[:2] == (max(larger.shape[0], base.shape[0]), max(larger.shape[1], base.shape[1]))
    assert difference.max() > 0


def test_images_are_read_as_rgb_whatever_their_mode(tmp_path):
    grey = tmp_path / "grey.png"
    Image.fromarray(np.full((3, 5), 70, np.uint8), mode="L").save(grey)
    translucent = tmp_path / "translucent.png"
    Image.fromarray(np.full((3, 5, 4), 90, np.uint8), mode="RGBA").save(translucent)
    assert read_rgb(grey).shape == (3, 5, 3) and (read_rgb(grey) == 70).all()
    assert read_rgb(translucent).shape == (3, 5, 3) and (read_rgb(translucent) == 90).all()


def test_images_of_different_sizes_are_padded_with_white_from_the_top_left():
    wide, tall = np.full((3, 4, 3), 7, np.uint8), np.full((5, 2, 3), 9, np.uint8)
    a, b = padded([wide, tall])
    assert a.shape == b.shape == (5, 4, 3) and a.dtype == b.dtype == np.uint8
    assert (a[:3] == 7).all() and (a[3:] == 255).all()
    assert (b[:, :2] == 9).all() and (b[:, 2:] == 255).all()
    (same,) = padded([wide])
    assert (same == wide).all()


def test_the_difference_image_marks_what_changed_in_red_on_b_faded():
    b = np.zeros((12, 12, 3), np.uint8)
    b[...] = (99, 129, 159)  # grey 129 on average
    a = b.copy()
    a[6, 6, 1] += 25  # one channel of one pixel, beyond the threshold of 24
    a[1, 1, 0] += 24  # at the threshold: not a change
    out, share = highlighted_difference(a, b)
    assert share == pytest.approx(1 / 144)
    red = (out == (230, 20, 20)).all(axis=2)
    # The changed pixel grown by two pixels (a diamond: two steps of the four neighbours).
    rows, cols = np.indices(red.shape)
    assert (red == (abs(rows - 6) + abs(cols - 6) <= 2)).all()
    # Elsewhere B faded to light grey: 255 - (255 - 129) x 0.3 = 217.2, cut to 217.
    assert (out[~red] == 217).all() and out.dtype == np.uint8
    unchanged, none = highlighted_difference(b, b)
    assert none == 0.0 and (unchanged == 217).all()


def test_an_rms_below_one_is_measured_not_rounded_to_zero(tmp_path):
    white = np.full((4, 4, 3), 255)
    nudged = white.copy()
    nudged[0, 0, 0] = 254  # one channel of one pixel, by one
    a, b = png(tmp_path / "a.png", nudged), png(tmp_path / "b.png", white)
    assert image_rms_between(a, b) == pytest.approx(np.sqrt(1 / 48))
    assert compare_image(a, b, 0.1, tmp_path / "out").passed is False


def test_a_figure_grown_by_a_white_margin_fails_on_its_size_with_a_black_difference(tmp_path):
    base = np.full((4, 6, 3), 255, np.uint8)
    base[1:3, 1:5] = 0
    grown = np.vstack([base, np.full((2, 6, 3), 255, np.uint8)])  # the same figure, two rows taller
    ref, got = png(tmp_path / "ref.png", base), png(tmp_path / "got.png", grown)
    result = compare_image(got, ref, 1.0, tmp_path / "out")
    assert result.passed is False and result.message == "image size 6x6, reference 6x4"
    difference = np.asarray(Image.open(tmp_path / "out-diff.png").convert("RGB"))
    assert difference.shape == (6, 6, 3) and difference.max() == 0  # on the common canvas, nothing differs
    assert np.asarray(Image.open(tmp_path / "out.png")).shape == (6, 6 + 16 + 6, 3)  # reference | regenerated


def test_side_by_side_scales_with_the_lanczos_filter():
    """Fine detail (noise) scaled down: Lanczos, the filter thumbnails keep their edges with."""
    image = np.random.default_rng(0).integers(0, 256, (12, 12, 3), dtype=np.uint8)
    lanczos = np.asarray(Image.fromarray(image).resize((5, 5), Image.Resampling.LANCZOS))
    assert (side_by_side([image], height=5) == lanczos).all()
