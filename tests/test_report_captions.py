"""`snakemake --report`: every registered figure, with a caption naming the paper figure and settings."""

import json
import re

import pandas as pd

from conftest import ROOT, run_snakemake


def report_results(html: str) -> dict:
    """The report's embedded table of results: path -> {caption, ...}."""
    return json.loads(re.search(r"var results = (\{.*?\});\n", html).group(1))


def test_every_figure_in_the_report_with_a_caption(smoke_run):
    report = smoke_run / "report.html"
    run_snakemake(
        smoke_run, "--configfile", str(ROOT / "config" / "smoke.yaml"), "--report", str(report), "figures/all"
    )
    results = report_results(report.read_text())
    manifest = pd.read_csv(smoke_run / "figures/all", sep="\t")
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
    rules = "".join(path.read_text() for path in (ROOT / "workflow" / "rules").glob("*.smk"))
    captions = re.findall(r"caption\s*=\s*\"([^\"]+\.rst)\"", rules)
    assert captions
    for caption in captions:
        assert (ROOT / "workflow" / "rules" / caption).resolve().exists(), caption
