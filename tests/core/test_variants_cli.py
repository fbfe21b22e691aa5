"""``python -m replication.variants`` (replication.variants.cli), the command `make variant` and
`make sweep` run: what it lays out, the Snakemake run it starts (its command line, not the run:
``pipeline_run.main`` stands in), its help, and its one-line refusals. No Snakemake runs here."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from replication import pipeline_run
from replication.make_command import SMOKE_CONFIG
from replication.pipeline_run import INTERRUPTED, parse_arguments, snakemake_arguments, stopped_line
from replication.variants import cli, read_record, record_of, resolve
from replication.variants.cli import main

SMOKE = str(SMOKE_CONFIG)
LR = "local_to_global.transformer.optimizer.lr"
FIG4_P = "local_to_global.transformer.experiments.fig4.chain.p"
FIG3_SEEDS = "local_to_global.transformer.experiments.fig3.seeds"


def overlay_of(tree: Path) -> dict:
    return yaml.safe_load((tree / "variant.yaml").read_text())


def lr_of(tree: Path) -> float:
    return read_record(tree)["settings"]["local_to_global"]["transformer"]["optimizer"]["lr"]


@pytest.fixture
def started(monkeypatch):
    """The command lines ``main`` hands to the pipeline runner, which starts nothing here."""
    calls: list[list[str]] = []

    def run_pipeline(argv):
        calls.append(argv)
        return 0

    monkeypatch.setattr(pipeline_run, "main", run_pipeline)
    return calls


def test_a_dry_run_lays_out_the_tree_with_every_setting_and_prints_it(tmp_path, capsys, started):
    argv = ["--name", "lr-p", "--configfile", SMOKE, "--root", str(tmp_path), "--dry-run"]
    argv += ["--set", f"{LR}=0.002", "--set", " ", "--set", f"{FIG3_SEEDS}=[1, 2, 3]"]
    assert main([*argv, "--sets", f"{FIG4_P}=0.6"]) == 0
    tree = tmp_path / "variants" / "lr-p"
    assert capsys.readouterr().out.splitlines()[-1] == str(tree)
    experiments = {"fig3": {"seeds": [1, 2, 3]}, "fig4": {"chain": {"p": 0.6}}}
    transformer = {"optimizer": {"lr": 0.002}, "experiments": experiments}
    assert overlay_of(tree) == {"local_to_global": {"transformer": transformer}, "variant": "lr-p"}
    assert read_record(tree)["over"] == "smoke" and lr_of(tree) == 0.002
    assert started == []  # a dry run starts nothing


def test_a_variant_is_named_after_its_settings_and_laid_over_the_paper_settings_by_default(
    tmp_path, capsys, monkeypatch, started
):
    monkeypatch.chdir(tmp_path)  # --root: the current folder
    assert main(["--set", f"{LR}=0.003", "--dry-run"]) == 0
    (tree,) = (tmp_path / "variants").iterdir()
    assert capsys.readouterr().out.splitlines()[-1] == str(Path("variants") / tree.name)
    assert read_record(tree)["over"] == "paper" and lr_of(tree) == 0.003
    assert resolve([], overlay_of(tree))["local_to_global"]["transformer"]["optimizer"]["lr"] == 0.003


def built(root: Path, name: str, assignments: dict) -> Path:
    tree = root / "variants" / name
    (tree / "figures").mkdir(parents=True)
    (tree / "figures" / "settings.yaml").write_text(yaml.safe_dump(record_of(resolve([SMOKE], assignments))))
    (tree / "results").mkdir()
    (tree / "results" / "from.txt").write_text(name)
    return tree


def test_a_new_variant_is_seeded_from_the_base_it_names_else_the_closest_tree(tmp_path, capsys, started):
    lr = {"local_to_global": {"transformer": {"optimizer": {"lr": 0.002}}}}
    built(tmp_path, "near", lr)
    far = built(tmp_path, "far", {"local_to_global": {"transformer": {"optimizer": {"lr": 0.01}, "batch_size": 3}}})
    common = ["--configfile", SMOKE, "--root", str(tmp_path), "--set", f"{LR}=0.002", "--dry-run"]
    assert main(["--name", "a", *common]) == 0
    assert (tmp_path / "variants" / "a" / "results" / "from.txt").read_text() == "near"
    assert main(["--name", "b", "--base", str(far), *common]) == 0
    assert (tmp_path / "variants" / "b" / "results" / "from.txt").read_text() == "far"


def test_the_build_runs_in_the_tree_with_its_settings_and_the_make_command_that_resumes(tmp_path, capsys, started):
    argv = ["--name", "lr2x", "--configfile", SMOKE, "--root", str(tmp_path), "--make-goal", "phase"]
    argv += ["--sets", f"{LR}=0.002", "--", "figures/phase", "--cores", "2"]
    assert main(argv) == 0
    (run,) = started
    args = parse_arguments(run)
    tree = tmp_path / "variants" / "lr2x"
    assert Path(args.directory) == tree and args.make_goal == "phase"
    assert args.resume_command == f"make phase CONFIG=config/smoke.yaml VARIANT=lr2x SET='{LR}=0.002' CORES=2"
    overlay = str((tree / "variant.yaml").resolve())
    assert snakemake_arguments(args) == ["figures/phase", "--cores", "2", "--configfile", SMOKE, overlay]


def test_outside_make_the_resume_command_is_the_command_line_itself(tmp_path, capsys, started, monkeypatch):
    argv = ["--name", "lr2x", "--configfile", SMOKE, "--root", str(tmp_path), "--set", f"{LR}=0.002"]
    assert main([*argv, "--", "figures/all"]) == 0
    assert all(isinstance(word, str) for word in started[-1])  # a command line, no option without its value
    args = parse_arguments(started[-1])
    assert args.make_goal is None and snakemake_arguments(args)[0] == "figures/all"
    command = shlex.split(args.resume_command)
    assert command[1:] == ["-m", "replication.variants", *argv, "--", "figures/all"]
    # Run as `python -m replication.variants ...`: its own command line, without the program's name.
    monkeypatch.setattr(sys, "argv", ["variants", *argv])
    assert main() == 0
    args = parse_arguments(started[-1])
    assert shlex.split(args.resume_command)[1:] == ["-m", "replication.variants", *argv]
    assert snakemake_arguments(args) == ["--configfile", SMOKE, str(tmp_path / "variants/lr2x/variant.yaml")]


@pytest.mark.parametrize("make_goal, status", [("figures", 0), (None, INTERRUPTED)])
def test_ctrl_c_while_laying_out_names_the_command_that_resumes(tmp_path, capsys, monkeypatch, make_goal, status):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "prepare", interrupted)
    argv = ["--name", "lr2x", "--configfile", SMOKE, "--root", str(tmp_path), "--sets", f"{LR}=0.002"]
    under_make = ["--make-goal", make_goal] if make_goal else []
    assert main([*argv, *under_make, "--", "--cores", "1"]) == status
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    if make_goal:
        resume = f"make figures CONFIG=config/smoke.yaml VARIANT=lr2x SET='{LR}=0.002' CORES=1"
        assert err == stopped_line(resume, None) + "\n"
    else:
        assert err.startswith(stopped_line("", None)) and err.rstrip().endswith(
            shlex.join(["-m", "replication.variants", *argv, "--", "--cores", "1"])
        )


@pytest.mark.parametrize("make_goal", ["plateau", None])
def test_an_unknown_variant_is_refused_in_one_line_with_the_goal_asked_for(tmp_path, capsys, make_goal, started):
    under_make = ["--make-goal", make_goal] if make_goal else []
    assert main(["--name", "fig4-chian", "--root", str(tmp_path), *under_make, "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("Invalid config: variant 'fig4-chian' has no settings")
    goal = make_goal or "figures"
    assert f"did you mean fig4-chain: make {goal} VARIANT=fig4-chain;" in err
    assert err.rstrip().endswith(f"make {goal} VARIANT=fig4-chian SET='key.path=value ...'")
    assert not (tmp_path / "variants").exists() and started == []


def test_a_bad_set_is_refused_in_one_line_before_anything_is_laid_out(tmp_path, capsys):
    assert main(["--name", "x", "--root", str(tmp_path), "--sets", "a=[1, 2", "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("Invalid config: ") and "key.path=value" in err
    assert not (tmp_path / "variants").exists()


def test_the_help_documents_the_command_and_every_option(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: python -m replication.variants ")
    description = text.split("\n\n")[1]
    assert description.strip() and not description.startswith("options")
    options = text.split("options:\n", 1)[1]
    # Each option with the line that says what it does (argparse puts it beside or under the option).
    documented = re.findall(r"^  (--[\w-]+)[^\n]*?(?:  +|\n {6,})(\S[^\n]*)", options, re.M)
    named = {"--name", "--configfile", "--set", "--sets", "--file", "--base", "--root", "--dry-run", "--make-goal"}
    assert {option for option, _ in documented} == named
    assert "None" not in options  # no option's text names a missing value
