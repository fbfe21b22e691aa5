"""A variant's tree laid out (replication.variants.create): its overlay of settings, the file that
keeps them, the tree it is seeded from, and a variant file that is not there."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from replication.errors import ConfigError
from replication.variants import prepare, read_record, variant_overlay

GRID_SEEDS = "benign_overfitting.grid.seeds"


def metadata_name(record_id: str) -> str:
    return base64.urlsafe_b64encode(record_id.encode()).decode()


def built_base(tree: Path) -> Path:
    """A finished tree: one output and Snakemake's record of it."""
    (tree / "results").mkdir(parents=True)
    (tree / "results" / "x.csv").write_text("x\n")
    (tree / ".snakemake" / "metadata").mkdir(parents=True)
    (tree / ".snakemake" / "metadata" / metadata_name("results/x.csv")).write_text(json.dumps({"input": ["a.csv"]}))
    return tree


def test_an_overlay_is_the_files_values_then_the_command_lines_and_shares_nothing_with_them():
    file_values = {"model": {"lr": 0.1, "depth": 2}, "seeds": [1]}
    assignments = {"model": {"lr": 0.2}, "inits": ["a"]}
    overlay = variant_overlay("v", file_values, assignments)
    assert overlay == {"model": {"lr": 0.2, "depth": 2}, "seeds": [1], "inits": ["a"], "variant": "v"}
    overlay["seeds"].append(2)
    overlay["inits"].append("b")
    assert file_values == {"model": {"lr": 0.1, "depth": 2}, "seeds": [1]}
    assert assignments == {"model": {"lr": 0.2}, "inits": ["a"]}


def test_a_variant_keeps_its_values_in_the_order_given_and_is_seeded_in_its_own_tree(tmp_path, capsys, monkeypatch):
    built_base(tmp_path / "variants" / "base")
    variant_file = tmp_path / "mine.yaml"
    variant_file.write_text("local_to_global:\n  transformer:\n    optimizer: {lr: 0.002}\n")
    monkeypatch.chdir(tmp_path)  # by default the root is the current folder
    tree, overlay_file, config = prepare(
        "mine", [], [f"{GRID_SEEDS}=[1, 2, 3]"], base="variants/base", variant_file=variant_file
    )
    assert tree == Path("variants/mine") and overlay_file == tree / "variant.yaml"
    assert overlay_file.read_text() == (
        "# The values this variant sets over its config files (replication.variants).\n"
        "local_to_global:\n  transformer:\n    optimizer: {lr: 0.002}\n"
        "benign_overfitting:\n  grid:\n    seeds: [1, 2, 3]\n"
        "variant: mine\n"
    )
    assert config["benign_overfitting"]["grid"]["seeds"] == [1, 2, 3] and read_record(tree)["name"] == "mine"
    assert (tree / "results" / "x.csv").read_text() == "x\n"
    # Snakemake's records go to the tree's own folder, under their own paths.
    assert [path.name for path in (tree / ".snakemake" / "metadata").iterdir()] == [metadata_name("results/x.csv")]
    assert "variant mine: seeded from variants/base (1 files)" in capsys.readouterr().out


def test_a_sweep_point_is_seeded_with_its_records_prefixed_in_the_sweeps_folder(tmp_path, capsys):
    base = built_base(tmp_path / "variants" / "base")
    tree, _, _ = prepare("p1", [], [f"{GRID_SEEDS}=[1, 2]"], tmp_path, prefix="p1/", base=base)
    assert (tree / "results" / "x.csv").is_file() and not (tree / ".snakemake").exists()
    record = tmp_path / "variants" / ".snakemake" / "metadata" / metadata_name("p1/results/x.csv")
    assert json.loads(record.read_text()) == {"input": ["p1/a.csv"], "log": []}


def test_a_variant_file_that_is_not_there_is_refused_before_anything_is_laid_out(tmp_path):
    missing = tmp_path / "missing.yaml"
    with pytest.raises(ConfigError, match=f"config file {missing}: no such file"):
        prepare("mine", [], [], tmp_path, variant_file=missing)
    assert not (tmp_path / "variants").exists()
