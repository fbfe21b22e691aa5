"""Typed in a fresh clone where the user builds the smoke settings: a misspelt VARIANT or CONFIG stops
in one line and leaves nothing behind, and every command a message suggests builds over the smoke
settings, never a tree of the paper's. Each message comes from the command a user types; each
suggestion's dry run is taken (make's own -n for the command it runs, then that command with
Snakemake's -n) and what it would build is checked: its config file, its tree and its settings."""

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from helpers import ROOT, SNAKEMAKE, SNAKEMAKE_TIMEOUT_S, clone_environment, make_recipe, make_words, tracked_copy
from replication.make_command import SET_PLACEHOLDER, option_value
from replication.variants import (
    derived_name,
    parse_assignments,
    read_record,
    record_of,
    resolve,
    split_assignments,
    tree_settings,
)

pytestmark = pytest.mark.pipeline

SMOKE = ROOT / "config" / "smoke.yaml"
LR = "local_to_global.transformer.optimizer.lr"
CHOSEN = f"{LR}=0.002"  # what the user writes where a suggestion leaves SET to them
FIG4_CHAIN = yaml.safe_load((ROOT / "config" / "variants" / "fig4-chain.yaml").read_text())


def smoke_settings(*assignments: str, **overlay) -> dict:
    return tree_settings(resolve([SMOKE], {**parse_assignments(assignments), **overlay}))


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A fresh clone whose smoke tree has started: its record, written before its first job."""
    repo = tracked_copy(tmp_path_factory.mktemp("clone"))
    record = repo / "variants" / "smoke" / "figures" / "settings.yaml"
    record.parent.mkdir(parents=True)
    record.write_text(yaml.safe_dump(record_of(resolve([SMOKE]))))
    return repo


def typed(repo, *words: str) -> str:
    """What ``words`` (make or snakemake) print, typed in ``repo``; they must fail."""
    command = [str(SNAKEMAKE), *words[1:]] if words[0] == "snakemake" else make_words(*words[1:])
    result = subprocess.run(
        command, cwd=repo, env=clone_environment(repo), capture_output=True, text=True, timeout=SNAKEMAKE_TIMEOUT_S
    )
    assert result.returncode != 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout + result.stderr


def message(output: str, start: str) -> str:
    lines = [line for line in output.splitlines() if start in line]
    assert len(lines) == 1, output[-3000:]
    return lines[0]


def suggestions(text: str) -> list[str]:
    """The commands in a message: ``make ...`` or ``snakemake ...`` (after ``rm -r X &&`` if so), each
    up to the next ``;`` or ``)`` outside quotes."""
    found = re.findall(r"((?:rm -r \S+ && )?(?<![\w/-])(?:make|snakemake) (?:'[^']*'|[^;()'])+)", text)
    return [command.strip().rstrip("?") for command in found]


def what_it_builds(repo, command: str) -> tuple[Path, Path, dict]:
    """The dry run of a suggested ``command`` in ``repo``: ``(config file, tree, settings)`` it builds."""
    command = command.replace(SET_PLACEHOLDER, CHOSEN)
    if command.startswith("rm -r "):
        removal, command = command.split(" && ", 1)
        shutil.rmtree(repo / removal.split()[2])
    words = shlex.split(command)
    if words[0] == "snakemake":
        argv = [str(SNAKEMAKE), *words[1:]]
    else:  # the command make runs for it, as make -n prints it; SET reaches it through the environment
        runs = [line for line in make_recipe(repo, *words[1:]) if " -m replication." in line]
        assert len(runs) == 1, runs
        argv = shlex.split(runs[0])
        if "--sets" in argv:
            argv[argv.index("--sets") + 1] = dict(word.split("=", 1) for word in words[2:]).get("SET", "")
    result = subprocess.run(
        [*argv, "-n"], cwd=repo, env=clone_environment(repo), capture_output=True, text=True, timeout=SNAKEMAKE_TIMEOUT_S
    )
    assert result.returncode == 0, f"{command}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    configfile = (repo / option_value(argv, "--configfile")).resolve()
    if "replication.variants" in argv:
        name = option_value(argv, "--name") or derived_name(split_assignments(option_value(argv, "--sets")))
        record = read_record(repo / "variants" / name)
        assert record["over"] == "smoke", command
        return configfile, (repo / "variants" / name).resolve(), record["settings"]
    return configfile, (repo / option_value(argv, "--directory")).resolve(), tree_settings(resolve([configfile]))


def test_a_misspelt_variant_or_config_stops_in_one_line_and_leaves_nothing(clone):
    before = sorted(path.name for path in (clone / "variants").iterdir())
    line = message(typed(clone, "make", "figures", "CONFIG=config/smoke.yaml", "VARIANT=fig4-chian"), "Invalid config")
    assert "did you mean fig4-chain" in line and "fig4-chain, plateau, plateau-batches, plateau-cells (config/variants/)" in line
    line = message(typed(clone, "make", "figures", "CONFIG=config/smokee.yaml"), "Not started")
    assert line.startswith("Not started: config file not found: config/smokee.yaml; the config files: config/config")
    assert sorted(path.name for path in (clone / "variants").iterdir()) == before  # no fig4-chian/, no smokee/


def test_every_suggested_command_builds_over_the_smoke_settings(clone, tmp_path):
    lr = "local_to_global={transformer: {optimizer: {lr: 0.002}}}"
    half = ["--name", "half", "--configfile", str(SMOKE), "--sets", f"{LR}=0.003", "--dry-run"]
    subprocess.run(
        [str(SNAKEMAKE.with_name("python")), "-m", "replication.variants", *half],
        cwd=clone,
        env=clone_environment(clone),
        check=True,
        capture_output=True,
    )  # a variant laid out, its build stopped before its first job
    stale = tmp_path / "old-smoke"  # a smoke tree made before a smoke value changed
    (stale / "figures").mkdir(parents=True)
    record = yaml.safe_load(yaml.safe_dump(record_of(resolve([SMOKE]))))
    record["settings"]["local_to_global"]["transformer"]["optimizer"]["lr"] = 0.005
    (stale / "figures" / "settings.yaml").write_text(yaml.safe_dump(record))
    smoke_tree = ["--directory", "variants/smoke", "--configfile", "config/smoke.yaml"]
    cases = [  # what the user typed; what each suggestion of its message builds
        (["snakemake", "figures/all", "-n", *smoke_tree, "--config", lr], "Invalid config", [smoke_settings(CHOSEN)]),
        (["snakemake", "figures/all", "-n", "--configfile", "config/smoke.yaml"], "Invalid config", [smoke_settings()] * 2),
        (
            ["make", "figures", "CONFIG=config/smoke.yaml", "VARIANT=fig4-chian"],
            "Invalid config",
            [smoke_settings(**FIG4_CHAIN), smoke_settings(CHOSEN)],
        ),
        (["make", "compare", "A=smoke", "B=nosuchtree"], "Cannot compare", [smoke_settings(CHOSEN)]),
        (["make", "compare", "A=smoke", "B=half"], "Cannot compare", [smoke_settings(f"{LR}=0.003")]),
        (["snakemake", "figures/all", "-n", "--directory", str(stale), "--configfile", "config/smoke.yaml"],
         "Invalid config", [smoke_settings()]),
    ]
    for typed_words, start, expected in cases:
        text = message(typed(clone, *typed_words), start)
        commands = suggestions(text)
        assert len(commands) == len(expected), (text, commands)
        for command, settings in zip(commands, expected):
            configfile, tree, built = what_it_builds(clone, command)
            assert configfile == (clone / "config" / "smoke.yaml").resolve(), (text, command)
            assert tree != clone.resolve() and built == settings, (text, command, tree)
