"""A tree seeded from another (replication.variants.seeding) and the record it gets
(replication.variants.records): what is copied and what is left, Snakemake's metadata records in
Snakemake's own layout, the record's text as a person reads it."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import yaml

from helpers import ROOT
from replication.variants import read_record, record_of, resolve, seed_tree
from replication.variants.records import record_text

SMOKE = str(ROOT / "config" / "smoke.yaml")
NAME_MAX = 255  # a file name's limit, which Snakemake's metadata layout splits long names by


def snakemake_metadata_path(folder: Path, record_id: str) -> Path:
    """Where Snakemake keeps the metadata of the output ``record_id``: its urlsafe base64 in
    ``NAME_MAX - 1`` long pieces, each folder's piece after an "@"."""
    encoded = base64.urlsafe_b64encode(record_id.encode()).decode()
    pieces = [encoded[i : i + NAME_MAX - 1] for i in range(0, len(encoded), NAME_MAX - 1)]
    return folder.joinpath(*["@" + piece for piece in pieces[:-1]], pieces[-1])


def base_tree(root: Path) -> Path:
    base = root / "base"
    for name, text in {
        "results/a.csv": "a\n",
        "results/b.csv": "b\n",
        "results/run/c.csv": "c\n",
        "logs/run.log": "log\n",
        "figures/fig.png": "png",
        "figures/settings.yaml": "the base's record\n",
        "figures/reference/smoke/fig.png": "committed",
        "figures/diff/report.md": "a comparison",
        "figures/referenced/fig.png": "an output",
        "elsewhere/x.txt": "not an output",
    }.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text)
    os.utime(base / "results/a.csv", (1_000_000_000, 1_000_000_000))
    return base


def files_under(tree: Path) -> dict[str, str]:
    return {p.relative_to(tree).as_posix(): p.read_text() for p in sorted(tree.rglob("*")) if p.is_file()}


def test_a_seeded_tree_copies_the_outputs_with_their_times_and_nothing_else(tmp_path):
    base = base_tree(tmp_path)
    before = files_under(base)
    dest = tmp_path / "variants" / "v"
    assert seed_tree(base, dest) == 6
    assert files_under(dest) == {
        "figures/fig.png": "png",
        "figures/referenced/fig.png": "an output",
        "logs/run.log": "log\n",
        "results/a.csv": "a\n",
        "results/b.csv": "b\n",
        "results/run/c.csv": "c\n",
    }
    assert (dest / "results/a.csv").stat().st_mtime == 1_000_000_000  # Snakemake compares the times
    assert files_under(base) == before  # the base is only read


def test_metadata_records_keep_snakemakes_layout_also_for_long_names(tmp_path):
    base = base_tree(tmp_path)
    # A name long enough for three pieces; the second piece starts with "X", a letter of base64.
    long_name = "results/" + "a" * 182 + "eé" + "b" * 200 + ".csv"
    assert base64.urlsafe_b64encode(long_name.encode()).decode()[NAME_MAX - 1] == "X"
    records = {"results/a.csv": ["results/in.csv", "/abs/in.csv"], long_name: ["results/a.csv"]}
    metadata = base / ".snakemake" / "metadata"
    for record_id, inputs in records.items():
        path = snakemake_metadata_path(metadata, record_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"input": inputs, "log": ["logs/run.log"], "code": "x"}))

    def check(snakemake_folder: Path, prefix: str) -> None:
        copied = sorted(p for p in (snakemake_folder / "metadata").rglob("*") if p.is_file())
        expected = {snakemake_metadata_path(snakemake_folder / "metadata", prefix + r): r for r in records}
        assert copied == sorted(expected)
        for path, record_id in expected.items():
            record = json.loads(path.read_text())
            assert record["input"] == [p if p.startswith("/") else prefix + p for p in records[record_id]]
            assert record["log"] == [prefix + "logs/run.log"] and record["code"] == "x"

    seed_tree(base, tmp_path / "v")  # a variant: its own Snakemake folder
    check(tmp_path / "v" / ".snakemake", "")
    seed_tree(base, tmp_path / "sweep" / "p1", prefix="p1/")  # a sweep's point: the sweep's folder
    check(tmp_path / "sweep" / ".snakemake", "p1/")


def test_the_record_reads_name_and_base_first_and_keeps_lists_on_one_line(tmp_path):
    config = resolve([SMOKE])
    text = record_text(record_of(config))
    keys = [line.split(":")[0] for line in text.splitlines() if line and line[0] not in "# "]
    assert keys == ["name", "over", "sha256", "settings"]
    assert "    seeds: [1, 2]\n" in text  # a list of numbers on the line of its key
    # A mapping that fits in 110 columns on one line.
    schedule = "schedule: {name: onecycle, warmup: 0.02, div_factor: 100.0, final_div_factor: 0.05, horizon: null}"
    assert f"      {schedule}\n" in text
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "settings.yaml").write_text(text)
    assert read_record(tmp_path) == yaml.safe_load(yaml.safe_dump(record_of(config)))
