"""Regenerated figures against committed references: image RMS, data tolerances, an HTML report.

A reference set is a directory of ``<paper>/<figure>.png`` and ``.csv`` files made by the pipeline
itself (``bless``). ``diff_figures`` compares every registered figure with it, writes side-by-side
and difference images and ``report.html``, and returns one summary row per figure.

Modules by concern: ``data`` (tidy CSVs), ``images`` (PNGs), ``compare`` (every figure against a
reference set, verdicts), ``report`` (the HTML page), ``bless`` (writing a reference set; the CLI).
Deviations and the tolerance rule are ``replication.deviation``'s, the noise envelopes
``replication.envelopes``', where a figure's files lie ``replication.paths``'.
"""

from .bless import bless, main
from .compare import SUMMARY_COLUMNS, diff_figures, external_matches, figure_verdicts, reference_keys
from .data import DATA_COLUMNS, DataResult, compare_data
from .images import ImageResult, compare_image, image_rms_between, side_by_side

__all__ = [
    "DATA_COLUMNS",
    "SUMMARY_COLUMNS",
    "DataResult",
    "ImageResult",
    "bless",
    "compare_data",
    "compare_image",
    "diff_figures",
    "external_matches",
    "figure_verdicts",
    "image_rms_between",
    "main",
    "reference_keys",
    "side_by_side",
]
