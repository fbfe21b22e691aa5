"""The gallery's parts on a small made-up paper (replication.gallery): a reference set's record, a
caption as Markdown, which claims a figure rests on, the claims overview, the rebuild command and
the page with its headings. The committed reference sets are checked in test_gallery.py."""

from pathlib import Path

import pandas as pd
import pytest

from replication import gallery
from replication.contract import Figure, Paper, SpecClaim

ONE = Figure("figures/demo/one.pdf", "Fig. 1", "one.rst")
THREE_A = Figure("figures/demo/three_a.pdf", "Fig. 3a", "three_a.rst")
EXTRA = Figure("figures/demo/heatmaps.pdf", "Phase diagram over (p, q)", "heatmaps.rst", manifest="heavy")


def demo_paper(caption_dir: Path, paper_id="demo", name="Demo", figures=(ONE, THREE_A, EXTRA)) -> Paper:
    class DemoPaper(Paper):
        """A paper whose captions lie in a folder of the test's own."""

        def caption_path(self, figure):
            return caption_dir / figure.caption

    claims = (SpecClaim("D-1", "Fig. 1", "first", "> 0"),)
    return DemoPaper(paper_id, name, f"The {name} paper", "2501.00001", figures, claims)


@pytest.fixture
def references(tmp_path, monkeypatch):
    """An empty folder of reference sets in place of the committed one."""
    folder = tmp_path / "reference"
    folder.mkdir()
    monkeypatch.setattr(gallery, "REFERENCE_DIR", folder)
    return folder


def write_record(references: Path, reference_set: str, text: str) -> None:
    (references / reference_set).mkdir(exist_ok=True)
    (references / reference_set / "settings.yaml").write_text(text)


def item(paper, figure) -> gallery.GalleryFigure:
    return gallery.GalleryFigure(paper, figure)


def test_a_reference_sets_record_is_its_settings_file_or_nothing(references):
    write_record(references, "smoke", "name: smoke\nover: paper\n")
    assert gallery.reference_record("smoke") == {"name": "smoke", "over": "paper"}
    assert gallery.reference_record("config") == {}


def test_a_caption_leaves_out_its_settings_and_names_each_filled_in_value(tmp_path):
    (tmp_path / "one.rst").write_text(
        "**Demo, Fig. 1** The ``loss`` over {{ snakemake.params.smooth }} steps,\n"
        "   with width {{ settings.model.d }} and {{ snakemake.params.rate | round(2) }}.\n"
        "\n"
        "Settings (seed {{ snakemake.params.seed }}).\n"
        "  \n"
        "A cell a \\| b.\n"
    )
    assert gallery.caption_markdown(demo_paper(tmp_path), ONE) == (
        "**Demo, Fig. 1** The `loss` over `smooth` steps, with width `model.d` and `rate`.\n\nA cell a | b."
    )


def rests_on(claim_label, figure, paper):
    labels = {f.figure for f in paper.figures} - {figure.figure}
    return gallery.rests_on(claim_label, item(paper, figure), labels)


def test_a_claim_rests_on_the_figures_its_label_names(tmp_path):
    paper = demo_paper(tmp_path)
    assert rests_on("Fig. 1", ONE, paper)
    assert rests_on("Figs. 1, 2 (Sec. 4)", ONE, paper)
    assert rests_on("Fig. 3", THREE_A, paper)  # a claim on a whole figure: on each of its panels
    assert rests_on("Fig. 3a (caption)", THREE_A, paper)
    assert not rests_on("Fig. 3b", THREE_A, paper)
    assert not rests_on("Fig. 2", ONE, paper)
    assert not rests_on("Eq. 1 (Sec. 1)", ONE, paper)  # only figure numbers count
    assert not rests_on("Fig. 3 (Sec. 1 (b))", ONE, paper)  # numbers in the parenthesis do not count
    assert not rests_on("Fig. 3a", ONE, paper)  # another figure's own label


def test_a_claim_beyond_the_paper_rests_on_the_figure_it_starts_or_names(tmp_path):
    paper = demo_paper(tmp_path)
    assert rests_on("Phase diagram (beyond the paper)", EXTRA, paper)
    assert rests_on("Cells grow (heatmaps)", EXTRA, paper)  # names the figure's file
    assert not rests_on("Phase diagram (heatmaps", EXTRA, paper)
    assert not rests_on("Plateau law (beyond the paper)", EXTRA, paper)
    assert not rests_on("Fig. 1", EXTRA, paper)


def claims_frame(rows) -> pd.DataFrame:
    columns = ["paper", "claim_id", "spec", "figure", "statement", "kind", "holds"]
    return pd.DataFrame(rows, columns=columns)


def test_a_figures_claims_are_its_own_papers_rows_about_it(tmp_path):
    paper = demo_paper(tmp_path)
    claims = claims_frame(
        [
            ("Demo", "D-1", "D-1", "Fig. 1", "s", "checked", True),
            ("Other", "O-1", "O-1", "Fig. 1", "s", "checked", True),
            ("Demo", "D-2", "D-2", "Fig. 3", "s", "checked", True),
            ("Demo", "D-3", "D-3", "Figs. 1, 3", "s", "checked", False),
        ]
    )
    assert list(gallery.figure_claims(claims, item(paper, ONE)).claim_id) == ["D-1", "D-3"]
    assert list(gallery.figure_claims(claims, item(paper, THREE_A)).claim_id) == ["D-2", "D-3"]


def test_a_figure_without_claims_says_so():
    assert gallery.claims_overview(claims_frame([]), "claims.md") == "No claim of the report is checked on this figure."


def test_a_few_claims_are_listed_each_with_its_verdict():
    rows = [("Demo", "D-1", "D-1", "Fig. 1", "Loss  falls\n fast", "checked", True)]
    rows += [("Demo", "D-2", "D-2", "Fig. 1", "a | b", "checked", False)]
    rows += [("Demo", "D-3", "D-3", "Fig. 1", "not measured", "not checkable", False)]
    rows += [("Demo", f"X-{n}", "D-4", "Fig. 1", "more", "checked", True) for n in range(gallery.LISTED_CLAIMS - 3)]
    overview = gallery.claims_overview(claims_frame(rows), "claims.md")
    lines = overview.split("\n")
    assert lines[:5] == [
        "| claim | verdict | statement |",
        "|---|---|---|",
        "| D-1 | holds | Loss falls fast |",
        "| D-2 | **fails** | a \\| b |",
        "| D-3 | not checkable | not measured |",
    ]
    assert len(lines) == 2 + gallery.LISTED_CLAIMS + 2
    assert lines[-2:] == ["", "Each claim's measurement and reason: [the claims report](claims.md)."]


def test_many_claims_are_counted_per_spec_claim_in_the_reports_order():
    rows = [("Demo", f"B-{n}", "L2G-9", "Fig. 1", "s", "checked", n % 2 == 0) for n in range(5)]
    rows += [("Demo", f"N-{n}", "L2G-9", "Fig. 1", "s", "not checkable", False) for n in range(2)]
    rows += [("Demo", f"A-{n}", "L2G-1", "Fig. 1", "s", "checked", True) for n in range(gallery.LISTED_CLAIMS - 6)]
    assert gallery.claims_overview(claims_frame(rows), "phase.md") == (
        "**L2G-9**: 3 of 5 hold, 2 not checkable; **L2G-1**: 6 of 6 hold ([every row, with its reason](phase.md))."
    )


def test_the_rebuild_command_is_the_sets_make_target_in_its_variant(tmp_path, references):
    paper = demo_paper(tmp_path)
    alone = "this figure alone: `snakemake figures/demo/one.pdf` (in the activated `.venv`)"
    assert gallery.rebuild_command(item(paper, ONE)) == f"`make figures`; {alone}"  # no record: the paper's
    write_record(references, "config", "name: paper\n")
    assert gallery.rebuild_command(item(paper, ONE)) == f"`make figures`; {alone}"
    write_record(references, "heavy", "name: paper\n")
    assert gallery.rebuild_command(item(paper, EXTRA)).startswith("`make heavy`; this figure alone: ")
    write_record(references, "heavy", "name: heavy-cells\nover: paper\n")
    assert gallery.rebuild_command(item(paper, EXTRA)) == "`make heavy VARIANT=heavy-cells`"


def write_captions(folder: Path) -> None:
    for figure in (ONE, THREE_A, EXTRA):
        (folder / figure.caption).write_text(f"Caption of {figure.figure}.\n\nSettings (none).\n")


def test_a_figure_entry_has_heading_path_image_caption_claims_and_command(tmp_path, references):
    write_captions(tmp_path)
    paper = demo_paper(tmp_path)
    claims = claims_frame([("Demo", "D-1", "D-1", "Fig. 1", "first", "checked", True)])
    entry = gallery.figure_markdown(item(paper, ONE), claims, "claims.md")
    missing = "*No image in `figures/reference/config` yet: `make bless` writes it.*"
    assert entry.split("\n\n") == [
        "### Fig. 1",
        "`figures/demo/one.pdf` (reference set `figures/reference/config`)",
        missing,
        "Caption of Fig. 1.",
        "| claim | verdict | statement |\n|---|---|---|\n| D-1 | holds | first |",
        "Each claim's measurement and reason: [the claims report](claims.md).",
        f"Rebuild: {gallery.rebuild_command(item(paper, ONE))}",
    ]
    (references / "config" / "demo").mkdir(parents=True)
    (references / "config" / "demo" / "one.png").write_bytes(b"")
    entry = gallery.figure_markdown(item(paper, ONE), claims, "claims.md")
    assert entry.split("\n\n")[2] == "![Demo, Fig. 1](gallery/config/demo/one.png)"


def write_claims(references: Path, reference_set: str, rows) -> None:
    (references / reference_set).mkdir(exist_ok=True)
    frame = claims_frame(rows).assign(n_runs=1)
    frame.to_csv(references / reference_set / "claims.csv", index=False)


def test_the_gallery_page_lists_each_papers_figures_under_its_heading(tmp_path, references, monkeypatch):
    write_captions(tmp_path)
    first = demo_paper(tmp_path, figures=(ONE, EXTRA))
    second = demo_paper(tmp_path, paper_id="other", name="Other", figures=(THREE_A,))
    monkeypatch.setattr(gallery, "papers", lambda: (first, second))
    assert [(entry.paper.id, entry.figure) for entry in gallery.gallery_figures()] == [
        ("demo", ONE),
        ("demo", EXTRA),
        ("other", THREE_A),
    ]
    write_claims(references, "config", [("Demo", "D-1", "D-1", "Fig. 1", "first", "checked", True)])
    write_claims(references, "heavy", [("Demo", "H-1", "beyond the paper", "Phase diagram", "s", "checked", False)])
    pages = {"config": "claims.md", "heavy": "heavy.md"}
    page = gallery.gallery_markdown(pages)
    head, demo, other = page.split("\n## ")
    assert head == (
        "# Gallery\n\nEvery figure the papers register, as the committed reference sets hold it "
        "(`figures/reference/`), with what the paper states (its caption), the claims it rests on with their "
        "verdicts in that set's claims report, and the command that rebuilds it. Generated when the "
        "documentation is built, from `replication.registry.papers()` and the reference sets.\n"
    )
    assert demo.startswith("Demo\n\n*The Demo paper* (arXiv 2501.00001).\n\n### Fig. 1\n\n")
    assert "### Phase diagram over (p, q)" in demo and "| H-1 | **fails** | s |" in demo
    assert "(heavy.md)" in demo and "(claims.md)" in demo
    assert other.startswith("Other\n\n*The Other paper* (arXiv 2501.00001).\n\n### Fig. 3a\n\n")
    assert other.endswith("No claim of the report is checked on this figure.\n\nRebuild: " + (
        "`make figures`; this figure alone: `snakemake figures/demo/three_a.pdf` (in the activated `.venv`)\n"
    ))  # fmt: skip
    with pytest.raises(KeyError) as error:
        gallery.gallery_markdown({"config": "claims.md"})
    assert error.value.args[0] == "no documentation page shows the claims of figures/reference/heavy"


REPORT_CSV = (
    "paper,claim_id,spec,figure,statement,measured,threshold,holds,reason,kind,rule,n_runs,holds_fraction,ci_low,ci_high\n"
    "Demo,D-1,D-1,Fig. 1,First claim.,1,> 0,True,measured once,checked,single measurement,1,1,,\n"
)


def test_a_reference_sets_report_names_its_settings_and_its_data(references):
    for reference_set in ("wide", "bare"):
        (references / reference_set).mkdir()
        (references / reference_set / "claims.csv").write_text(REPORT_CSV)
    write_record(references, "wide", "name: wide\nover: paper\nsha256: 0123456789abcdef\nsettings: {}\n")
    report = gallery.reference_claims_markdown("wide", 2)
    assert report.startswith("## Claims report of figures/reference/wide\n")
    assert "Settings: **wide** (a variant over the papers' full settings; sha256 0123456789ab," in report
    assert "The data is in `figures/reference/wide/claims.csv`." in report
    bare = gallery.reference_claims_markdown("bare", 1)  # a set without a record: no settings line
    assert bare.startswith("# Claims report of figures/reference/bare\n") and "Settings:" not in bare
