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
import time
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
    "key",
    "paper",
    "figure",
    "status",
    "passed",
    "quantity",
    "deviation",
    "tolerance",
    "margin",
    "reason",
    "message",
]


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


def column_tolerance(settings: dict, column: str) -> Tolerance:
    """The floor of one data column: its own entry under ``columns``, else the defaults."""
    own = settings.get("columns", {}).get(column, {})
    return Tolerance(float(own.get("atol", settings["atol"])), float(own.get("rtol", settings["rtol"])))


def tolerance_reason(k: float, envelope: float, floor: float, floor_text: str, measured: bool) -> str:
    """Why a tolerance has its value: which term dominates, then the formula with its numbers."""
    if not measured:
        basis = "floor (no envelope measured)"
    else:
        basis = "envelope" if k * envelope > floor else "floor"
    return f"{basis}: {k:g} x envelope {envelope:.3g} + {floor_text}"


DATA_COLUMNS = [
    "column",
    "atol",
    "rtol",
    "envelope",
    "max_abs",
    "max_rel",
    "deviation",
    "tolerance",
    "margin",
    "n_outside",
    "reason",
]


@dataclass
class DataResult:
    passed: bool
    message: str
    max_abs: float = np.nan
    max_rel: float = np.nan
    worst_column: str = ""
    columns: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=DATA_COLUMNS))


def compare_data(
    actual: str | os.PathLike,
    expected: str | os.PathLike,
    settings: dict,
    envelope: dict[str, float] | None = None,
    k: float = 0.0,
) -> DataResult:
    """Compare two tidy CSVs: same columns and rows; numbers within
    ``|a - e| <= k * envelope[column] + atol + rtol |e|``; labels equal as text.

    Per column: the largest deviation, the tolerance at that value and their ratio, the margin
    (<= 1 passes), with the reason the tolerance has its value.
    """
    envelope = envelope or {}
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
        spread = float(envelope.get(column, 0.0))
        a, e = got[column], ref[column]
        if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(e):
            a, e = a.to_numpy(float), e.to_numpy(float)
            same = (a == e) | (np.isnan(a) & np.isnan(e))  # equal infinities, NaN against NaN
            with np.errstate(invalid="ignore", divide="ignore"):
                error = np.nan_to_num(np.where(same, 0.0, np.abs(a - e)), nan=np.inf)  # NaN vs number: inf
                allowed = k * spread + tol.atol + tol.rtol * np.abs(np.nan_to_num(e, nan=0.0, posinf=0.0, neginf=0.0))
                ratio = np.where(same, 0.0, np.where(allowed > 0, error / allowed, np.inf))
                relative = np.nan_to_num(np.where(same, 0.0, error / np.abs(e)), nan=np.inf)
            bad = ratio > 1.0
            worst = int(np.argmax(ratio)) if len(ratio) else 0
            margin = float(ratio.max(initial=0.0))
            deviation = float(error[worst]) if len(error) else 0.0
            tolerance = float(allowed[worst]) if len(allowed) else tol.atol
            max_abs, max_rel = float(error.max(initial=0.0)), float(relative.max(initial=0.0))
            floor = tol.atol + tol.rtol * float(np.nanmax(np.abs(e), initial=0.0))
            reason = tolerance_reason(
                k, spread, floor, f"atol {tol.atol:.3g} + rtol {tol.rtol:.3g} |ref|", column in envelope
            )
        else:  # labels, categories: equal as text
            bad = (a.fillna("").astype(str) != e.fillna("").astype(str)).to_numpy(bool)
            max_abs = max_rel = deviation = margin = np.inf if bad.any() else 0.0
            tolerance, reason = 0.0, "labels: equal as text"
        rows.append(
            {
                "column": column,
                "atol": tol.atol,
                "rtol": tol.rtol,
                "envelope": spread,
                "max_abs": max_abs,
                "max_rel": max_rel,
                "deviation": deviation,
                "tolerance": tolerance,
                "margin": margin,
                "n_outside": int(bad.sum()),
                "reason": reason,
            }
        )
    columns = pd.DataFrame(rows, columns=DATA_COLUMNS)
    failing = columns[columns.n_outside > 0]
    worst = columns.loc[columns.margin.idxmax(), "column"] if (columns.margin > 0).any() else ""
    if len(failing):
        message = "data outside tolerance: " + ", ".join(
            f"{r.column} ({r.n_outside} values, max |d| {r.max_abs:.3g}, max rel {r.max_rel:.3g}, "
            f"margin {r.margin:.3g})"
            for r in failing.itertuples()
        )
    else:
        message = "data within tolerance"
    return DataResult(
        failing.empty, message, float(columns.max_abs.max()), float(columns.max_rel.max()), worst, columns
    )


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
        return float(result["rms"]), _read_rgb(result["diff"])


def image_rms_between(actual: str | os.PathLike, expected: str | os.PathLike) -> float:
    """RMS pixel difference of two PNGs (0-255 scale); NaN when their sizes differ."""
    if _read_rgb(actual).shape != _read_rgb(expected).shape:
        return np.nan
    return _rms_and_difference(actual, expected)[0]


def compare_image(
    actual: str | os.PathLike, expected: str | os.PathLike, tolerance: float, out_prefix: Path
) -> ImageResult:
    """RMS difference (0-255 scale) by ``matplotlib.testing.compare.compare_images``.

    Writes ``<out_prefix>.png`` (reference | regenerated) and ``<out_prefix>-diff.png`` (the
    difference image, black where the pixels agree).
    """
    ref, got = _read_rgb(expected), _read_rgb(actual)
    _save_png(side_by_side([ref, got]), out_prefix.with_name(out_prefix.name + ".png"))
    diff_path = out_prefix.with_name(out_prefix.name + "-diff.png")
    if ref.shape != got.shape:
        return ImageResult(
            False, np.nan, f"image size {got.shape[1]}x{got.shape[0]}, reference {ref.shape[1]}x{ref.shape[0]}"
        )
    rms, difference = _rms_and_difference(actual, expected)
    _save_png(np.zeros_like(ref) if difference is None else difference, diff_path)
    passed = rms <= tolerance
    return ImageResult(passed, rms, f"image RMS {rms:.3g} {'<=' if passed else '>'} {tolerance:.3g}")


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


def _quantity_row(base: dict, quantity: str, deviation: float, tolerance: float, margin: float, reason: str) -> dict:
    return {
        **base,
        "quantity": quantity,
        "deviation": deviation,
        "tolerance": tolerance,
        "margin": margin,
        "reason": reason,
    }


def diff_figures(
    figures: list[dict],
    reference_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    image_tolerance: float,
    data_settings: dict,
    external_dir: str | os.PathLike | None = None,
    envelope_factor: float = 0.0,
    provenance: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Compare every figure (registry records: path, paper, figure) with ``reference_dir``.

    Tolerances: image RMS <= ``image_tolerance + k * envelope``, data values within
    ``k * envelope + atol + rtol |ref|`` (k = ``envelope_factor``, envelopes from the reference
    set's ``envelope.csv``). A reference without a regenerated figure, or a figure without a
    reference, fails as missing. Writes ``out_dir/report.html``, ``summary.csv`` (one row per
    figure and compared quantity: the image and every data column, with deviation, tolerance,
    margin = deviation / tolerance and the reason; also returned) and the images under
    ``out_dir/images``. ``provenance`` (the regenerated run's) is shown beside the reference's.
    """
    from .ensemble import IMAGE_COLUMN, read_envelope
    from .provenance import read_provenance

    reference_dir, out_dir = Path(reference_dir), Path(out_dir)
    images = out_dir / "images"
    envelopes = read_envelope(reference_dir)
    k = float(envelope_factor)
    records = {figure_key(r["path"]): r for r in figures}
    rows = []
    details = {}
    for key in sorted(set(records) | set(reference_keys(reference_dir))):
        record = records.get(key, {"path": str(FIGURES_ROOT / key) + ".pdf", "paper": "", "figure": ""})
        paths = figure_paths(record["path"])
        ref_png, ref_csv = reference_dir / f"{key}.png", reference_dir / f"{key}.csv"
        base = {"key": key, "paper": record["paper"], "figure": record["figure"]}
        missing = None
        if key not in records:
            missing = ("missing figure", f"the reference set has {key}, the pipeline no longer registers it")
        elif not paths["png"].exists():
            missing = ("missing figure", f"not produced: {paths['png']}")
        elif not ref_png.exists():
            missing = ("missing reference", f"no reference {ref_png}: run `make bless` if the figure is new")
        if missing:
            rows.append(
                _quantity_row(
                    {**base, "status": missing[0], "passed": False, "message": missing[1]},
                    "",
                    np.nan,
                    np.nan,
                    np.nan,
                    missing[0],
                )
            )
            continue
        figure_envelope = {column: value for (k_, column), value in envelopes.items() if k_ == key}
        image_envelope = figure_envelope.pop(IMAGE_COLUMN, 0.0)
        tolerance = image_tolerance + k * image_envelope
        image = compare_image(paths["png"], ref_png, tolerance, images / key)
        if ref_csv.exists() and paths["csv"].exists():
            data = compare_data(paths["csv"], ref_csv, data_settings, figure_envelope, k)
        else:
            data = DataResult(False, f"data missing: {ref_csv if not ref_csv.exists() else paths['csv']}")
        details[key] = data.columns
        passed = image.passed and data.passed
        base.update(status="pass" if passed else "fail", passed=passed, message=f"{image.message}; {data.message}")
        image_margin = image.rms / tolerance if tolerance > 0 else (0.0 if image.rms == 0 else np.inf)
        rows.append(
            _quantity_row(
                base,
                "image rms",
                image.rms,
                tolerance,
                np.inf if np.isnan(image.rms) else image_margin,
                tolerance_reason(
                    k,
                    image_envelope,
                    image_tolerance,
                    f"diff.image_rms {image_tolerance:g}",
                    (key, IMAGE_COLUMN) in envelopes,
                ),
            )
        )
        if data.columns.empty:
            rows.append(_quantity_row(base, "data", np.nan, np.nan, np.inf, data.message))
        for column in data.columns.itertuples():
            rows.append(
                _quantity_row(base, column.column, column.deviation, column.tolerance, column.margin, column.reason)
            )
    summary = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    summary["passed"] = summary["passed"].astype(bool)
    external = _external_panels(records, external_dir, images) if external_dir else []
    provenances = (
        read_provenance(reference_dir / "provenance.json"),
        read_provenance(provenance) if provenance else {},
    )
    write_csv(summary, out_dir / "summary.csv")
    write_text(_report_html(summary, details, external, reference_dir, k, provenances), out_dir / "report.html")
    return summary


def figure_verdicts(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per figure of a summary: status, passed, message, the worst margin and its quantity."""
    rows = []
    for key, group in summary.groupby("key", sort=True):
        first, margins = group.iloc[0], group.margin
        measured = margins.notna().any()
        rows.append(
            {
                "key": key,
                "paper": first.paper,
                "figure": first.figure,
                "status": first.status,
                "passed": bool(first.passed),
                "margin": float(margins.max()) if measured else np.nan,
                "worst": group.loc[margins.idxmax(), "quantity"] if measured else "",
                "message": first.message,
            }
        )
    return pd.DataFrame(rows, columns=["key", "paper", "figure", "status", "passed", "margin", "worst", "message"])


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


def _provenance_table(provenances: tuple[dict, dict]) -> list[str]:
    reference, regenerated = provenances
    if not reference and not regenerated:
        return []
    lines = [
        "<h2>Provenance</h2><table><tr><th>field</th><th>reference (blessing machine)</th><th>regenerated</th></tr>"
    ]
    for name in sorted(set(reference) | set(regenerated)):
        left, right = reference.get(name, ""), regenerated.get(name, "")
        cls = "" if left == right else " class='fail'"
        lines.append(
            f"<tr{cls}><td>{html.escape(name)}</td><td>{html.escape(str(left))}</td>"
            f"<td>{html.escape(str(right))}</td></tr>"
        )
    lines.append("</table>")
    return lines


def _report_html(
    summary: pd.DataFrame,
    details: dict,
    external: list[dict],
    reference_dir: Path,
    k: float,
    provenances: tuple[dict, dict],
) -> str:
    verdicts = figure_verdicts(summary)
    failed = int((~verdicts.passed).sum())
    head = ["figure", "paper", "paper figure", "result", "margin", "worst quantity", "details"]
    lines = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Figures against references</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Regenerated figures against references</h1>",
        f"<p>Reference set: <code>{html.escape(str(reference_dir))}</code>. "
        f"{len(verdicts)} figures, {len(verdicts) - failed} pass, {failed} fail. "
        f"A quantity passes when its margin, largest deviation / tolerance, is at most 1; tolerances are "
        f"{k:g} x the numerical-noise envelope measured at blessing plus the configured floor.</p>",
        "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>",
    ]
    for row in verdicts.itertuples():
        cells = [f"<a href='#{row.key}'>{_cell(row.key)}</a>"] + [
            _cell(v) for v in (row.paper, row.figure, row.status, row.margin, row.worst, row.message)
        ]
        lines.append(
            f"<tr class='{'pass' if row.passed else 'fail'}'>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
        )
    lines.append("</table>")
    lines += _provenance_table(provenances)
    quantity_head = ["quantity", "deviation", "tolerance", "margin", "reason"]
    for row in verdicts.itertuples():
        lines.append(f"<h2 id='{row.key}'>{_cell(row.key)}: {_cell(row.status)}</h2>")
        lines.append(f"<p>{_cell(row.paper)} {_cell(row.figure)}. {_cell(row.message)}</p>")
        if row.key in details:
            lines.append("<p>Reference (left) | regenerated (right); then the difference image.</p>")
            lines.append(f"<img src='images/{row.key}.png'><br><img src='images/{row.key}-diff.png'>")
            quantities = summary[summary.key == row.key]
            lines.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in quantity_head) + "</tr>")
            for r in quantities.itertuples():
                cls = "fail" if not r.margin <= 1 else "pass"
                lines.append(
                    f"<tr class='{cls}'>" + "".join(f"<td>{_cell(getattr(r, c))}</td>" for c in quantity_head) + "</tr>"
                )
            lines.append("</table>")
    if external:
        lines.append("<h1>External references (side by side, not compared)</h1>")
        for panel in external:
            sources = ", ".join(html.escape(p.name) for p in panel["sources"])
            lines.append(f"<h2>{_cell(panel['key'])}</h2><p>Regenerated (left) | {sources}</p>")
            lines.append(f"<img src='images/external/{panel['key']}.png'>")
    lines.append("</body></html>")
    return "\n".join(lines) + "\n"


def bless(
    workdir: str | os.PathLike,
    dest: str | os.PathLike,
    members: list[str | os.PathLike] = (),
    ensemble: dict | None = None,
) -> list[str]:
    """Make ``dest`` the reference set of every figure in ``<workdir>/figures/all``: PNG and CSV,
    the run's ``provenance.json`` and, given ensemble ``members`` (runs of the same pipeline under
    perturbed numerics), ``envelope.csv``; ``ensemble`` fields are added to the provenance.

    Every other file in ``dest`` is removed, so the set is exactly the pipeline's figures. Returns
    the keys written.
    """
    from .ensemble import ENVELOPE_FILE, measure_envelope
    from .provenance import read_provenance, write_provenance

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
    provenance = read_provenance(workdir / FIGURES_ROOT / "provenance.json")
    provenance.update({f"ensemble_{name}": value for name, value in (ensemble or {}).items()})
    write_provenance(provenance, dest / "provenance.json")
    wanted.add(dest / "provenance.json")
    if members:
        write_csv(measure_envelope(workdir, list(members)), dest / ENVELOPE_FILE)
        wanted.add(dest / ENVELOPE_FILE)
    for stale in [p for p in dest.rglob("*") if p.is_file() and p not in wanted]:
        stale.unlink()
    for folder in sorted((p for p in dest.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    return [figure_key(path) for path in figures]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    blessing = commands.add_parser(
        "bless",
        help="copy the PNG and CSV of every figure of a run into a reference set, "
        "with the numerical-noise envelope of an ensemble",
    )
    blessing.add_argument("workdir", help="where the pipeline ran (holds figures/all)")
    blessing.add_argument("dest", help="the reference set, e.g. figures/reference/smoke")
    blessing.add_argument(
        "--members",
        type=int,
        nargs="*",
        default=[],
        help="perturbation members to run (integers >= 1); none: no envelope, floors only",
    )
    blessing.add_argument("--configfile", help="the config of the run in workdir (needed with --members)")
    blessing.add_argument(
        "--targets",
        nargs="*",
        default=["figures/all"],
        help="what each member builds; figures outside it get no envelope (floors only)",
    )
    blessing.add_argument("--scratch", help="folder for the members' runs (default: a temporary one, removed)")
    blessing.add_argument("--cores", default="all")
    args = parser.parse_args(argv)
    ensemble = {}
    with tempfile.TemporaryDirectory(prefix="ensemble-") as temporary:
        folders = []
        if args.members:
            if not args.configfile:
                parser.error("--members needs --configfile")
            from .ensemble import run_members
            from .numerics import DEFAULT_ULPS

            start = time.perf_counter()
            folders = run_members(args.members, args.configfile, args.scratch or temporary, args.targets, args.cores)
            wall = time.perf_counter() - start
            ensemble = {
                "members": " ".join(map(str, args.members)),
                "ulps": DEFAULT_ULPS,
                "targets": " ".join(args.targets),
                "wall_s": round(wall),
            }
            print(f"ensemble of {len(folders)} members: {wall:.0f} s wall in all", flush=True)
        keys = bless(args.workdir, args.dest, folders, ensemble)
    print(f"blessed {len(keys)} figures into {args.dest}: {', '.join(keys)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
