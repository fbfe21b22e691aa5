"""`snakemake --report`: every registered figure, with a caption naming the paper figure and settings."""

import json
import re

import pandas as pd
import pytest

from helpers import ROOT, run_snakemake
from replication.manifest import read_manifest
from replication.registry import papers


def report_results(html: str) -> dict:
    """The report's embedded table of results: path -> {caption, ...}."""
    return json.loads(re.search(r"var results = (\{.*?\});\n", html).group(1))


@pytest.mark.pipeline
@pytest.mark.usefixtures("smoke_tree_alone")
def test_every_figure_in_the_report_with_a_caption(smoke_run):
    report = smoke_run / "report.html"
    result = run_snakemake(
        smoke_run, "--configfile", str(ROOT / "config" / "smoke.yaml"), "--report", str(report), "figures/all"
    )
    # docutils prints "(ERROR/3) ..." or "(WARNING/2) ..." for a caption it cannot render
    assert not re.search(r"\((ERROR|WARNING|SEVERE)/\d\)", result.stdout + result.stderr)
    results = report_results(report.read_text())
    manifest = read_manifest(smoke_run)
    figures = manifest[manifest.path.str.endswith(".pdf")]
    assert len(figures)
    for figure in figures.itertuples():
        png = figure.path.removesuffix(".pdf") + ".png"
        assert png in results, f"{png} is not in the report: wrap it in report() (figure_outputs does)"
        caption = re.sub(r"<[^>]+>", "", results[png]["caption"])
        name = re.match(r"[^,(]+", figure.figure).group().strip()  # "Fig. 4, longer horizon" -> "Fig. 4"
        assert name in caption, f"the caption of {png} does not name {name}"
        assert figure.paper.split()[0].lower() in caption.lower(), f"the caption of {png} does not name its paper"
        assert "settings" in caption.lower(), f"the caption of {png} does not give its settings"


def test_caption_files_exist():
    figures = [(paper, figure) for paper in papers() for figure in paper.figures]
    assert figures
    for paper, figure in figures:
        assert paper.caption_path(figure).exists(), figure


def docutils_messages(rst: str) -> list[str]:
    """Every warning or error docutils reports on a caption (Snakemake renders captions as reStructuredText)."""
    import io

    import docutils.core

    stream = io.StringIO()
    overrides = {"report_level": 2, "halt_level": 5, "warning_stream": stream}
    docutils.core.publish_doctree(rst, settings_overrides=overrides)
    return [line for line in stream.getvalue().splitlines() if line.strip()]


def test_captions_render_without_docutils_messages():
    captions = sorted(path for paper in papers() for path in paper.package_dir.glob("**/report/*.rst"))
    assert captions
    for caption in captions:
        # Jinja fields become a plain word: the reStructuredText around them is what can break.
        rst = re.sub(r"\{\{.*?\}\}", "value", caption.read_text())
        assert docutils_messages(rst) == [], caption.name


def test_docutils_check_catches_an_undefined_substitution():
    assert any("Undefined substitution" in m for m in docutils_messages("the norm |e| against time"))
    assert docutils_messages("the norm \\|e\\| against time") == []
