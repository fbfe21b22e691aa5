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
    """One table of verdicts, the provenance of both runs, then per figure its images and quantities."""
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
