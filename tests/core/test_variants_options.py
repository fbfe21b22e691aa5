"""The options of ``python -m replication.variants`` (replication.variants.cli): what its help says
of each, and what each changes in the tree laid out and the Snakemake run started (its command
line: ``pipeline_run.main`` stands in and starts nothing)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import yaml

from replication import pipeline_run
from replication.make_command import SMOKE_CONFIG
from replication.pipeline_run import parse_arguments, snakemake_arguments
from replication.variants import read_record
from replication.variants.cli import add_tree_options, main, parse_command_line

SMOKE = str(SMOKE_CONFIG)
LR = "local_to_global.transformer.optimizer.lr"
BATCH = "local_to_global.transformer.batch_size"


@pytest.fixture
def started(monkeypatch):
    """The command lines ``main`` hands to the pipeline runner, which starts nothing here."""
    calls: list[list[str]] = []
    monkeypatch.setattr(pipeline_run, "main", lambda argv: calls.append(argv) or 0)
    return calls


def option_help(text: str) -> dict[str, str]:
    """``{option: its help}`` from argparse's help text (one option a line, help beside or below it)."""
    options = text.split("options:\n", 1)[1]
    found = re.findall(r"^  (--[\w-]+)(?: [A-Z_]+)?(?: {2,}|\n {20,})(\S[^\n]*)", options, re.M)
    return dict(found)


def test_the_help_says_what_each_option_does(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # one line per option's help
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert text.split("\n\n")[1] == "Build a named variant in variants/<name>/."
    assert option_help(text) == {
        "--name": "the variant (config/variants/<name>.yaml if it exists); default: from --set",
        "--configfile": "config files under it (e.g. smoke)",
        "--set": "key.path=value",
        "--sets": "several key.path=value, split on spaces outside [] {} and quotes",
        "--file": "the variant's settings file (default: config/variants/<name>.yaml)",
        "--base": "the tree to seed new variants from (default: the closest one)",
        "--root": "the project's tree; variants go to <root>/variants",
        "--dry-run": "lay out and validate; print the tree only",
        "--make-goal": "run by `make GOAL`: what its messages and a Ctrl-C name as the command",
    }


def test_the_tree_options_name_what_is_laid_out_and_default_to_the_current_folder(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    parser = argparse.ArgumentParser(prog="points")
    add_tree_options(parser, "points", dry_run="print the points only")
    assert vars(parser.parse_args([])) == {"base": None, "root": ".", "dry_run": False, "make_goal": None}
    given = parser.parse_args(["--base", "b", "--root", "r", "--dry-run", "--make-goal", "sweep"])
    assert vars(given) == {"base": "b", "root": "r", "dry_run": True, "make_goal": "sweep"}
    helps = option_help(parser.format_help())
    assert helps["--base"] == "the tree to seed new points from (default: the closest one)"
    assert helps["--root"] == "the project's tree; points go to <root>/variants"
    assert helps["--dry-run"] == "print the points only"


def test_what_follows_the_first_double_dash_goes_to_snakemake(monkeypatch):
    parser = argparse.ArgumentParser()
    parser.add_argument("--name")
    args = parse_command_line(parser, ["--name", "a", "--", "figures/all", "--", "--cores", "1"])
    assert args.name == "a" and args.snakemake_args == ["figures/all", "--", "--cores", "1"]
    assert parse_command_line(parser, ["--name", "b"]).snakemake_args == []
    monkeypatch.setattr("sys.argv", ["variants", "--name", "c", "--", "x"])  # default: this command line
    args = parse_command_line(parser, None)
    assert args.name == "c" and args.snakemake_args == ["x"]


def test_every_config_file_goes_to_snakemake_in_order_and_the_first_names_the_base(tmp_path, capsys, started):
    extra = tmp_path / "batch.yaml"
    extra.write_text(yaml.safe_dump({"local_to_global": {"transformer": {"batch_size": 3}}}))
    argv = ["--configfile", SMOKE, "--configfile", str(extra), "--root", str(tmp_path), "--make-goal", "phase"]
    assert main([*argv, "--sets", f"{LR}=0.002", "--", "--cores", "2"]) == 0
    (run,) = started
    args = parse_arguments(run)
    tree = tmp_path / "variants" / "lr=0.002"
    assert args.resume_command == f"make phase CONFIG=config/smoke.yaml SET='{LR}=0.002' CORES=2"
    overlay = str((tree / "variant.yaml").resolve())
    assert snakemake_arguments(args) == ["--cores", "2", "--configfile", SMOKE, str(extra.resolve()), overlay]
    settings = read_record(tree)["settings"]["local_to_global"]["transformer"]
    assert settings["batch_size"] == 3 and settings["optimizer"]["lr"] == 0.002


def test_a_variant_file_given_by_path_sets_its_values(tmp_path, capsys, started):
    variant_file = tmp_path / "mine.yaml"
    variant_file.write_text(yaml.safe_dump({"local_to_global": {"transformer": {"batch_size": 5}}}))
    argv = ["--name", "mine", "--configfile", SMOKE, "--root", str(tmp_path), "--file", str(variant_file)]
    assert main([*argv, "--sets", f"{LR}=0.004", "--dry-run"]) == 0
    tree = tmp_path / "variants" / "mine"
    assert capsys.readouterr().out.splitlines()[-1] == str(tree)
    settings = read_record(tree)["settings"]["local_to_global"]["transformer"]
    assert settings["batch_size"] == 5 and settings["optimizer"]["lr"] == 0.004
    assert started == []


def test_a_variant_built_before_is_built_again_from_its_trees_settings(tmp_path, capsys, started):
    common = ["--name", "again", "--configfile", SMOKE, "--root", str(tmp_path)]
    assert main([*common, "--set", f"{BATCH}=6", "--dry-run"]) == 0
    assert main([*common, "--", "figures/all"]) == 0  # no SET: the tree's variant.yaml holds them
    tree = tmp_path / "variants" / "again"
    overlay = str((tree / "variant.yaml").resolve())
    assert snakemake_arguments(parse_arguments(started[-1])) == ["figures/all", "--configfile", SMOKE, overlay]
    assert yaml.safe_load(Path(overlay).read_text())["local_to_global"]["transformer"]["batch_size"] == 6
