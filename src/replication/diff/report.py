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


def compare_html(context: dict) -> str:
    """The page of ``make compare``: the diff report's look, with settings and claims first."""
    figures = context["figures"]
    return _ENVIRONMENT.get_template("compare.html").render(
        a=context["a"].label,
        b=context["b"].label,
        k=context["k"],
        envelope_dir=context["envelope_dir"],
        settings=_records(context["settings"]),
        claims=_records(context["claims"]),
        verdicts=_records(context["verdicts"]),
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
    a, b, verdicts = context["a"].label, context["b"].label, context["verdicts"]
    moved = verdicts[verdicts.status == "moved"]
    lines = [
        f"# {b} against {a}",
        "",
        f"{len(context['settings'])} settings differ; {len(context['claims'])} claims changed verdict; "
        f"{len(moved)} of {len(verdicts)} figures moved beyond numerical noise (the rule of `make diff`: "
        f"|B - A| > {context['k']:g} x envelope + floors; envelopes of `{context['envelope_dir']}`).",
        "",
        "## Settings that differ",
        "",
        _markdown_table(context["settings"]),
        "",
        "## Claims whose verdict changed",
        "",
        _markdown_table(context["claims"]),
        "",
        "## Figures",
        "",
        "`margin`: the largest deviation / its tolerance (above 1: moved); `x_envelope`: that deviation as a "
        "multiple of the figure's numerical-noise envelope. `seed_noise` (figures whose data has a seed column, "
        "and claims over several runs): *beyond seed spread* only where each tree's seeds agree and the two trees' "
        "seed ranges do not overlap (`seed_range_a`: A's median range over seeds in `seed_column`), "
        "*within seed spread* otherwise.",
        "",
        _markdown_table(verdicts),
        "",
    ]
    return "\n".join(lines)
