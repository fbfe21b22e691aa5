"""Figure images against their references: RMS difference, side-by-side and difference images."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.testing.compare import compare_images
from PIL import Image

from ..io import atomic_path


@dataclass
class ImageResult:
    passed: bool
    rms: float
    message: str


def read_rgb(path: str | os.PathLike) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def save_png(array: np.ndarray, path: Path) -> None:
    with atomic_path(path) as tmp:
        Image.fromarray(array).save(tmp, format="png")


def side_by_side(images: list[np.ndarray], gap: int = 16, height: int | None = None) -> np.ndarray:
    """Images left to right on white, top-aligned; ``height`` rescales each to that height."""
    if height is not None:
        images = [
            np.asarray(
                Image.fromarray(im).resize(
                    (max(1, round(im.shape[1] * height / im.shape[0])), height), Image.Resampling.LANCZOS
                )
            )
            for im in images
        ]
    rows = max(im.shape[0] for im in images)
    cols = sum(im.shape[1] for im in images) + gap * (len(images) - 1)
    canvas = np.full((rows, cols, 3), 255, np.uint8)
    x = 0
    for im in images:
        canvas[: im.shape[0], x : x + im.shape[1]] = im
        x += im.shape[1] + gap
    return canvas


def padded(images: list[np.ndarray]) -> list[np.ndarray]:
    """Images on white canvases of their common (largest) size, top-left aligned: a title that grew
    by a digit changes a PNG's size, and the two must still be comparable pixel by pixel."""
    rows, cols = max(im.shape[0] for im in images), max(im.shape[1] for im in images)
    out = []
    for im in images:
        canvas = np.full((rows, cols, 3), 255, np.uint8)
        canvas[: im.shape[0], : im.shape[1]] = im
        out.append(canvas)
    return out


def highlighted_difference(
    a: np.ndarray, b: np.ndarray, threshold: int = 24, grow: int = 2
) -> tuple[np.ndarray, float]:
    """B faded to a light grey with every pixel where A and B differ (by more than ``threshold`` in a
    channel, 0-255) painted red, grown by ``grow`` pixels so that a moved line shows at a glance;
    and the share of pixels that differ. A and B: the same shape (``padded``)."""
    from scipy.ndimage import binary_dilation

    changed = (np.abs(a.astype(int) - b.astype(int)) > threshold).any(axis=2)
    grey = b.astype(float).mean(axis=2, keepdims=True)
    out = np.repeat(255 - (255 - grey) * 0.3, 3, axis=2).astype(np.uint8)
    if changed.any() and grow:
        out[binary_dilation(changed, iterations=grow)] = (230, 20, 20)
    return out, float(changed.mean())


def _rms_and_difference(actual: str | os.PathLike, expected: str | os.PathLike) -> tuple[float, np.ndarray | None]:
    """RMS (0-255 scale) by ``matplotlib.testing.compare.compare_images`` and its difference image
    (None when the images are identical)."""
    with tempfile.TemporaryDirectory() as scratch:
        # compare_images writes its difference image next to the actual file: keep that out of figures/.
        copy = Path(scratch) / "regenerated.png"
        shutil.copyfile(actual, copy)
        # tol=0 returns the RMS of every non-identical pair; the pass/fail test is ours.
        result = compare_images(str(expected), str(copy), tol=0, in_decorator=True)
        if result is None:
            return 0.0, None
        return float(result["rms"]), read_rgb(result["diff"])


def image_rms_between(actual: str | os.PathLike, expected: str | os.PathLike) -> float:
    """RMS pixel difference of two PNGs (0-255 scale); NaN when their sizes differ."""
    if read_rgb(actual).shape != read_rgb(expected).shape:
        return np.nan
    return _rms_and_difference(actual, expected)[0]


def compare_image(
    actual: str | os.PathLike, expected: str | os.PathLike, tolerance: float, out_prefix: Path
) -> ImageResult:
    """RMS difference (0-255 scale) by ``matplotlib.testing.compare.compare_images``.

    Writes ``<out_prefix>.png`` (reference | regenerated) and ``<out_prefix>-diff.png`` (the
    difference image, black where the pixels agree).
    """
    ref, got = read_rgb(expected), read_rgb(actual)
    save_png(side_by_side([ref, got]), out_prefix.with_name(out_prefix.name + ".png"))
    diff_path = out_prefix.with_name(out_prefix.name + "-diff.png")
    if ref.shape != got.shape:
        # Still drawn: the difference on a common canvas shows what moved; the size change fails.
        with tempfile.TemporaryDirectory() as scratch:
            ref_padded, got_padded = padded([ref, got])
            save_png(ref_padded, Path(scratch) / "reference.png")
            save_png(got_padded, Path(scratch) / "regenerated.png")
            _, difference = _rms_and_difference(Path(scratch) / "regenerated.png", Path(scratch) / "reference.png")
        save_png(np.zeros_like(ref_padded) if difference is None else difference, diff_path)
        return ImageResult(
            False, np.nan, f"image size {got.shape[1]}x{got.shape[0]}, reference {ref.shape[1]}x{ref.shape[0]}"
        )
    rms, difference = _rms_and_difference(actual, expected)
    save_png(np.zeros_like(ref) if difference is None else difference, diff_path)
    passed = rms <= tolerance
    return ImageResult(passed, rms, f"image RMS {rms:.3g} {'<=' if passed else '>'} {tolerance:.3g}")
