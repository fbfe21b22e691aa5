"""The figures in the documentation, generated when it is built (``docs/hooks.py``, an MkDocs hook)
from the registry and the committed reference sets (``figures/reference/<set>``): per figure its
PNG, its caption, the claims it rests on with their verdicts and the command that rebuilds it; and
each set's claims report in the form of ``claims_report.claims_markdown``.

Nothing here is copied into ``docs/``: the hook hands the reference PNGs to the build as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from .claims_report import claims_markdown, read_claims, verdict
from .contract import Figure, Paper
from .paths import PROJECT_ROOT, figure_key, manifest_reference_set
from .registry import papers

REFERENCE_DIR = PROJECT_ROOT / "figures" / "reference"
# Beyond this many claims on one figure (the phase diagram's per-cell rows) the gallery counts them
# per spec claim; the set's report lists each.
LISTED_CLAIMS = 12
SMOKE_SET, PAPER_SET = "smoke", "config"


@dataclass(frozen=True)
class GalleryFigure:
    """A registered figure and the reference set that holds its image."""

    paper: Paper
    figure: Figure

    @property
    def key(self) -> str:
        return figure_key(self.figure.path)

    @property
    def reference_set(self) -> str:
        return manifest_reference_set(self.figure.manifest)

    @property
    def png(self) -> Path:
        return REFERENCE_DIR / self.reference_set / f"{self.key}.png"

    @property
    def site_path(self) -> str:
        """Where the built documentation serves the PNG (relative to its root)."""
        return f"gallery/{self.reference_set}/{self.key}.png"


def gallery_figures() -> list[GalleryFigure]:
    """Every registered figure, the papers in the registry's order."""
    return [GalleryFigure(paper, figure) for paper in papers() for figure in paper.figures]


def reference_record(reference_set: str) -> dict:
    """The settings record of a committed reference set (its name, what it lies over, its sha256)."""
    path = REFERENCE_DIR / reference_set / "settings.yaml"
    return yaml.safe_load(path.read_text()) if path.is_file() else {}


def caption_markdown(paper: Paper, figure: Figure) -> str:
    """The figure's caption as Markdown: its settings paragraph ("Settings (...)", all values the
    pipeline fills in) left out, each remaining value named by its setting (``{{ snakemake.params.smooth }}``
    -> `smooth`), reStructuredText literals as code."""
    text = paper.caption_path(figure).read_text()
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    kept = [p for p in paragraphs if not p.startswith("Settings (")]
    named = [re.sub(r"\{\{\s*(?:snakemake\.params\.)?(?:settings\.)?([\w.]+)[^}]*\}\}", r"`\1`", p) for p in kept]
    return "\n\n".join(re.sub(r"``([^`]+)``", r"`\1`", p).replace("\\|", "|") for p in named)


def _figure_numbers(label: str) -> set[str]:
    """The figure numbers a label names before any parenthesis: ``Figs. 1, 2`` -> {1, 2}."""
    head = str(label).split("(", 1)[0]
    return set(re.findall(r"\d+[a-z]?", head)) if re.match(r"Figs?\. ", head) else set()


def rests_on(claim_label: str, item: GalleryFigure, labels: set[str]) -> bool:
    """Whether a claim whose figure label is ``claim_label`` is about ``item`` (``labels``: the labels
    of the paper's other registered figures). A claim labelled exactly as a figure is that figure's;
    else one that names the figure's numbers ("Fig. 3 (Sec. 5.1)" on Fig. 3, "Fig. 3" on Fig. 3a); for a figure beyond
    the paper, one whose label, without "(beyond the paper)", starts its label, or names its file."""
    label = item.figure.figure
    if claim_label == label:
        return True
    if claim_label in labels:
        return False
    if _figure_numbers(label):
        # A claim on a whole figure ("Fig. 3") is about each of its panels ("Fig. 3a").
        named = _figure_numbers(claim_label)
        return any(number in named or number.rstrip("abcdefgh") in named for number in _figure_numbers(label))
    bare = re.sub(r"\s*\(beyond the paper\)$", "", str(claim_label))
    return label.startswith(bare) or f"({Path(item.key).name})" in str(claim_label)


def figure_claims(claims: pd.DataFrame, item: GalleryFigure) -> pd.DataFrame:
    """The rows of a claims report that ``item`` rests on."""
    labels = {figure.figure for figure in item.paper.figures} - {item.figure.figure}
    own = claims[claims.paper == item.paper.name]
    return own[[rests_on(label, item, labels) for label in own.figure]]


def claims_overview(rows: pd.DataFrame, report_link: str) -> str:
    """The claims of one figure with their verdicts: each (up to ``LISTED_CLAIMS``), else counted per
    spec claim; ``report_link`` leads to the full report."""
    if rows.empty:
        return "No claim of the report is checked on this figure."
    if len(rows) <= LISTED_CLAIMS:
        lines = ["| claim | verdict | statement |", "|---|---|---|"]
        for row in rows.itertuples():
            word = verdict(row)
            cells = [row.claim_id, f"**{word}**" if word == "fails" else word, " ".join(str(row.statement).split())]
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
        return "\n".join(lines) + f"\n\nEach claim's measurement and reason: [the claims report]({report_link})."
    parts = []
    for spec, group in rows.groupby("spec", sort=False):
        checked = group[group.kind == "checked"]
        unchecked = int((group.kind == "not checkable").sum())
        parts.append(
            f"**{spec}**: {int(checked.holds.sum())} of {len(checked)} hold"
            + (f", {unchecked} not checkable" if unchecked else "")
        )
    return f"{'; '.join(parts)} ([every row, with its reason]({report_link}))."


def rebuild_command(item: GalleryFigure) -> str:
    """The command that rebuilds the figure's set as it was blessed (its manifest's make target, in
    the variant the set was made in), and, in the paper's tree, the figure alone."""
    record = reference_record(item.reference_set)
    target = "figures" if item.figure.manifest == "all" else item.figure.manifest
    name = record.get("name", "paper")
    whole = f"make {target}" + ("" if name == "paper" else f" VARIANT={name}")
    if name != "paper":
        return f"`{whole}`"
    return f"`{whole}`; this figure alone: `snakemake {item.figure.path}` (in the activated `.venv`)"


def figure_markdown(item: GalleryFigure, claims: pd.DataFrame, report_link: str) -> str:
    """One figure's entry: heading, image, caption, claims, command."""
    image = (
        f"![{item.paper.name}, {item.figure.figure}]({item.site_path})"
        if item.png.is_file()
        else f"*No image in `figures/reference/{item.reference_set}` yet: `make bless` writes it.*"
    )
    return "\n\n".join(
        [
            f"### {item.figure.figure}",
            f"`{item.figure.path}` (reference set `figures/reference/{item.reference_set}`)",
            image,
            caption_markdown(item.paper, item.figure),
            claims_overview(figure_claims(claims, item), report_link),
            f"Rebuild: {rebuild_command(item)}",
        ]
    )


def gallery_markdown(report_pages: dict[str, str]) -> str:
    """The gallery page: every registered figure of every paper; ``report_pages``: the page that
    shows each reference set's claims report."""
    reports = {name: read_claims(REFERENCE_DIR / name / "claims.csv") for name in report_pages}
    lines = [
        "# Gallery",
        "",
        "Every figure the papers register, as the committed reference sets hold it (`figures/reference/`), "
        "with what the paper states (its caption), the claims it rests on with their verdicts in that set's "
        "claims report, and the command that rebuilds it. Generated when the documentation is built, from "
        "`replication.registry.papers()` and the reference sets.",
        "",
    ]
    for paper in papers():
        lines += [f"## {paper.name}", "", f"*{paper.title}* (arXiv {paper.arxiv}).", ""]
        for item in (item for item in gallery_figures() if item.paper == paper):
            claims = reports.get(item.reference_set)
            if claims is None:
                raise KeyError(f"no documentation page shows the claims of figures/reference/{item.reference_set}")
            lines += [figure_markdown(item, claims, report_pages[item.reference_set]), ""]
    return "\n".join(lines)


def reference_claims_markdown(reference_set: str, level: int) -> str:
    """The claims report of a committed reference set as ``claims_markdown`` writes it (a smoke set
    beside the papers' settings, its expected failures marked); headings from ``level``."""
    folder = REFERENCE_DIR / reference_set
    record = reference_record(reference_set)
    paper_claims = None
    if record.get("over") == SMOKE_SET:
        paper_claims = read_claims(
            REFERENCE_DIR / PAPER_SET / "claims.csv", f"figures/reference/{PAPER_SET}/claims.csv"
        )
    return claims_markdown(
        read_claims(folder / "claims.csv"),
        {key: record[key] for key in ("name", "over", "sha256")} if record else None,
        title=f"Claims report of figures/reference/{reference_set}",
        data=f"figures/reference/{reference_set}/claims.csv",
        paper_claims=paper_claims,
        level=level,
    )
