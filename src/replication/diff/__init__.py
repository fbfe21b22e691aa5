"""Regenerated figures against committed references: image RMS, data tolerances, an HTML report.

A reference set is a directory of ``<paper>/<figure>.png`` and ``.csv`` files made by the pipeline
itself (``bless``). ``diff_figures`` compares every registered figure with it, writes side-by-side
and difference images and ``report.html``, and returns one summary row per figure.

Modules by concern: ``data`` (tidy CSVs), ``images`` (PNGs), ``against_reference`` (every figure
against a reference set, verdicts; ``make diff``), ``verdict`` (its one line in the terminal),
``report`` (the HTML pages), ``bless`` (writing a
reference set; ``python -m replication.diff.bless``). Two trees side by side (``make compare``,
``python -m replication.diff.tree_comparison``): ``trees`` (a built tree or a reference set),
``figure_changes``, ``claim_changes`` and ``seeds`` (the seeds' spread). Both comparisons hold a
deviation to one rule, ``deviation``'s (within noise: ``k x envelope`` plus the floors), the noise
envelopes ``envelopes``' (measured when a set is blessed); where a figure's files lie is
``replication.paths``'.
"""

from .against_reference import (
    SUMMARY_COLUMNS,
    diff_figures,
    external_matches,
    reference_keys,
    verdicts_against_reference,
)
from .data import DATA_COLUMNS, DataResult, compare_data
from .images import ImageResult, compare_image, image_rms_between, side_by_side

__all__ = [
    "DATA_COLUMNS",
    "SUMMARY_COLUMNS",
    "DataResult",
    "ImageResult",
    "compare_data",
    "compare_image",
    "diff_figures",
    "external_matches",
    "image_rms_between",
    "reference_keys",
    "side_by_side",
    "verdicts_against_reference",
]
