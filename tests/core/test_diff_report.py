"""The figure diff as a whole: summary, HTML report, missing figures, external images, bless."""

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from helpers import ROOT, draw, shared_scope
from replication.diff import diff_figures, external_matches, verdicts_against_reference
from replication.diff.bless import bless

DATA = {"atol": 1e-9, "rtol": 1e-6, "columns": {}}


def record(name, figure):
    return {"path": f"figures/paper_a/{name}.pdf", "paper": "Paper A", "figure": figure}


@pytest.fixture(scope=shared_scope)
def project(tmp_path_factory):
    """A working directory with regenerated figures, a reference set and the diff of the two.

    same: identical; curve: one curve 5% higher; gone: only in the reference set;
    unmade: registered but not produced; new: produced but never blessed; wider: its data has
    a new column; data_in / data_out: the image identical, one data value off by half / twice
    its tolerance; image_out: the data identical, the image recoloured (RMS far above 1).
    """
    root = tmp_path_factory.mktemp("project")
    references = root / "reference" / "smoke" / "paper_a"
    for name in ("same", "curve", "gone", "wider", "data_in", "data_out", "image_out"):
        draw(references / f"{name}.pdf")
    draw(root / "figures/paper_a/same.pdf")
    draw(root / "figures/paper_a/curve.pdf", scale=1.05)
    draw(root / "figures/paper_a/new.pdf")
    wider = draw(root / "figures/paper_a/wider.pdf")["csv"]
    pd.read_csv(wider).assign(z=1.0).to_csv(wider, index=False)
    for name, factor in (("data_in", 0.5), ("data_out", 2.0)):
        made = draw(root / f"figures/paper_a/{name}.pdf")["csv"]
        data = pd.read_csv(made)
        y = data.loc[5, "y"]
        data.loc[5, "y"] = y + factor * (DATA["atol"] + DATA["rtol"] * abs(y))
        data.to_csv(made, index=False, float_format="%.17g")
    made = draw(root / "figures/paper_a/image_out.pdf", colour="C3")
    draw(root / "scratch/plain.pdf")  # the reference's data, byte for byte, under the recoloured image
    (root / "scratch/plain.csv").replace(made["csv"])
    draw(root / "external/paper-a/same_from_the_paper.pdf", colour="C4")
    (root / "external/paper-a/same_from_the_paper.pdf").unlink()  # only raster images are shown
    figures = [
        record("same", "Fig. 1"),
        record("curve", "Fig. 2"),
        record("unmade", "Fig. 3"),
        record("new", "Fig. 4"),
        record("wider", "Fig. 5"),
        record("data_in", "Fig. 6"),
        record("data_out", "Fig. 7"),
        record("image_out", "Fig. 8"),
    ]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        summary = diff_figures(figures, references.parent, root / "figures/diff", 1.0, DATA, root / "external")
    return root, verdicts_against_reference(summary).set_index("key"), summary


def test_statuses(project):
    _, verdicts, _ = project
    assert verdicts.status.to_dict() == {
        "paper_a/curve": "fail",
        "paper_a/data_in": "pass",
        "paper_a/data_out": "fail",
        "paper_a/gone": "missing figure",
        "paper_a/image_out": "fail",
        "paper_a/new": "missing reference",
        "paper_a/same": "pass",
        "paper_a/unmade": "missing figure",
        "paper_a/wider": "fail",
    }
    assert "regenerated only ['z']" in verdicts.loc["paper_a/wider", "message"]
    assert verdicts.passed.sum() == 2


def quantities(summary, key):
    return summary[summary.key == key].set_index("quantity")


def test_perturbed_curve_is_named(project):
    _, verdicts, summary = project
    assert verdicts.loc["paper_a/curve", "worst"] == "y"
    table = quantities(summary, "paper_a/curve")
    assert table.loc["y", "margin"] > 1e3 and table.loc["x", "margin"] == 0  # 5% against rtol 1e-6
    assert table.loc["image rms", "deviation"] > 1.0 and table.loc["image rms", "margin"] > 1.0


def test_data_tolerance_is_the_bound_from_below_and_above(project):
    """Only the data differs: half the tolerance passes, twice fails, margins 0.5 and 2 (an inverted
    or ignored data test cannot give both)."""
    _, verdicts, summary = project
    for key, margin in (("paper_a/data_in", 0.5), ("paper_a/data_out", 2.0)):
        table = quantities(summary, key)
        assert table.loc["image rms", "deviation"] == 0.0
        assert table.loc["y", "margin"] == pytest.approx(margin, rel=1e-6)
        assert table.loc["y", "reason"].startswith("floor (no envelope measured)")
        assert verdicts.loc[key, "margin"] == pytest.approx(margin, rel=1e-6)
    assert "y (1 values" in verdicts.loc["paper_a/data_out", "message"]


def test_image_threshold_is_applied(project):
    """Only the image differs (a colour): it fails on its RMS alone, with the tolerance it had."""
    _, verdicts, summary = project
    table = quantities(summary, "paper_a/image_out")
    assert (table.drop(index="image rms").deviation == 0).all()
    image = table.loc["image rms"]
    assert image.tolerance == 1.0 and image.deviation > 1.0 and image.margin == pytest.approx(image.deviation)
    assert not verdicts.loc["paper_a/image_out", "passed"]
    assert "image RMS" in verdicts.loc["paper_a/image_out", "message"]


def test_outputs_and_report(project):
    root, verdicts, summary = project
    out = root / "figures/diff"
    saved = pd.read_csv(out / "summary.csv")
    assert verdicts_against_reference(saved).set_index("key").status.to_dict() == verdicts.status.to_dict()
    assert len(saved) == len(summary)
    for name in ("same", "curve"):
        assert (out / "images/paper_a" / f"{name}.png").exists()
        assert (out / "images/paper_a" / f"{name}-diff.png").exists()
    html = (out / "report.html").read_text()
    assert "9 figures, 2 pass, 7 fail" in html
    for key, status in verdicts.status.items():
        paper = "" if key == "paper_a/gone" else "Paper A"  # a reference the pipeline no longer registers
        assert f"<a href='#{key}'>{key}</a></td><td>{paper}</td>" in html
        assert f"<h2 id='{key}'>{key}: {status}</h2>" in html
    assert "<img src='images/paper_a/curve-diff.png'>" in html


def test_external_images_shown_without_verdict(project):
    root, summary, _ = project
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


MANIFEST = (
    "path\tsha256\tpaper\tfigure\n"
    "figures/paper_a/one.pdf\tx\tPaper A\tFig. 1\n"
    "figures/paper_a/two.pdf\tx\tPaper A\tFig. 2\n"
    "figures/claims.md\tx\tboth\tclaims report\n"
)


def claims_report(run):
    """The claims report the manifest lists, and its data."""
    (run / "figures/claims.md").write_text("# Claims\n\n1 of 1 checked claims hold.\n")
    (run / "results").mkdir(parents=True, exist_ok=True)
    (run / "results/claims.csv").write_text("paper,claim_id,holds\nPaper A,1,True\n")


def test_bless_copies_exactly_the_manifest(tmp_path):
    run = tmp_path / "run"
    for name in ("one", "two"):
        draw(run / "figures/paper_a" / f"{name}.pdf")
    (run / "figures/all").write_text(MANIFEST)
    (run / "figures/provenance.json").write_text('{"cpu_model": "blessing CPU"}')
    claims_report(run)
    dest = tmp_path / "reference" / "smoke"
    draw(dest / "stale" / "old.pdf")
    (dest / "stale" / "deeper" / "er").mkdir(parents=True)  # nested folders that become empty
    (dest / "stale" / "deeper" / "er" / "old.csv").write_text("x\n")
    (dest / "envelope.csv").write_text("key,column,envelope,envelope_rel,members\n")  # stale: no members now
    assert bless(run, dest) == ["paper_a/one", "paper_a/two"]
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == [
        "claims.csv",
        "claims.md",
        "paper_a",
        "paper_a/one.csv",
        "paper_a/one.png",
        "paper_a/two.csv",
        "paper_a/two.png",
        "provenance.json",
    ]
    assert (dest / "paper_a/one.png").read_bytes() == (run / "figures/paper_a/one.png").read_bytes()
    assert json.loads((dest / "provenance.json").read_text()) == {"cpu_model": "blessing CPU"}
    assert (dest / "claims.md").read_bytes() == (run / "figures/claims.md").read_bytes()
    assert (dest / "claims.csv").read_bytes() == (run / "results/claims.csv").read_bytes()


def test_bless_runs_by_its_own_name(tmp_path):
    """``python -m replication.diff.bless WORKDIR DEST`` (what ``make bless`` runs): the set written,
    the keys printed, and no warning that the module ran twice."""
    run = tmp_path / "run"
    for name in ("one", "two"):
        draw(run / "figures/paper_a" / f"{name}.pdf")
    (run / "figures/all").write_text(MANIFEST)
    claims_report(run)
    dest = tmp_path / "reference"
    result = subprocess.run(
        [sys.executable, "-m", "replication.diff.bless", str(run), str(dest)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"blessed 2 figures into {dest}: paper_a/one, paper_a/two\n"
    assert "RuntimeWarning" not in result.stderr
    assert (dest / "paper_a/two.png").read_bytes() == (run / "figures/paper_a/two.png").read_bytes()


def test_bless_of_another_manifest_takes_its_figures_claims_and_provenance(tmp_path):
    """figures/phase: its own figures, figures/phase_claims.md, results/phase_claims.csv and
    figures/phase_provenance.json; the laptop set's files in the same run are left out."""
    run = tmp_path / "run"
    for name in ("one", "two"):
        draw(run / "figures/paper_a" / f"{name}.pdf")
    (run / "figures/all").write_text(MANIFEST)
    (run / "figures/phase").write_text(
        "path\tsha256\tpaper\tfigure\n"
        "figures/paper_a/two.pdf\tx\tPaper A\tFig. 2\n"
        "figures/phase_claims.md\tx\tall\tclaims report\n"
    )
    (run / "figures/provenance.json").write_text('{"set": "all"}')
    (run / "figures/phase_provenance.json").write_text('{"set": "phase"}')
    claims_report(run)
    (run / "figures/phase_claims.md").write_text("# Claims checked by figures/phase\n")
    (run / "results/phase_claims.csv").write_text("paper,claim_id,holds\nPaper A,6g,False\n")
    dest = tmp_path / "reference" / "phase"
    assert bless(run, dest, manifest="phase") == ["paper_a/two"]
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == [
        "claims.csv",
        "claims.md",
        "paper_a/two.csv",
        "paper_a/two.png",
        "provenance.json",
    ]
    assert (dest / "claims.md").read_bytes() == (run / "figures/phase_claims.md").read_bytes()
    assert (dest / "claims.csv").read_bytes() == (run / "results/phase_claims.csv").read_bytes()
    assert json.loads((dest / "provenance.json").read_text()) == {"set": "phase"}


@pytest.mark.parametrize("absent", ["figures/claims.md", "results/claims.csv"])
def test_bless_without_the_listed_claims_report_writes_nothing(tmp_path, absent):
    run = tmp_path / "run"
    draw(run / "figures/paper_a/one.pdf")
    draw(run / "figures/paper_a/two.pdf")
    (run / "figures/all").write_text(MANIFEST)
    (run / "figures/provenance.json").write_text("{}")
    claims_report(run)
    (run / absent).unlink()
    dest = tmp_path / "reference" / "smoke"
    (dest / "paper_a").mkdir(parents=True)
    (dest / "paper_a/one.png").write_bytes(b"the blessed one")
    with pytest.raises(FileNotFoundError, match=f"the tree has no {absent}"):
        bless(run, dest)
    assert [p.relative_to(dest).as_posix() for p in dest.rglob("*")] == ["paper_a", "paper_a/one.png"]
    assert (dest / "paper_a/one.png").read_bytes() == b"the blessed one"


def test_bless_with_members_stores_their_envelope_and_diff_uses_it(tmp_path):
    """Two members: one moves a y value by 3e-7, one a curve's colour (image RMS r). The envelope
    holds the largest per column and the image's RMS; k x envelope then widens the tolerance."""
    run, members = tmp_path / "run", [tmp_path / "m1", tmp_path / "m2"]
    for folder in (run, *members):
        for name in ("one", "two"):
            draw(
                folder / "figures/paper_a" / f"{name}.pdf",
                colour="C2" if (folder, name) == (members[1], "two") else "C0",
            )
    (run / "figures/all").write_text(MANIFEST)
    (run / "figures/provenance.json").write_text('{"cpu_model": "blessing CPU"}')
    claims_report(run)
    moved = pd.read_csv(members[0] / "figures/paper_a/one.csv")
    moved.loc[7, "y"] += 3e-7
    moved.to_csv(members[0] / "figures/paper_a/one.csv", index=False, float_format="%.17g")
    dest = tmp_path / "reference" / "smoke"
    bless(run, dest, members, {"members": "1 2"})
    envelope = pd.read_csv(dest / "envelope.csv").set_index(["key", "column"]).envelope
    assert envelope[("paper_a/one", "y")] == pytest.approx(3e-7, rel=1e-6)
    assert envelope[("paper_a/one", "x")] == 0 and envelope[("paper_a/one", "<image rms>")] == 0
    rms = envelope[("paper_a/two", "<image rms>")]
    assert rms > 1.0
    assert json.loads((dest / "provenance.json").read_text())["ensemble_members"] == "1 2"
    spreads = pd.read_csv(dest / "envelope_members.csv").set_index(["member", "key", "column"]).spread
    assert (
        spreads[("m1", "paper_a/one", "y")] == pytest.approx(3e-7, rel=1e-6)
        and spreads[("m2", "paper_a/one", "y")] == 0
    )

    # A regeneration 2e-6 off in that y value: outside the floor (1e-6 |y| + 1e-9), inside 10 x 3e-7 + floor.
    regenerated = tmp_path / "new"
    for name in ("one", "two"):
        draw(regenerated / "figures/paper_a" / f"{name}.pdf", colour="C2" if name == "two" else "C0")
    data = pd.read_csv(regenerated / "figures/paper_a/one.csv")
    data.loc[7, "y"] += 2e-6
    data.to_csv(regenerated / "figures/paper_a/one.csv", index=False, float_format="%.17g")
    records = [record("one", "Fig. 1"), record("two", "Fig. 2")]
    outcomes = {}
    for k in (0, 10):
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(regenerated)
            outcomes[k] = diff_figures(records, dest, regenerated / f"diff{k}", 1.0, DATA, envelope_factor=k)
    strict, widened = (verdicts_against_reference(outcomes[k]).set_index("key").passed for k in (0, 10))
    assert not strict["paper_a/one"] and not strict["paper_a/two"]
    assert widened["paper_a/one"] and widened["paper_a/two"]
    y = outcomes[10].set_index(["key", "quantity"]).loc[("paper_a/one", "y")]
    assert y.tolerance == pytest.approx(10 * 3e-7 + 1e-9 + 1e-6 * abs(data.loc[7, "y"]), rel=1e-6)
    assert y.reason.startswith("envelope: 10 x envelope 3e-07")
    image = outcomes[10].set_index(["key", "quantity"]).loc[("paper_a/two", "image rms")]
    assert image.tolerance == pytest.approx(1.0 + 10 * rms) and image.reason.startswith("envelope")


def test_report_shows_both_provenances(tmp_path):
    run = tmp_path / "run"
    draw(run / "figures/paper_a/one.pdf")
    (run / "figures/provenance.json").write_text('{"cpu_model": "here", "python": "3.11"}')
    reference = tmp_path / "reference"
    draw(reference / "paper_a/one.pdf")
    (reference / "provenance.json").write_text('{"cpu_model": "there", "python": "3.11"}')
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(run)
        diff_figures(
            [record("one", "Fig. 1")], reference, run / "diff", 1.0, DATA, provenance=run / "figures/provenance.json"
        )
    html = (run / "diff/report.html").read_text()
    assert "<tr class='fail'><td>cpu_model</td><td>there</td><td>here</td></tr>" in html
    assert "<tr><td>python</td><td>3.11</td><td>3.11</td></tr>" in html


def test_report_escapes_text_and_marks_failing_quantities():
    from replication.diff.report import report_html

    summary = pd.DataFrame(
        [
            {"key": "p/a", "paper": "P <1>", "figure": "Fig. 1", "status": "fail", "passed": False,
             "quantity": "x & y", "deviation": 2.0, "tolerance": 1.0, "margin": 2.0, "reason": "floor", "message": "m"},
            {"key": "p/a", "paper": "P <1>", "figure": "Fig. 1", "status": "fail", "passed": False,
             "quantity": "z", "deviation": 0.5, "tolerance": 1.0, "margin": 0.5, "reason": "floor", "message": "m"},
        ]
    )  # fmt: skip
    html = report_html(summary, verdicts_against_reference(summary), {"p/a": None}, [], "ref", 3.0, ({}, {}))
    assert "1 figures, 0 pass, 1 fail" in html and "3 x the numerical-noise envelope" in html
    assert "P &lt;1&gt;" in html and "<1>" not in html
    assert "<tr class='fail'><td>x &amp; y</td><td>2</td><td>1</td><td>2</td><td>floor</td></tr>" in html
    assert "<tr class='pass'><td>z</td><td>0.5</td><td>1</td><td>0.5</td><td>floor</td></tr>" in html
    assert "Provenance" not in html
