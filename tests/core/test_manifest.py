"""The manifest figures/all (replication.manifest): written with each file's sha256, read back, and
the figures (PDFs) among its lines."""

import hashlib

from replication.manifest import MANIFEST_COLUMNS, manifest_figures, manifest_rows, read_manifest, write_manifest


def test_a_written_manifest_is_read_back(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the records' paths are relative to the run's folder
    (tmp_path / "figures" / "p").mkdir(parents=True)
    (tmp_path / "figures" / "p" / "fig1.pdf").write_bytes(b"%PDF one")
    (tmp_path / "figures" / "p" / "table.md").write_text("| a |\n")
    records = [
        {"path": "figures/p/fig1.pdf", "paper": "P", "figure": "Fig. 1"},
        {"path": "figures/p/table.md", "paper": "P", "figure": "Table 1"},
    ]
    manifest = manifest_rows(records)
    assert list(manifest.columns) == MANIFEST_COLUMNS == ["path", "sha256", "paper", "figure"]
    assert manifest.sha256.tolist() == [
        hashlib.sha256(b"%PDF one").hexdigest(),
        hashlib.sha256(b"| a |\n").hexdigest(),
    ]
    write_manifest(manifest, "figures/all")
    assert (tmp_path / "figures" / "all").read_text().splitlines() == [
        "path\tsha256\tpaper\tfigure",
        f"figures/p/fig1.pdf\t{manifest.sha256[0]}\tP\tFig. 1",
        f"figures/p/table.md\t{manifest.sha256[1]}\tP\tTable 1",
    ]
    assert read_manifest(tmp_path).to_dict("records") == manifest.to_dict("records")
    assert manifest_figures(tmp_path) == ["figures/p/fig1.pdf"]


def test_the_manifest_of_no_records_has_the_columns(tmp_path):
    assert list(manifest_rows([], tmp_path).columns) == MANIFEST_COLUMNS
