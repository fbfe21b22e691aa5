"""The paper contract's values (replication.contract): a part's figures and tables taking its manifest
and caption folder, a paper gathering its parts' items, figure and caption look-ups, the spec claim a
claims-table row names, typed settings and the command that measures a blessed run's cost."""

from pathlib import Path

import pytest

import replication.papers.benign_overfitting
from replication.contract import BEYOND_THE_PAPER, Figure, Paper, Part, RunCost, SpecClaim, Table

# A real paper package, so that captions resolve against a folder that exists.
PACKAGE_ID = "benign_overfitting"
PACKAGE_DIR = Path(replication.papers.benign_overfitting.__file__).parent


def demo_paper(**options) -> Paper:
    figures = (
        Figure(f"figures/{PACKAGE_ID}/one.pdf", "Fig. 1", "one.rst"),
        Figure(f"figures/{PACKAGE_ID}/two.pdf", "Fig. 2", "part/report/two.rst"),
    )
    claims = (SpecClaim("D-1", "Fig. 1", "first", "> 0"), SpecClaim("D-2", "Fig. 2", "second", "< 1"))
    return Paper(PACKAGE_ID, "Demo", "A demo", "2501.00001", figures, claims, **options)


def test_a_part_gives_its_manifest_and_caption_folder_to_its_items():
    part = Part(
        "heavy",
        figures=(
            Figure("figures/x/bare.pdf", "Bare", "bare.rst"),
            Figure("figures/x/placed.pdf", "Placed", "other/report/placed.rst", manifest="own"),
        ),
        tables=(Table("figures/x/t.md", "Table 1"), Table("figures/x/u.md", "Table 2", manifest="own")),
        manifest="big",
    )
    assert part.figures == (
        Figure("figures/x/bare.pdf", "Bare", "heavy/report/bare.rst", manifest="big"),
        Figure("figures/x/placed.pdf", "Placed", "other/report/placed.rst", manifest="own"),
    )
    assert part.tables == (
        Table("figures/x/t.md", "Table 1", manifest="big"),
        Table("figures/x/u.md", "Table 2", "own"),
    )


def test_a_part_in_the_laptop_manifest_keeps_its_items_there():
    part = Part("light", figures=(Figure("figures/x/a.pdf", "A", "a.rst"),), tables=(Table("figures/x/t.md", "T"),))
    assert part.figures == (Figure("figures/x/a.pdf", "A", "light/report/a.rst", manifest="all"),)
    assert part.tables == (Table("figures/x/t.md", "T", manifest="all"),)


def test_a_paper_lists_its_own_items_before_its_parts():
    part = Part(
        "part",
        figures=(Figure(f"figures/{PACKAGE_ID}/three.pdf", "Fig. 3", "three.rst"),),
        tables=(Table(f"figures/{PACKAGE_ID}/t2.md", "Table 2"),),
        manifest="big",
    )
    paper = demo_paper(tables=(Table(f"figures/{PACKAGE_ID}/t1.md", "Table 1"),), parts=(part,))
    assert [figure.path for figure in paper.figures] == [
        f"figures/{PACKAGE_ID}/{stem}.pdf" for stem in ("one", "two", "three")
    ]
    assert paper.tables == (
        Table(f"figures/{PACKAGE_ID}/t1.md", "Table 1"),
        Table(f"figures/{PACKAGE_ID}/t2.md", "Table 2", "big"),
    )
    assert paper.manifests == ("all", "big")


def test_a_figure_is_found_by_its_stem_and_a_missing_one_names_the_registered():
    paper = demo_paper()
    assert paper.figure("two") == Figure(f"figures/{PACKAGE_ID}/two.pdf", "Fig. 2", "part/report/two.rst")
    assert paper.figure("one").figure == "Fig. 1"
    with pytest.raises(KeyError) as error:
        paper.figure("three")
    assert error.value.args[0] == (
        f"{PACKAGE_ID}: no figure figures/{PACKAGE_ID}/three.pdf; "
        f"registered: figures/{PACKAGE_ID}/one.pdf, figures/{PACKAGE_ID}/two.pdf"
    )


def test_a_bare_caption_lies_in_the_report_folder_and_a_path_is_relative_to_the_package():
    paper = demo_paper()
    assert paper.caption_path(paper.figure("one")) == PACKAGE_DIR / "report" / "one.rst"
    assert paper.caption_path(paper.figure("two")) == PACKAGE_DIR / "part" / "report" / "two.rst"
    assert paper.caption("one") == str(PACKAGE_DIR / "report" / "one.rst")
    assert paper.caption("two") == str(PACKAGE_DIR / "part" / "report" / "two.rst")


def test_a_rows_spec_names_a_claim_or_the_beyond_marker():
    paper = demo_paper()
    assert paper.spec_claim("D-2") == SpecClaim("D-2", "Fig. 2", "second", "< 1")
    assert paper.spec_claim("D-1").statement == "first"
    assert paper.spec_claim(BEYOND_THE_PAPER) is None
    with pytest.raises(ValueError) as error:
        paper.spec_claim("D-3")
    assert str(error.value) == "Demo: spec 'D-3' is no claim of its spec; allowed: D-1, D-2, 'beyond the paper'"


def test_typed_settings_come_from_the_papers_builder_or_are_the_section():
    section = {"seed": 3}
    assert demo_paper().typed_settings(section) is section
    typed = demo_paper(settings=lambda given: ("typed", given["seed"]))
    assert typed.typed_settings(section) == ("typed", 3)


def test_the_cost_command_runs_the_module_on_the_run_folder_and_writes_the_report():
    seen = []

    def arguments(run_dir):
        seen.append(run_dir)
        return ("--directory", str(run_dir / "logs"))

    cost = RunCost("pkg.part.cost", "part_cost.md", arguments)
    assert cost.command("runs/blessed", "python3") == [
        "python3",
        "-m",
        "pkg.part.cost",
        "--directory",
        str(Path("runs/blessed/logs")),
        "--write",
        "docs/measurements/part_cost.md",
    ]
    assert seen == [Path("runs/blessed")]  # the options see a Path, even for a folder given as text
