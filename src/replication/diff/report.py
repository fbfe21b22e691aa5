"""The HTML report of a figure diff, rendered from ``templates/report.html`` with Jinja2."""

from __future__ import annotations

from pathlib import Path

import jinja2
import numpy as np
import pandas as pd

QUANTITY_COLUMNS = ["quantity", "deviation", "tolerance", "margin", "reason"]

_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.PackageLoader("replication.diff", "templates"),
    autoescape=True,  # figure names, messages and provenance values are text, never markup
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)


def cell(value) -> str:
    """A table cell: numbers to three significant digits (NaN empty), anything else as text."""
    if isinstance(value, float):
        return "" if np.isnan(value) else f"{value:.3g}"
    return str(value)


_ENVIRONMENT.filters["cell"] = cell


def report_html(
    summary: pd.DataFrame,
    verdicts: pd.DataFrame,
    details: dict,
    external: list[dict],
    reference_dir: Path,
    k: float,
    provenances: tuple[dict, dict],
) -> str:
    """One table of verdicts, the provenance of both trees, then per figure its images and quantities."""
    reference, regenerated = provenances
    provenance = [
        (name, str(reference.get(name, "")), str(regenerated.get(name, "")))
        for name in sorted(set(reference) | set(regenerated))
    ]
    quantities = {
        key: summary[summary.key == key][QUANTITY_COLUMNS].to_dict("records") for key in verdicts.key if key in details
    }
    return _ENVIRONMENT.get_template("report.html").render(
        reference_dir=str(reference_dir),
        verdicts=list(verdicts.itertuples()),
        passed=int(verdicts.passed.sum()),
        failed=int((~verdicts.passed).sum()),
        k=k,
        provenance=provenance,
        quantities=quantities,
        quantity_columns=QUANTITY_COLUMNS,
        external=external,
    )


def _records(frame: pd.DataFrame) -> list[dict]:
    return frame.to_dict("records")


def compare_headline(a: str, b: str, tables: dict) -> str:
    """Settings, claims and figures that changed, and how many of the changes are beyond the seed
    spread of both trees: what ``make compare`` prints and its reports open with."""
    from .seeds import BEYOND

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


def figure_groups(verdicts: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The figures of a comparison by what happened to them: moved, within noise (changed, within
    the diff's tolerance), identical (byte for byte), and only in one tree."""
    status = verdicts.status
    return {
        "moved": verdicts[status == "moved"],
        "within noise": verdicts[status == "within noise"],
        "identical": verdicts[status == "identical"],
        "only in one tree": verdicts[status.str.startswith("only in")],
    }


def compare_html(context: dict) -> str:
    """The page of ``make compare``: the diff report's look, with settings and claims first."""
    figures, a, b = context["figures"], context["a"].label, context["b"].label
    groups = figure_groups(context["verdicts"])
    return _ENVIRONMENT.get_template("compare.html").render(
        a=a,
        b=b,
        headline=compare_headline(a, b, context),
        k=context["k"],
        envelope_dir=context["envelope_dir"],
        settings=_records(context["settings"]),
        claims=_records(context["claims"]),
        changed=_records(pd.concat([groups["moved"], groups["within noise"], groups["only in one tree"]])),
        identical=list(groups["identical"].key),
        quantities={key: _records(group) for key, group in figures.groupby("key") if group.quantity.notna().any()},
        quantity_columns=["quantity", "deviation", "tolerance", "margin", "envelope", "x_envelope"],
        panels=context["panels"],
    )


def _markdown_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "(none)"
    cells = frame.map(lambda value: cell(value).replace("|", "\\|"))
    return cells.to_markdown(index=False, disable_numparse=True)


def compare_markdown(context: dict) -> str:
    a, b = context["a"].label, context["b"].label
    groups = figure_groups(context["verdicts"])
    columns = [c for c in groups["moved"].columns if c != "message"]
    lines = [
        f"# {b} against {a}",
        "",
        f"**{compare_headline(a, b, context)}.** Moved: the rule of `make diff`, |B - A| > {context['k']:g} x "
        f"envelope + floors (envelopes of `{context['envelope_dir']}`).",
        "",
        "## Settings that differ",
        "",
        _markdown_table(context["settings"]),
        "",
        "## Claims whose verdict changed",
        "",
        _markdown_table(context["claims"]),
        "",
        "## Figures that moved",
        "",
        "`margin`: the largest deviation / its tolerance (above 1: moved); `x_envelope`: that deviation as a "
        "multiple of the figure's numerical-noise envelope. `seed_noise`: *beyond seed spread* only where each "
        "tree's seeds agree and the two trees' seed ranges do not overlap (`seed_range_a`: A's median range over "
        "seeds in `seed_column`), *within seed spread* otherwise; without per-seed data the spread is unknown.",
        "",
        _markdown_table(groups["moved"][columns]),
        "",
        "## Figures that changed within numerical noise",
        "",
        _markdown_table(groups["within noise"][columns]),
        "",
        *(
            ["## Figures in one tree only", "", _markdown_table(groups["only in one tree"][["key", "status"]]), ""]
            if len(groups["only in one tree"])
            else []
        ),
        "## Identical figures",
        "",
        ", ".join(f"`{key}`" for key in groups["identical"].key) or "(none)",
        "",
    ]
    return "\n".join(lines)
