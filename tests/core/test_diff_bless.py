"""Blessing a tree whose manifest lists no claims report: its figures, the written reports it lists
under their path, its settings record, the ensemble fields in the provenance, nothing else."""

from __future__ import annotations

import json

from replication.diff.bless import bless, claims_files, provenance_file

MANIFEST = (
    "path\tsha256\tpaper\tfigure\n"
    "figures/p/one.pdf\tx\tP\tFig. 1\n"
    "figures/p/tables/ablation.md\tx\tP\ttable\n"
    "figures/findings.md\tx\tP\tfindings\n"
)


def tree(run):
    """A tree that built one figure and two reports, with its settings record and no provenance."""
    files = {
        "figures/all": MANIFEST,
        "figures/p/one.pdf": "pdf",
        "figures/p/one.png": "png",
        "figures/p/one.csv": "x,y\n0,1\n",
        "figures/p/tables/ablation.md": "| a |\n",
        "figures/findings.md": "# Findings\n",
        "figures/p/unlisted.md": "not in the manifest\n",
        "figures/settings.yaml": "name: smoke\n",
    }
    for name, text in files.items():
        (run / name).parent.mkdir(parents=True, exist_ok=True)
        (run / name).write_text(text)
    return run


def test_bless_writes_the_figures_reports_and_settings_record_of_the_manifest(tmp_path):
    run, dest = tree(tmp_path / "run"), tmp_path / "reference" / "smoke"
    (dest / "old").mkdir(parents=True)
    (dest / "old" / "claims.md").write_text("a claims report of an earlier set\n")
    assert bless(run, dest, ensemble={"members": "1 2", "wall_s": 5}) == ["p/one"]
    written = {p.relative_to(dest).as_posix(): p.read_text() for p in sorted(dest.rglob("*")) if p.is_file()}
    provenance = written.pop("provenance.json")
    assert written == {
        "findings.md": "# Findings\n",
        "p/one.csv": "x,y\n0,1\n",
        "p/one.png": "png",
        "p/tables/ablation.md": "| a |\n",
        "settings.yaml": "name: smoke\n",
    }
    assert json.loads(provenance) == {"ensemble_members": "1 2", "ensemble_wall_s": 5}
    assert not (dest / "old").exists()  # emptied, then removed


def test_bless_without_a_settings_record_or_ensemble_writes_the_rest(tmp_path):
    run, dest = tree(tmp_path / "run"), tmp_path / "reference"
    (run / "figures" / "settings.yaml").unlink()
    bless(run, dest)
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == [
        "findings.md",
        "p/one.csv",
        "p/one.png",
        "p/tables/ablation.md",
        "provenance.json",
    ]
    assert json.loads((dest / "provenance.json").read_text()) == {}


def test_the_claims_report_and_provenance_of_each_manifest():
    assert claims_files("all") == {"figures/claims.md": "claims.md", "results/claims.csv": "claims.csv"}
    assert claims_files("phase") == {"figures/phase_claims.md": "claims.md", "results/phase_claims.csv": "claims.csv"}
    assert provenance_file("all") == "provenance.json"
    assert provenance_file("phase") == "phase_provenance.json"
