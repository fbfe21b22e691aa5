"""A new tree seeded from an existing one (replication.variants.seeding): which files and which of
Snakemake's metadata records it copies, where it puts them, and that it keeps their times."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from replication.variants import seed_tree


def write(path: Path, text: str, mtime: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def metadata_name(record_id: str) -> str:
    return base64.urlsafe_b64encode(record_id.encode()).decode()


def files_under(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): path.read_text() for path in folder.rglob("*") if path.is_file()}


def test_a_seeded_tree_copies_outputs_logs_and_benchmarks_with_their_times(tmp_path):
    base = tmp_path / "base"
    kept = {
        "results/a/b/run.csv": "run",
        "results/top.csv": "top",
        "figures/paper/fig1.png": "png",
        "figures/references.txt": "not the reference set",
        "logs/train.log": "log",
        "benchmarks/train.tsv": "s",
    }
    for relative, text in kept.items():
        write(base / relative, text, mtime=1_000_000)
    (base / "results" / "empty").mkdir()
    left = ["figures/settings.yaml", "figures/reference/smoke/fig1.png", "figures/diff/report.md", "other/x.txt"]
    for relative in left:
        write(base / relative, "left")
    write(base / "figures" / "paper" / "settings.yaml", "a figure's own file", mtime=1_000_000)
    kept["figures/paper/settings.yaml"] = "a figure's own file"
    dest = tmp_path / "variants" / "new"
    assert seed_tree(str(base), str(dest)) == len(kept)
    assert files_under(dest) == kept
    assert {(dest / relative).stat().st_mtime for relative in kept} == {1_000_000}
    assert files_under(base / "results") == {"a/b/run.csv": "run", "top.csv": "top"}  # the base only read


def test_a_tree_without_outputs_seeds_nothing(tmp_path):
    (tmp_path / "base").mkdir()
    assert seed_tree(tmp_path / "base", tmp_path / "new") == 0
    assert not (tmp_path / "new").exists()


def test_only_the_records_of_the_seeded_outputs_are_copied_with_their_times(tmp_path):
    base, dest = tmp_path / "base", tmp_path / "variants" / "new"
    metadata = base / ".snakemake" / "metadata"
    record = {"input": ["results/in.csv"], "log": ["logs/x.log"], "code": "c"}
    for record_id in ("/abs/out.csv", "figures/reference/smoke/fig1.png", "figures/diff/report.md"):
        write(metadata / metadata_name(record_id), json.dumps(record))  # sorted first: their names start L, Z
    write(metadata / metadata_name("results/x.csv"), json.dumps(record), mtime=2_000_000)
    write(metadata / "@stray", "not a record")  # a name Snakemake gives folders only
    assert seed_tree(base, dest) == 0
    copied = dest / ".snakemake" / "metadata"
    assert files_under(copied) == {metadata_name("results/x.csv"): json.dumps(record)}
    assert (copied / metadata_name("results/x.csv")).stat().st_mtime == 2_000_000
    assert not (tmp_path / "variants" / ".snakemake").exists()  # without a prefix: the tree's own folder


def test_a_sweeps_records_are_prefixed_in_the_folder_that_runs_it(tmp_path):
    base, dest = tmp_path / "base", tmp_path / "variants" / "p1"
    metadata = base / ".snakemake" / "metadata"
    write(metadata / metadata_name("results/x.csv"), json.dumps({"input": ["results/in.csv", "/abs/y"], "code": "c"}))
    write(metadata / metadata_name("results/y.csv"), json.dumps({"input": None, "log": ["logs/y.log"]}))
    seed_tree(base, dest, prefix="p1/")
    copied = tmp_path / "variants" / ".snakemake" / "metadata"
    assert json.loads((copied / metadata_name("p1/results/x.csv")).read_text()) == {
        "input": ["p1/results/in.csv", "/abs/y"],
        "code": "c",
        "log": [],
    }
    assert json.loads((copied / metadata_name("p1/results/y.csv")).read_text()) == {
        "input": [],
        "log": ["p1/logs/y.log"],
    }
    assert not (dest / ".snakemake").exists()
