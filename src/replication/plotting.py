"""One plotting style and one figure-saving function for every figure of the project."""

from __future__ import annotations

import enum
import json
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless and deterministic on every machine

import matplotlib.image  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from cycler import cycler  # noqa: E402

from .figure_checks import figure_problems  # noqa: E402
from .io import atomic_path, write_csv  # noqa: E402
from .paths import figure_paths  # noqa: E402  (part of this module's interface)

PNG_DPI = 150

# Volatile metadata (dates, software strings) is dropped so the same data gives the same bytes.
_PDF_METADATA = {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None}
_PNG_METADATA = {"Software": None}


# seaborn's theme as the project sets it. Importing seaborn (scipy.stats with it) costs about a
# CPU-second in every figure job, so apply_style reads what set_theme does from THEME_FILE, which
# seaborn_theme() writes (`python -m replication.plotting`) and tests/core/test_plotting.py checks.
THEME = {"context": "paper", "style": "whitegrid", "palette": "deep", "font": "DejaVu Sans"}
THEME_FILE = Path(__file__).with_name("plotting_theme.json")
COLOUR_CODES = "bgrmyck"  # matplotlib's one-letter colours, which set_theme maps onto its palette
# The project's own settings over the theme.
STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": PNG_DPI,
    # No "tight" box: a figure's pixel size is its size times the dpi, whatever its text.
    "savefig.bbox": "standard",
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 7,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "pdf.fonttype": 42,
    "svg.hashsalt": "replication",
    "image.cmap": "viridis",
}


def _json_value(value):
    if isinstance(value, enum.Enum):
        return value.value
    if hasattr(value, "by_key"):  # a cycler
        return {"cycler": {key: [_json_value(v) for v in values] for key, values in value.by_key().items()}}
    if isinstance(value, dict):
        return {key: _json_value(v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    return value


def _rc_value(value):
    if isinstance(value, dict):
        return cycler(
            **{key: [tuple(v) if isinstance(v, list) else v for v in values] for key, values in value["cycler"].items()}
        )
    return value


def seaborn_theme() -> dict:
    """What ``seaborn.set_theme(**THEME)`` does, as JSON: every rcParam it sets (its style's and
    context's, the colour cycle and the font) with its value, and the RGB of the colour codes.
    Leaves matplotlib's state as it found it."""
    import matplotlib.colors as colors
    import seaborn as sns

    keys = {*sns.axes_style(THEME["style"]), *sns.plotting_context(THEME["context"]), "axes.prop_cycle", "font.family"}
    codes = {code: colors.colorConverter.colors[code] for code in COLOUR_CODES}
    with matplotlib.rc_context():
        sns.set_theme(**THEME)
        rc = {key: _json_value(matplotlib.rcParams[key]) for key in sorted(keys)}
        themed = {code: colors.colorConverter.colors[code] for code in COLOUR_CODES}
    for code, rgb in codes.items():  # item by item: assignment clears matplotlib's colour cache, update() does not
        colors.colorConverter.colors[code] = rgb
    return {"rcParams": rc, "colour_codes": _json_value(themed)}


def apply_style() -> None:
    """The project's plotting style: seaborn's white grid, paper context, fixed fonts."""
    import matplotlib.colors as colors

    theme = json.loads(THEME_FILE.read_text())
    plt.rcParams.update({key: _rc_value(value) for key, value in theme["rcParams"].items()})
    for code, rgb in theme["colour_codes"].items():  # item by item: assignment clears matplotlib's colour cache
        colors.colorConverter.colors[code] = tuple(rgb)
    plt.rcParams.update(STYLE)


def _drawn_problems(fig: plt.Figure) -> list[str]:
    """``figure_problems`` of ``fig`` drawn at the PNG's resolution, which the canvas then holds for
    the PNG; its layout (the tight layout included) is computed at the figure's own dpi."""
    kept, fig.dpi = fig.dpi, PNG_DPI  # as savefig sets it while it draws
    try:
        return figure_problems(fig)
    finally:
        fig.dpi = kept


def save_figure(fig: plt.Figure, pdf_path: str | os.PathLike, data: pd.DataFrame | None = None) -> dict[str, Path]:
    """Write ``fig`` as PDF and PNG (fixed dpi, no volatile metadata) and ``data`` as CSV.

    Every figure of the project goes through this function, so that each has its tidy data
    next to it and reruns on the same data are byte-identical. The PNG is exactly the figure's
    size times ``PNG_DPI`` pixels (no tight box), so a longer title or label never changes the
    image's size and an image diff always compares like with like.

    A figure that would not read at a glance is an error naming the figure, the axes and the
    problem (``figure_checks.figure_problems``): an axis or colour bar without labelled ticks, a
    legend entry that shows nothing, text over tick labels or cut off at the canvas's edge. Text
    out of place gets matplotlib's tight layout once before that verdict.
    """
    problems = _drawn_problems(fig)
    if any(problem.startswith(("canvas:", "overlap:")) for problem in problems):
        fig.tight_layout()  # a figure laid out by hand, or not at all: matplotlib's layout, once
        problems = _drawn_problems(fig)
    if problems:
        plt.close(fig)
        raise ValueError(f"{pdf_path}: {'; '.join(problems)}")
    paths = figure_paths(pdf_path)
    with atomic_path(paths["png"]) as tmp:
        # The checks' drawing is the PNG: savefig would draw the same pixels again and write them so.
        matplotlib.image.imsave(
            tmp, fig.canvas.buffer_rgba(), format="png", origin="upper", dpi=PNG_DPI, metadata=_PNG_METADATA
        )
    with atomic_path(paths["pdf"]) as tmp:
        fig.savefig(tmp, format="pdf", metadata=_PDF_METADATA)
    if data is not None:
        write_csv(data, paths["csv"])
    plt.close(fig)
    return paths


def main() -> None:
    from .command_line import command_parser
    from .io import write_text

    command_parser(
        __spec__,
        "Write plotting_theme.json, the rcParams and colour codes that seaborn's set_theme gives the "
        "project's figures, from the seaborn installed (after seaborn changes its theme).",
    ).parse_args()
    write_text(json.dumps(seaborn_theme(), indent=1) + "\n", THEME_FILE)
    print(f"wrote {THEME_FILE}")


if __name__ == "__main__":
    main()
