"""Regenerated figures against committed references: image RMS, data tolerances, an HTML report.

A reference set is a directory of ``<paper>/<figure>.png`` and ``.csv`` files made by the pipeline
itself (``bless``). ``diff_figures`` compares every registered figure with it, writes side-by-side
and difference images and ``report.html``, and returns one summary row per figure.
"""
from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.testing.compare import compare_images
from PIL import Image

from .io import atomic_path, write_csv, write_text
from .paths import figure_paths

FIGURES_ROOT = Path("figures")
RASTER_SUFFIXES = (".png", ".jpg", ".jpeg")
SUMMARY_COLUMNS = [
    "key", "paper", "figure", "status", "passed", "image_rms", "image_tolerance",
    "data_max_abs", "data_max_rel", "data_worst_column", "message",
]


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


def column_tolerance(settings: dict, column: str) -> Tolerance:
    """The tolerance of one data column: its own entry under ``columns``, else the defaults."""
    own = settings.get("columns", {}).get(column, {})
    return Tolerance(float(own.get("atol", settings["atol"])), float(own.get("rtol", settings["rtol"])))


DATA_COLUMNS = ["column", "atol", "rtol", "max_abs", "max_rel", "n_outside"]


@dataclass
class DataResult:
    passed: bool
    message: str
    max_abs: float = np.nan
    max_rel: float = np.nan
    worst_column: str = ""
    columns: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=DATA_COLUMNS))


def compare_data(actual: str | os.PathLike, expected: str | os.PathLike, settings: dict) -> DataResult:
    """Compare two tidy CSVs: same columns and rows; numbers within ``|a - e| <= atol + rtol |e|``."""
    got, ref = pd.read_csv(actual), pd.read_csv(expected)
    if list(got.columns) != list(ref.columns):
        only_ref = [c for c in ref.columns if c not in got.columns]
        only_got = [c for c in got.columns if c not in ref.columns]
        return DataResult(False, f"columns differ: reference only {only_ref}, regenerated only {only_got}")
    if len(got) != len(ref):
        return DataResult(False, f"{len(got)} rows, reference has {len(ref)}")
    rows = []
    for column in ref.columns:
        tol = column_tolerance(settings, column)
        a, e = got[column], ref[column]
        if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(e):
            a, e = a.to_numpy(float), e.to_numpy(float)
            same = (a == e) | (np.isnan(a) & np.isnan(e))  # equal infinities, NaN against NaN
            with np.errstate(invalid="ignore", divide="ignore"):
                error = np.where(same, 0.0, np.abs(a - e))
                bad = ~same & ~(error <= tol.atol + tol.rtol * np.abs(e))
                error = np.nan_to_num(error, nan=np.inf)  # a NaN against a number is infinitely off
                relative = np.nan_to_num(np.where(same, 0.0, error / np.abs(e)), nan=np.inf)
            max_abs, max_rel = float(error.max(initial=0.0)), float(relative.max(initial=0.0))
        else:  # labels, categories: equal as text
            bad = (a.fillna("").astype(str) != e.fillna("").astype(str)).to_numpy(bool)
            max_abs = max_rel = np.inf if bad.any() else 0.0
        rows.append({"column": column, "atol": tol.atol, "rtol": tol.rtol, "max_abs": max_abs,
                     "max_rel": max_rel, "n_outside": int(bad.sum())})
    columns = pd.DataFrame(rows, columns=DATA_COLUMNS)
    failing = columns[columns.n_outside > 0]
    worst = columns.loc[columns.max_rel.idxmax(), "column"] if (columns.max_rel > 0).any() else ""
    if len(failing):
        message = "data outside tolerance: " + ", ".join(
            f"{r.column} ({r.n_outside} values, max |d| {r.max_abs:.3g}, max rel {r.max_rel:.3g})"
            for r in failing.itertuples()
        )
    else:
        message = "data within tolerance"
    return DataResult(failing.empty, message, float(columns.max_abs.max()), float(columns.max_rel.max()),
                      worst, columns)


@dataclass
class ImageResult:
    passed: bool
    rms: float
    message: str


def _read_rgb(path: str | os.PathLike) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def _save_png(array: np.ndarray, path: Path) -> None:
    with atomic_path(path) as tmp:
        Image.fromarray(array).save(tmp, format="png")


def side_by_side(images: list[np.ndarray], gap: int = 16, height: int | None = None) -> np.ndarray:
    """Images left to right on white, top-aligned; ``height`` rescales each to that height."""
    if height is not None:
        images = [
            np.asarray(Image.fromarray(im).resize((max(1, round(im.shape[1] * height / im.shape[0])), height),
                                                  Image.Resampling.LANCZOS))
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


def compare_image(actual: str | os.PathLike, expected: str | os.PathLike, tolerance: float,
                  out_prefix: Path) -> ImageResult:
    """RMS difference (0-255 scale) by ``matplotlib.testing.compare.compare_images``.

    Writes ``<out_prefix>.png`` (reference | regenerated) and ``<out_prefix>-diff.png`` (the
    difference image, black where the pixels agree).
    """
    ref, got = _read_rgb(expected), _read_rgb(actual)
    _save_png(side_by_side([ref, got]), out_prefix.with_name(out_prefix.name + ".png"))
    diff_path = out_prefix.with_name(out_prefix.name + "-diff.png")
    if ref.shape != got.shape:
        return ImageResult(False, np.nan, f"image size {got.shape[1]}x{got.shape[0]}, "
                                          f"reference {ref.shape[1]}x{ref.shape[0]}")
    with tempfile.TemporaryDirectory() as scratch:
        # compare_images writes its difference image next to the actual file: keep that out of figures/.
        copy = Path(scratch) / "regenerated.png"
        shutil.copyfile(actual, copy)
        # tol=0 returns the RMS of every non-identical pair; the pass/fail test is ours.
        result = compare_images(str(expected), str(copy), tol=0, in_decorator=True)
        if result is None:
            rms, difference = 0.0, np.zeros_like(ref)
        else:
            rms, difference = float(result["rms"]), _read_rgb(result["diff"])
    _save_png(difference, diff_path)
    passed = rms <= tolerance
    return ImageResult(passed, rms, f"image RMS {rms:.3g} {'<=' if passed else '>'} {tolerance:g}")


def figure_key(path: str | os.PathLike) -> str:
    """``figures/local_to_global/fig1.pdf`` -> ``local_to_global/fig1`` (its place in a reference set)."""
    path = Path(path).with_suffix("")
    try:
        path = path.relative_to(FIGURES_ROOT)
    except ValueError:
        pass
    return path.as_posix()


def reference_keys(reference_dir: str | os.PathLike) -> list[str]:
    reference_dir = Path(reference_dir)
    if not reference_dir.is_dir():
        return []
    return sorted(p.relative_to(reference_dir).with_suffix("").as_posix() for p in reference_dir.rglob("*.png"))


def _normalise(text: str) -> str:
    return re.sub(r"[^a-z0-9/]+", "_", text.lower())


def external_matches(key: str, external_dir: str | os.PathLike) -> list[Path]:
    """Raster images under ``external_dir`` for figure ``key``: ``<paper>/<figure>[_anything].png``.

    Paper folder names match with ``-`` or ``_`` (``local-to-global`` = ``local_to_global``).
    """
    external_dir = Path(external_dir)
    wanted = _normalise(key)
    found = []
    for path in sorted(external_dir.rglob("*")):
        if path.suffix.lower() not in RASTER_SUFFIXES:
            continue
        name = _normalise(path.relative_to(external_dir).with_suffix("").as_posix())
        if name == wanted or name.startswith(wanted + "_"):
            found.append(path)
    return found


def diff_figures(figures: list[dict], reference_dir: str | os.PathLike, out_dir: str | os.PathLike,
                 image_tolerance: float, data_settings: dict,
                 external_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """Compare every figure (registry records: path, paper, figure) with ``reference_dir``.

    A reference without a regenerated figure, or a figure without a reference, fails as missing.
    Writes ``out_dir/report.html``, ``summary.csv`` (one row per figure, also returned) and the
    images under ``out_dir/images``.
    """
    reference_dir, out_dir = Path(reference_dir), Path(out_dir)
    images = out_dir / "images"
    records = {figure_key(r["path"]): r for r in figures}
    rows = []
    details = {}
    for key in sorted(set(records) | set(reference_keys(reference_dir))):
        record = records.get(key, {"path": str(FIGURES_ROOT / key) + ".pdf", "paper": "", "figure": ""})
        paths = figure_paths(record["path"])
        ref_png, ref_csv = reference_dir / f"{key}.png", reference_dir / f"{key}.csv"
        row = {"key": key, "paper": record["paper"], "figure": record["figure"], "image_tolerance": image_tolerance}
        if key not in records:
            row.update(status="missing figure", passed=False,
                       message=f"the reference set has {key}, the pipeline no longer registers it")
        elif not paths["png"].exists():
            row.update(status="missing figure", passed=False, message=f"not produced: {paths['png']}")
        elif not ref_png.exists():
            row.update(status="missing reference", passed=False,
                       message=f"no reference {ref_png}: run `make bless` if the figure is new")
        else:
            image = compare_image(paths["png"], ref_png, image_tolerance, images / key)
            if ref_csv.exists() and paths["csv"].exists():
                data = compare_data(paths["csv"], ref_csv, data_settings)
            else:
                data = DataResult(False, f"data missing: {ref_csv if not ref_csv.exists() else paths['csv']}")
            details[key] = data.columns
            passed = image.passed and data.passed
            row.update(status="pass" if passed else "fail", passed=passed, image_rms=image.rms,
                       data_max_abs=data.max_abs, data_max_rel=data.max_rel,
                       data_worst_column=data.worst_column, message=f"{image.message}; {data.message}")
        rows.append(row)
    summary = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    summary["passed"] = summary["passed"].astype(bool)
    external = _external_panels(records, external_dir, images) if external_dir else []
    write_csv(summary, out_dir / "summary.csv")
    write_text(_report_html(summary, details, external, reference_dir), out_dir / "report.html")
    return summary


def _external_panels(records: dict, external_dir: str | os.PathLike, images: Path) -> list[dict]:
    """Ours | the external image(s), one panel per figure that has any; no pass or fail."""
    panels = []
    for key, record in sorted(records.items()):
        png = figure_paths(record["path"])["png"]
        matches = external_matches(key, external_dir)
        if not matches or not png.exists():
            continue
        ours = _read_rgb(png)
        target = images / "external" / f"{key}.png"
        _save_png(side_by_side([ours] + [_read_rgb(m) for m in matches], height=ours.shape[0]), target)
        panels.append({"key": key, "record": record, "image": target, "sources": matches})
    return panels


_STYLE = """
body { font-family: sans-serif; margin: 2em; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; font-size: 90%; }
.pass { background: #dff0d8; } .fail { background: #f2dede; }
img { max-width: 100%; border: 1px solid #ddd; }
"""


def _cell(value) -> str:
    if isinstance(value, float):
        return "" if np.isnan(value) else f"{value:.3g}"
    return html.escape(str(value))


def _report_html(summary: pd.DataFrame, details: dict, external: list[dict], reference_dir: Path) -> str:
    failed = int((~summary.passed).sum())
    head = ["figure", "paper", "paper figure", "result", "image RMS", "tolerance", "data max |d|",
            "data max rel", "worst column", "details"]
    columns = ["key", "paper", "figure", "status", "image_rms", "image_tolerance", "data_max_abs",
               "data_max_rel", "data_worst_column", "message"]
    lines = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Figures against references</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Regenerated figures against references</h1>",
        f"<p>Reference set: <code>{html.escape(str(reference_dir))}</code>. "
        f"{len(summary)} figures, {len(summary) - failed} pass, {failed} fail.</p>",
        "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>",
    ]
    for row in summary.itertuples():
        cells = [f"<a href='#{row.key}'>{_cell(row.key)}</a>"] + [_cell(getattr(row, c)) for c in columns[1:]]
        lines.append(f"<tr class='{'pass' if row.passed else 'fail'}'>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    lines.append("</table>")
    for row in summary.itertuples():
        lines.append(f"<h2 id='{row.key}'>{_cell(row.key)}: {_cell(row.status)}</h2>")
        lines.append(f"<p>{_cell(row.paper)} {_cell(row.figure)}. {_cell(row.message)}</p>")
        if row.key in details:
            lines.append("<p>Reference (left) | regenerated (right); then the difference image.</p>")
            lines.append(f"<img src='images/{row.key}.png'><br><img src='images/{row.key}-diff.png'>")
            columns_table = details[row.key]
            changed = columns_table[columns_table.max_abs > 0]
            if len(changed):
                lines.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in changed.columns) + "</tr>")
                for r in changed.itertuples(index=False):
                    cls = "fail" if r.n_outside else "pass"
                    lines.append(f"<tr class='{cls}'>" + "".join(f"<td>{_cell(v)}</td>" for v in r) + "</tr>")
                lines.append("</table>")
    if external:
        lines.append("<h1>External references (side by side, not compared)</h1>")
        for panel in external:
            sources = ", ".join(html.escape(p.name) for p in panel["sources"])
            lines.append(f"<h2>{_cell(panel['key'])}</h2><p>Regenerated (left) | {sources}</p>")
            lines.append(f"<img src='images/external/{panel['key']}.png'>")
    lines.append("</body></html>")
    return "\n".join(lines) + "\n"


def bless(workdir: str | os.PathLike, dest: str | os.PathLike) -> list[str]:
    """Make ``dest`` the reference set of every figure in ``<workdir>/figures/all``: PNG and CSV.

    References of figures no longer in the manifest are removed, so the set is exactly the
    pipeline's figures. Returns the keys written.
    """
    workdir, dest = Path(workdir), Path(dest)
    manifest = pd.read_csv(workdir / FIGURES_ROOT / "all", sep="\t")
    figures = [path for path in manifest.path if Path(path).suffix == ".pdf"]
    wanted = set()
    for path in figures:
        key = figure_key(path)
        for suffix, source in figure_paths(workdir / path).items():
            if suffix == "pdf":
                continue
            target = dest / f"{key}.{suffix}"
            with atomic_path(target) as tmp:
                shutil.copyfile(source, tmp)
            wanted.add(target)
    for stale in [p for p in dest.rglob("*") if p.is_file() and p not in wanted]:
        stale.unlink()
    for folder in sorted((p for p in dest.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    return [figure_key(path) for path in figures]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    blessing = commands.add_parser("bless", help="copy the PNG and CSV of every figure of a run into a reference set")
    blessing.add_argument("workdir", help="where the pipeline ran (holds figures/all)")
    blessing.add_argument("dest", help="the reference set, e.g. figures/reference/smoke")
    args = parser.parse_args(argv)
    keys = bless(args.workdir, args.dest)
    print(f"blessed {len(keys)} figures into {args.dest}: {', '.join(keys)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
