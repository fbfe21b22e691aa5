"""The figure diff as a whole: summary, HTML report, missing figures, external images, bless."""
import pandas as pd
import pytest
from test_diff_images import draw

from replication.diff import bless, diff_figures, external_matches

DATA = {"atol": 1e-9, "rtol": 1e-6, "columns": {}}


def record(name, figure):
    return {"path": f"figures/paper_a/{name}.pdf", "paper": "Paper A", "figure": figure}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A working directory with regenerated figures, a reference set and the diff of the two.

    same: identical; curve: one curve 5% higher; gone: only in the reference set;
    unmade: registered but not produced; new: produced but never blessed; wider: its data has
    a new column.
    """
    root = tmp_path_factory.mktemp("project")
    references = root / "reference" / "smoke" / "paper_a"
    for name in ("same", "curve", "gone", "wider"):
        draw(references / f"{name}.pdf")
    draw(root / "figures/paper_a/same.pdf")
    draw(root / "figures/paper_a/curve.pdf", scale=1.05)
    draw(root / "figures/paper_a/new.pdf")
    wider = draw(root / "figures/paper_a/wider.pdf")["csv"]
    pd.read_csv(wider).assign(z=1.0).to_csv(wider, index=False)
    draw(root / "external/paper-a/same_from_the_paper.pdf", colour="C4")
    (root / "external/paper-a/same_from_the_paper.pdf").unlink()  # only raster images are shown
    figures = [record("same", "Fig. 1"), record("curve", "Fig. 2"), record("unmade", "Fig. 3"), record("new", "Fig. 4"),
               record("wider", "Fig. 5")]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        summary = diff_figures(figures, references.parent, root / "figures/diff", 1.0, DATA, root / "external")
    return root, summary.set_index("key")


def test_statuses(project):
    _, summary = project
    assert summary.status.to_dict() == {
        "paper_a/curve": "fail", "paper_a/gone": "missing figure", "paper_a/new": "missing reference",
        "paper_a/same": "pass", "paper_a/unmade": "missing figure", "paper_a/wider": "fail",
    }
    assert "regenerated only ['z']" in summary.loc["paper_a/wider", "message"]
    assert summary.loc["paper_a/same", "passed"] and summary.passed.sum() == 1


def test_perturbed_curve_is_named(project):
    _, summary = project
    row = summary.loc["paper_a/curve"]
    assert row.data_worst_column == "y" and row.data_max_rel == pytest.approx(0.05)
    assert row.image_rms > 1.0


def test_outputs_and_report(project):
    root, summary = project
    out = root / "figures/diff"
    saved = pd.read_csv(out / "summary.csv").set_index("key")
    assert saved.status.to_dict() == summary.status.to_dict()
    for name in ("same", "curve"):
        assert (out / "images/paper_a" / f"{name}.png").exists()
        assert (out / "images/paper_a" / f"{name}-diff.png").exists()
    html = (out / "report.html").read_text()
    assert "6 figures, 1 pass, 5 fail" in html
    for key, status in summary.status.items():
        assert f"<a href='#{key}'>{key}</a></td><td>Paper A" in html or key == "paper_a/gone"
        assert f"<h2 id='{key}'>{key}: {status}</h2>" in html
    assert "<img src='images/paper_a/curve-diff.png'>" in html


def test_external_images_shown_without_verdict(project):
    root, summary = project
    html = (root / "figures/diff/report.html").read_text()
    assert "External references" in html
    assert "same_from_the_paper.png" in html
    assert (root / "figures/diff/images/external/paper_a/same.png").exists()
    assert summary.loc["paper_a/same", "status"] == "pass"  # not compared with the external image


def test_external_matching(tmp_path):
    for name in ("paper-a/fig4_eq9.png", "paper-a/fig4.jpg", "paper-a/fig41.png", "paper-a/fig4.pdf", "other/fig4.png"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    found = [p.relative_to(tmp_path).as_posix() for p in external_matches("paper_a/fig4", tmp_path)]
    assert found == ["paper-a/fig4.jpg", "paper-a/fig4_eq9.png"]


def test_bless_copies_exactly_the_manifest(tmp_path):
    run = tmp_path / "run"
    for name in ("one", "two"):
        draw(run / "figures/paper_a" / f"{name}.pdf")
    (run / "figures/all").write_text(
        "path\tsha256\tpaper\tfigure\n"
        "figures/paper_a/one.pdf\tx\tPaper A\tFig. 1\n"
        "figures/paper_a/two.pdf\tx\tPaper A\tFig. 2\n"
        "figures/claims.md\tx\tboth\tclaims report\n"
    )
    dest = tmp_path / "reference" / "smoke"
    draw(dest / "stale" / "old.pdf")
    assert bless(run, dest) == ["paper_a/one", "paper_a/two"]
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == [
        "paper_a", "paper_a/one.csv", "paper_a/one.png", "paper_a/two.csv", "paper_a/two.png"]
    assert (dest / "paper_a/one.png").read_bytes() == (run / "figures/paper_a/one.png").read_bytes()
