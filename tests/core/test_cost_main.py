"""`make cost` end to end in this process, Snakemake's dry run and the config stood in for: the
command it plans with, the jobs and the cost line it prints, and its exit codes."""

from __future__ import annotations

import json
import subprocess

import pytest

from helpers import help_words
from replication import cost, variants
from replication.errors import ConfigError
from replication.paths import PROJECT_ROOT
from replication.snakemake_command import SNAKEFILE, snakemake_executable

# Snakemake writes its job table to stderr.
JOB_STATS = """Building DAG of jobs...
Job stats:
job           count
----------  -------
train             3
plot              1
total             4
"""

MEASURED = {
    "runs": {
        "smoke": {"settings": "smoke", "cpu_s": 480.0, "rules": {"train": {"jobs": 4, "cpu_s": 480.0}}},
        "paper": {"settings": "paper", "cpu_s": 60.0, "rules": {"train": {"jobs": 1, "cpu_s": 60.0}}},
    }
}


class DryRun:
    """Stands in for Snakemake's dry run and for the config's settings."""

    def __init__(self, returncode=0, stdout="", stderr=JOB_STATS, settings="smoke"):
        self.returncode, self.stdout, self.stderr, self.settings = returncode, stdout, stderr, settings
        self.commands, self.configfiles = [], []

    def run(self, command, **options):
        self.commands.append((command, options))
        return subprocess.CompletedProcess(command, self.returncode, self.stdout, self.stderr)

    def resolve(self, configfiles):
        self.configfiles.append(configfiles)
        if isinstance(self.settings, Exception):
            raise self.settings
        return {"settings": self.settings} if self.settings is not None else {}


@pytest.fixture
def dry_run(monkeypatch):
    dry_run = DryRun()
    monkeypatch.setattr(subprocess, "run", dry_run.run)
    monkeypatch.setattr(variants, "resolve", dry_run.resolve)
    return dry_run


@pytest.fixture
def measured(tmp_path):
    path = tmp_path / "measured.json"
    path.write_text(json.dumps(MEASURED))
    return path


def planned_command(directory, *args):
    return [snakemake_executable(), "--snakefile", str(SNAKEFILE), "--directory", str(directory), *args]


def test_the_dry_run_of_the_targets_with_the_config_files_and_its_cost(tmp_path, dry_run, measured, capsys):
    argv = ["--directory", str(tmp_path), "--configfile", "a.yaml", "--configfile", "b.yaml"]
    assert cost.main([*argv, "--measurements", str(measured), "--", "figures/all", "--cores", "2"]) == 0
    assert dry_run.configfiles == [["a.yaml", "b.yaml"]]
    configs = ["--configfile", "a.yaml", "b.yaml"]
    expected = planned_command(tmp_path, "figures/all", "--cores", "2", *configs, "--dry-run", "--quiet", "rules")
    assert dry_run.commands == [(expected, {"capture_output": True, "text": True})]
    assert capsys.readouterr().out == (
        "    3  train\n"
        "    1  plot\n"
        f"4 jobs, about 6.0 CPU-min from measurements ({measured}, smoke settings); "
        "1 jobs of rules never measured there not counted: plot\n"
    )


def test_the_targets_without_a_separator_and_the_current_tree(tmp_path, dry_run, measured, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    dry_run.settings = None  # a config without settings is the paper's
    assert cost.main(["--measurements", str(measured), "figures/all", "results/x.csv"]) == 0
    assert dry_run.configfiles == [[]]
    expected = planned_command(tmp_path.resolve(), "figures/all", "results/x.csv", "--dry-run", "--quiet", "rules")
    assert dry_run.commands[0][0] == expected
    assert capsys.readouterr().out.endswith(
        f"4 jobs, about 3.0 CPU-min from measurements ({measured}, paper settings); "
        "1 jobs of rules never measured there not counted: plot\n"
    )


def test_the_job_table_is_read_from_both_of_snakemakes_streams(tmp_path, dry_run, measured, capsys):
    """Its standard output need not end its last line."""
    dry_run.stdout, dry_run.stderr = "host: node1", JOB_STATS.partition("\n")[2]
    assert cost.main(["--directory", str(tmp_path), "--measurements", str(measured)]) == 0
    assert capsys.readouterr().out.startswith("    3  train\n    1  plot\n4 jobs")


def test_the_measurements_of_the_project_are_named_by_their_path_in_it(tmp_path, dry_run, capsys):
    assert cost.main(["--directory", str(tmp_path)]) == 0
    costs = cost.per_job_costs(json.loads(cost.MEASUREMENTS.read_text()), "smoke")
    line = cost.cost_line({"train": 3, "plot": 1}, costs, "smoke", "docs/measurements/build_times.json")
    assert capsys.readouterr().out.splitlines()[-1] == line
    assert cost.MEASUREMENTS == PROJECT_ROOT / "docs" / "measurements" / "build_times.json"


def test_without_measurements_every_rule_is_unmeasured(tmp_path, dry_run, capsys):
    absent = tmp_path / "absent.json"
    assert cost.main(["--directory", str(tmp_path), "--measurements", str(absent)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"4 jobs; no measured cost at smoke settings ({absent} has none of their rules): "
        "scripts/benchmarks/build_times.py measures the builds"
    )


def test_a_config_error_is_one_line_and_plans_nothing(tmp_path, dry_run, capsys):
    dry_run.settings = ConfigError("config file c.yaml: no such file")
    assert cost.main(["--directory", str(tmp_path), "--configfile", "c.yaml"]) == 1
    assert capsys.readouterr() == ("", "Invalid config: config file c.yaml: no such file\n")
    assert dry_run.commands == []


def test_snakemakes_error_is_printed_with_its_exit_code(tmp_path, dry_run, capsys):
    dry_run.returncode, dry_run.stdout, dry_run.stderr = 3, "planning\n", "MissingInputException: x.csv\n"
    assert cost.main(["--directory", str(tmp_path), "figures/x"]) == 3
    assert capsys.readouterr() == ("", "planning\nMissingInputException: x.csv\n")


def test_the_help_names_every_option(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # no line wrapped
    text = help_words(cost.main)
    for words in (
        "--directory DIRECTORY the tree the build would run in",
        "--configfile CONFIGFILE config files over config/config.yaml",
        f"--measurements MEASUREMENTS the per-job costs measured (default: {cost.MEASUREMENTS})",
        "snakemake_args targets and options, after --",
    ):
        assert words in text
