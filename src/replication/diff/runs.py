"""Two runs side by side (``make compare A=... B=...``): what their settings differ in, which claims
changed verdict, and per figure and data column how far B moved from A, in multiples of the
figure's numerical-noise envelope.

"Moved" is the rule of ``make diff`` (``compare_data``, ``compare_image``: ``|b - a| <= k x envelope
+ atol + rtol |a|``, images by RMS against ``image_rms + k x envelope``), with A in the place of the
reference: a change the diff would pass is "within noise", never "moved". Envelopes come from the
reference set of B's settings (``diff.reference_set``): they were measured at those settings' base,
which is the noise a variant's figures carry too as long as it does not change how they are computed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import write_csv, write_text
from ..paths import PROJECT_ROOT
from ..variants import NAME_PATTERN
from .compare import FIGURES_ROOT, figure_key, reference_keys
from .data import compare_data
from .images import ImageResult, compare_image, padded, read_rgb, save_png, side_by_side
from .seeds import BEYOND, claim_seed_columns, figure_seed_spread

FIGURE_COLUMNS = [
    "key",
    "status",
    "quantity",
    "deviation",
    "tolerance",
    "margin",
    "envelope",
    "x_envelope",
    "seed_noise",
    "seed_column",
    "disjoint_share",
    "seed_range_a",
    "message",
]
CLAIM_COLUMNS = [
    "paper",
    "claim_id",
    "statement",
    "measured_a",
    "holds_a",
    "holds_in_a",
    "seeds_a",
    "measured_b",
    "holds_b",
    "holds_in_b",
    "seeds_b",
    "change",
    "seed_noise",
]
VERDICT_COLUMNS = ["key", "status", "worst", "margin", "x_envelope", "seed_noise", "seed_column", "seed_range_a"]
# A figure whose data has one of these columns is a line figure: B's curves are drawn over A's.
LINE_X = ("step", "iteration", "t", "time", "epoch")


class Run:
    """A run's figures and claims: a built tree (its manifest ``figures/all`` lists its figures, its
    record ``figures/settings.yaml`` says what made them) or a reference set (``settings.yaml``
    beside its PNGs). Anything else is refused in one line naming the command that builds it."""

    def __init__(self, label: str, root: Path):
        self.label, self.root = label, Path(root)
        manifest, record = self.root / FIGURES_ROOT / "all", self.root / FIGURES_ROOT / "settings.yaml"
        self.is_reference = not manifest.exists() and (self.root / "settings.yaml").is_file()
        if self.is_reference and not reference_keys(self.root):
            raise FileNotFoundError(f"{label}: the reference set {self.root} holds no figures; make bless writes it")
        if not self.is_reference and not (manifest.is_file() and record.is_file()):
            missing = "figures/all" if not manifest.is_file() else "figures/settings.yaml"
            raise FileNotFoundError(
                f"{label}: the tree {self.root.resolve()} is not built (no {missing}); build it with: "
                f"{build_command(label)}"
            )
        name = (self.record().get("name") or "") if label == "paper" else "paper"
        if name != "paper":  # "paper" names the paper's settings only: a root built otherwise is stale
            raise FileNotFoundError(
                f"paper: the tree {self.root.resolve()} holds the settings '{name}', not the paper's; "
                "rebuild it with: make clean-paper && make figures"
            )

    def keys(self) -> list[str]:
        if self.is_reference:
            return reference_keys(self.root)
        manifest = pd.read_csv(self.root / FIGURES_ROOT / "all", sep="\t")
        return sorted(figure_key(path) for path in manifest.path if Path(path).suffix == ".pdf")

    def file(self, key: str, suffix: str) -> Path:
        return (self.root if self.is_reference else self.root / FIGURES_ROOT) / f"{key}.{suffix}"

    def claims(self) -> pd.DataFrame | None:
        path = self.root / ("claims.csv" if self.is_reference else "results/claims.csv")
        return pd.read_csv(path, dtype={"claim_id": str}) if path.exists() else None

    def record(self) -> dict:
        from ..variants import read_record

        return read_record(self.root) or {}


def locate(name: str, root: str | os.PathLike = ".", reference_set: str = "config") -> Path:
    """``paper`` (the project root's tree), ``reference`` (the reference set of B's settings),
    ``reference/<set>``, a variant's name (``variants/<name>``) or a folder."""
    from ..variants import VARIANTS_DIR

    root = Path(root)
    if name == "paper":
        return root
    if name == "reference" or name.startswith("reference/"):
        return PROJECT_ROOT / "figures" / "reference" / (name.partition("/")[2] or reference_set)
    if (root / VARIANTS_DIR / name).is_dir():
        return root / VARIANTS_DIR / name
    if Path(name).is_dir():
        return Path(name)
    raise FileNotFoundError(
        f"no run named {name!r} (allowed: paper, reference, reference/<set>, a variant under variants/ or a "
        f"folder); a variant is built with: make figures VARIANT={name}"
    )


def build_command(label: str) -> str:
    """The command that builds the run ``label`` names (``locate``'s kinds)."""
    if label == "paper":
        return "make figures"
    if label == "smoke":
        return "make figures CONFIG=config/smoke.yaml"
    if label == "reference" or label.startswith("reference/"):
        return "make bless"
    if re.fullmatch(NAME_PATTERN, label) and "/" not in label:
        return f"make figures VARIANT={label}"
    return f"make figures WORKDIR={label}"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def compare_images_padded(a: Path, b: Path, tolerance: float, out_prefix: Path) -> tuple[ImageResult, Path | None]:
    """RMS of B against A on a common canvas (``compare_image``'s rule), and the difference image."""
    with tempfile.TemporaryDirectory() as scratch:
        pa, pb = padded([read_rgb(a), read_rgb(b)])
        save_png(pa, Path(scratch) / "a.png")
        save_png(pb, Path(scratch) / "b.png")
        result = compare_image(Path(scratch) / "b.png", Path(scratch) / "a.png", tolerance, Path(scratch) / "panel")
        difference = Path(scratch) / "panel-diff.png"
        target = out_prefix.with_name(out_prefix.name + "-diff.png")
        if difference.exists():
            save_png(read_rgb(difference), target)
            return result, target
    return result, None


def line_overlay(a_csv: Path, b_csv: Path, a_label: str, b_label: str, target: Path) -> bool:
    """B's curves (dashed) over A's (solid), one axes per measured column; False if not a line figure."""
    a, b = pd.read_csv(a_csv), pd.read_csv(b_csv)
    x = next((c for c in LINE_X if c in a.columns and c in b.columns), None)
    if x is None:
        return False
    from ..plotting import apply_style, plt

    # Measured values are floats; labels and integers (init, seed, chain) say which curve a row is on.
    numeric = [c for c in a.columns if c != x and pd.api.types.is_float_dtype(a[c]) and c in b.columns]
    groups = [c for c in a.columns if c not in numeric and c != x and c in b.columns]
    if not numeric:
        return False
    apply_style()
    fig, axes = plt.subplots(1, len(numeric), figsize=(4.2 * len(numeric), 3.2), squeeze=False)
    for axis, column in zip(axes[0], numeric):
        for frame, style, label in ((a, "-", a_label), (b, "--", b_label)):
            for index, (_, curve) in enumerate(frame.groupby(groups, sort=True) if groups else [("", frame)]):
                curve = curve.sort_values(x)
                axis.plot(
                    curve[x], curve[column], style, color=f"C{index % 10}", lw=1, label=label if index == 0 else None
                )
        axis.set_title(column)
        axis.set_xlabel(x)
    axes[0][0].legend(title=f"solid: {a_label}, dashed: {b_label}" if groups else None)
    fig.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=100)
    plt.close(fig)
    return True


def compare_figures(a: Run, b: Run, out_dir: Path, settings: dict, envelopes: dict) -> tuple[pd.DataFrame, dict]:
    """One row per figure and compared quantity (its image and every data column); the panels drawn."""
    from ..envelopes import IMAGE_COLUMN

    k = float(settings["envelope_factor"])
    rows, panels = [], {}
    a_keys, b_keys = set(a.keys()), set(b.keys())
    for key in sorted(a_keys | b_keys):
        if key not in a_keys or key not in b_keys:
            only = a.label if key in a_keys else b.label
            rows.append({"key": key, "status": "only in " + only, "message": f"{key} is only in {only}"})
            continue
        a_png, b_png, a_csv, b_csv = a.file(key, "png"), b.file(key, "png"), a.file(key, "csv"), b.file(key, "csv")
        if sha256(a_png) == sha256(b_png) and sha256(a_csv) == sha256(b_csv):
            rows.append({"key": key, "status": "identical", "message": "image and data byte-identical"})
            continue
        envelope = {column: value for (k_, column), value in envelopes.items() if k_ == key}
        image_envelope = envelope.pop(IMAGE_COLUMN, 0.0)
        image_tolerance = settings["image_rms"] + k * image_envelope
        prefix = out_dir / "images" / key
        image, _ = compare_images_padded(a_png, b_png, image_tolerance, prefix)
        overlay = prefix.with_name(prefix.name + "-overlay.png")
        is_line = a_csv.exists() and b_csv.exists() and line_overlay(a_csv, b_csv, a.label, b.label, overlay)
        save_png(side_by_side(padded([read_rgb(a_png), read_rgb(b_png)])), prefix.with_name(prefix.name + ".png"))
        panels[key] = {"overlay": is_line}
        quantities = [
            {
                "quantity": "image rms",
                "deviation": image.rms,
                "tolerance": image_tolerance,
                "envelope": image_envelope,
                "passed": image.passed,
            }
        ]
        message = image.message
        if a_csv.exists() and b_csv.exists():
            data = compare_data(b_csv, a_csv, settings["data"], envelope, k)
            message += "; " + data.message
            for column in data.columns.itertuples():
                quantities.append(
                    {
                        "quantity": column.column,
                        "deviation": column.deviation,
                        "tolerance": column.tolerance,
                        "envelope": column.envelope,
                        "passed": column.n_outside == 0,
                    }
                )
            if data.columns.empty:  # columns or rows differ: the data moved as a whole
                quantities.append(
                    {"quantity": "data", "deviation": np.inf, "tolerance": np.nan, "envelope": np.nan, "passed": False}
                )
        moved = not all(q["passed"] for q in quantities)
        # Training noise beside numerical noise: how far the seeds of each side already spread.
        seeds = figure_seed_spread(a_csv, b_csv)
        for q in quantities:
            deviation, tolerance, spread = q["deviation"], q["tolerance"], q["envelope"]
            rows.append(
                {
                    "key": key,
                    "status": "moved" if moved else "within noise",
                    "quantity": q["quantity"],
                    "deviation": deviation,
                    "tolerance": tolerance,
                    "margin": _ratio(deviation, tolerance),
                    "envelope": spread,
                    "x_envelope": _ratio(deviation, spread),
                    **seeds,
                    "message": message,
                }
            )
    return pd.DataFrame(rows, columns=FIGURE_COLUMNS), panels


def _ratio(deviation: float, scale: float) -> float:
    if deviation is None or np.isnan(deviation) or scale is None or np.isnan(scale):
        return np.nan
    if deviation == 0:
        return 0.0
    return deviation / scale if scale > 0 else np.inf


def compare_claims(a: Run, b: Run) -> pd.DataFrame:
    """The claims whose verdict differs between A and B, with both measured values."""
    claims_a, claims_b = a.claims(), b.claims()
    if claims_a is None or claims_b is None:
        return pd.DataFrame(columns=CLAIM_COLUMNS)
    keys = ["paper", "claim_id"]
    per_run = ["measured", "holds", "n_runs", "holds_fraction", "reason"]
    merged = claims_a.reindex(columns=[*keys, "statement", *per_run]).merge(
        claims_b.reindex(columns=[*keys, *per_run]), on=keys, how="outer", suffixes=("_a", "_b")
    )
    changed = merged[merged.holds_a.astype(str) != merged.holds_b.astype(str)].copy()
    changed["change"] = [
        f"{_verdict(row.holds_a)} -> {_verdict(row.holds_b)}" for row in changed.itertuples(index=False)
    ]
    seeds = [
        claim_seed_columns(*({field: row[f"{field}_{side}"] for field in per_run} for side in "ab"))
        for _, row in changed.iterrows()
    ]
    for column in ("holds_in_a", "seeds_a", "holds_in_b", "seeds_b", "seed_noise"):
        changed[column] = [entry[column] for entry in seeds]
    return changed.reindex(columns=CLAIM_COLUMNS).reset_index(drop=True)


def _verdict(holds) -> str:
    if isinstance(holds, float) and np.isnan(holds):
        return "absent"
    return "holds" if str(holds).lower() in ("true", "1") else "fails"


def compare_settings(a: Run, b: Run) -> pd.DataFrame:
    from ..variants import differences

    record_a, record_b = a.record(), b.record()
    rows = [
        {"key": key, "a": repr(old), "b": repr(new)}
        for key, old, new in differences(record_a.get("settings", {}), record_b.get("settings", {}))
    ]
    return pd.DataFrame(rows, columns=["key", "a", "b"])


def figure_verdicts(figures: pd.DataFrame) -> pd.DataFrame:
    """One row per figure: status, the quantity that moved most, as a multiple of its envelope."""
    rows = []
    for key, group in figures.groupby("key", sort=True):
        measured = group.margin.notna()
        worst = group.loc[group.margin.idxmax()] if measured.any() else group.iloc[0]
        rows.append(
            {
                "key": key,
                "status": group.status.iloc[0],
                "worst": worst.quantity if measured.any() else "",
                "margin": float(worst.margin) if measured.any() else np.nan,
                "x_envelope": float(worst.x_envelope) if measured.any() else np.nan,
                **{column: group[column].iloc[0] for column in ("seed_noise", "seed_column", "seed_range_a")},
                "message": group.message.iloc[0],
            }
        )
    return pd.DataFrame(rows, columns=[*VERDICT_COLUMNS, "message"])


def compare_runs(a: Run, b: Run, out_dir: str | os.PathLike, settings: dict, envelope_dir: Path | None) -> dict:
    """Write ``report.html``, ``report.md``, ``figures.csv``, ``settings.csv`` and ``claims.csv`` of
    B against A into ``out_dir``; return the tables."""
    from ..envelopes import read_envelope
    from .report import compare_html, compare_markdown

    out_dir = Path(out_dir)
    envelopes = read_envelope(envelope_dir) if envelope_dir else {}
    figures, panels = compare_figures(a, b, out_dir, settings, envelopes)
    tables = {
        "settings": compare_settings(a, b),
        "claims": compare_claims(a, b),
        "figures": figures,
        "verdicts": figure_verdicts(figures),
    }
    for name in ("settings", "claims", "figures"):
        write_csv(tables[name], out_dir / f"{name}.csv")
    context = {
        "a": a,
        "b": b,
        "k": float(settings["envelope_factor"]),
        "envelope_dir": str(envelope_dir or "none (floors only)"),
        "panels": panels,
        **tables,
    }
    write_text(compare_markdown(context), out_dir / "report.md")
    write_text(compare_html(context), out_dir / "report.html")
    return tables


def summary_line(a: str, b: str, tables: dict) -> str:
    """What ``make compare`` prints: settings, claims and figures that changed, and how many of the
    changes are beyond the seed spread of both runs."""
    verdicts, claims = tables["verdicts"], tables["claims"]
    moved = verdicts[verdicts.status == "moved"]
    beyond_claims = int((claims.seed_noise == BEYOND).sum())
    beyond_figures = moved[moved.seed_noise == BEYOND]
    return (
        f"{b} against {a}: {len(tables['settings'])} settings differ, "
        f"{len(claims)} claims changed verdict ({beyond_claims} beyond seed spread), "
        f"{len(moved)} of {len(verdicts)} figures moved beyond numerical noise"
        + (f" ({', '.join(moved.key)})" if len(moved) else "")
        + f", {len(beyond_figures)} of them beyond seed spread"
        + (f" ({', '.join(beyond_figures.key)})" if len(beyond_figures) else "")
    )


def envelope_set(settings: dict) -> Path | None:
    """The reference set whose recorded settings are closest to ``settings``: its envelopes are the
    noise of figures computed the way these are (sets without an envelope, such as the phase
    diagram's, are not candidates)."""
    from ..envelopes import ENVELOPE_FILE
    from ..variants import closest_tree, read_record

    sets = PROJECT_ROOT / "figures" / "reference"
    candidates = {
        p.name: p for p in sorted(sets.glob("*")) if p.is_dir() and read_record(p) and (p / ENVELOPE_FILE).is_file()
    }
    return closest_tree(settings, candidates)


def main(argv: list[str] | None = None) -> int:
    from ..errors import ConfigError
    from ..variants import resolve

    parser = argparse.ArgumentParser(prog="python -m replication.diff.runs", description=__doc__.splitlines()[0])
    parser.add_argument("a", help="paper, reference, reference/<set>, a variant or a folder")
    parser.add_argument("b", help="the same kinds")
    parser.add_argument("--out", help="report folder (default: compare/<a>-vs-<b>)")
    parser.add_argument("--root", default=".", help="the project's tree (default: here)")
    args = parser.parse_args(argv)
    try:
        b = Run(args.b, locate(args.b, args.root))
        envelope_dir = envelope_set(b.record().get("settings", {}))
        a = Run(args.a, locate(args.a, args.root, envelope_dir.name if envelope_dir else "config"))
        diff_settings = resolve([])["diff"]  # the project's k and floors, as `make diff` uses them
    except (FileNotFoundError, ConfigError) as error:
        print(f"Cannot compare: {error}", file=sys.stderr)
        return 2
    out = Path(args.out or Path(args.root) / "compare" / f"{args.a.replace('/', '_')}-vs-{args.b.replace('/', '_')}")
    tables = compare_runs(a, b, out, diff_settings, envelope_dir)
    print(summary_line(args.a, args.b, tables) + f"; report: {out / 'report.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
