"""A part may declare how the cost of its run is measured once its manifest is blessed
(``contract.Part.run_cost``); ``make bless-manifest`` runs it through ``replication.run_cost``, which
names no part: a part with a declaration gets its benchmark run on the blessed run, a part without
one is left as blessed, and a manifest no paper registers is one error naming the registered ones."""

import importlib.util
import io
import re
import sys

import pytest

from helpers import ROOT
from replication import registry, run_cost
from replication.contract import Figure, Paper, Part, RunCost
from replication.diff import bless
from replication.paths import PROJECT_ROOT


def measured_arguments(run):
    return ("--directory", str(run), *(["--time", str(run / "time.txt")] if (run / "time.txt").exists() else []))


MEASURED = Part(
    "measured",
    figures=(Figure("figures/fake/measured.pdf", "Measured", "measured.rst"),),
    manifest="heavy",
    run_cost=RunCost("fake.measured.cost", "heavy_cost.md", measured_arguments),
)
QUIET = Part("quiet", figures=(Figure("figures/fake/quiet.pdf", "Quiet", "quiet.rst"),), manifest="light")
FAKE = Paper("fake", "Fake", "A fake paper", "2501.00001", (), (), parts=(MEASURED, QUIET))


class Recorder:
    """Stands in for subprocess.run: records each command and how it was run."""

    def __init__(self):
        self.calls = []

    def __call__(self, command, **options):
        self.calls.append((command, options))


@pytest.fixture
def fake_registry(monkeypatch):
    monkeypatch.setattr(registry, "papers", lambda: (FAKE,))


def test_a_declared_measurement_runs_on_the_blessed_run(fake_registry, tmp_path):
    (tmp_path / "time.txt").write_text("")
    runner = Recorder()
    commands = run_cost.measure_run("heavy", tmp_path, run=runner, python="python3")
    expected = [
        "python3",
        "-m",
        "fake.measured.cost",
        "--directory",
        str(tmp_path.resolve()),
        "--time",
        str(tmp_path.resolve() / "time.txt"),
        "--write",
        "docs/measurements/heavy_cost.md",
    ]
    assert commands == [expected]
    assert runner.calls == [(expected, {"check": True, "cwd": PROJECT_ROOT})]


def test_each_command_line_is_in_the_log_before_its_command_runs(fake_registry, tmp_path, monkeypatch):
    """In a log (a pipe: Python buffers whole blocks) the command line goes out before the command
    writes there."""
    log = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(log, encoding="utf-8", write_through=False))
    seen = []

    def runner(command, **options):
        seen.append(log.getvalue().decode())

    (command,) = run_cost.measure_run("heavy", tmp_path, run=runner, python="python3")
    monkeypatch.undo()
    assert seen == [f"python3 -m fake.measured.cost --directory {tmp_path.resolve()} --write {command[-1]}\n"]


def test_the_run_folder_is_given_absolute_so_the_report_writes_it_as_dir(fake_registry, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path.parent)
    runner = Recorder()
    run_cost.measure_run("heavy", tmp_path.name, run=runner, python="python3")
    ((command, _),) = runner.calls
    assert command[command.index("--directory") + 1] == str(tmp_path.resolve())


def test_a_part_without_a_measurement_is_left_as_blessed(fake_registry, tmp_path, capsys):
    runner = Recorder()
    assert run_cost.measure_run("light", tmp_path, run=runner) == []
    assert run_cost.measure_run("all", tmp_path, run=runner) == []
    assert runner.calls == []
    assert run_cost.main(["light", str(tmp_path)]) == 0
    assert "declare no measurement" in capsys.readouterr().out


def test_an_unknown_manifest_is_one_error_naming_the_registered_ones(fake_registry, tmp_path, capsys):
    with pytest.raises(ValueError, match=r"^manifest 'hevy' is not registered; allowed: all, heavy, light$"):
        run_cost.declared_costs("hevy")
    runner = Recorder()
    with pytest.raises(ValueError, match="allowed: all, heavy, light"):
        run_cost.measure_run("hevy", tmp_path, run=runner)
    assert runner.calls == []
    for main in (lambda: run_cost.main(["hevy", str(tmp_path)]), lambda: bless.main(["--manifest", "hevy", "a", "b"])):
        with pytest.raises(SystemExit) as stop:
            main()
        error = capsys.readouterr().err
        assert stop.value.code == 2 and "'hevy' is not registered; allowed: all, heavy, light" in error


def test_a_missing_run_folder_runs_nothing(fake_registry, tmp_path):
    runner = Recorder()
    with pytest.raises(FileNotFoundError, match="no such run folder"):
        run_cost.measure_run("heavy", tmp_path / "absent", run=runner)
    assert runner.calls == []


def test_the_declared_measurements_name_modules_that_exist_and_reports_the_docs_include():
    declared = [part.run_cost for paper in registry.papers() for part in paper.parts if part.run_cost]
    assert declared  # the papers' heavy parts measure their runs
    pages = "".join(path.read_text() for path in (ROOT / "docs").glob("*.md"))
    for cost in declared:
        assert importlib.util.find_spec(cost.module) is not None, cost.module
        assert f'--8<-- "docs/measurements/{cost.report}"' in pages, cost.report


def test_the_bless_goal_runs_the_generic_measurement():
    recipe = re.search(r"^bless-manifest:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert "-m replication.diff.bless --manifest $(MANIFEST) $(RUN_DIR)" in recipe
    assert "-m replication.run_cost $(MANIFEST) $(RUN_DIR)" in recipe


def test_the_help_says_what_it_measures_and_names_its_arguments(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # no line wrapped
    with pytest.raises(SystemExit) as stop:
        run_cost.main(["--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: python -m replication.run_cost [-h] manifest run_dir\n")
    assert "\nMeasure the cost of a blessed run, as the parts of its manifest declare.\n" in text
    assert "  manifest    the manifest blessed (figures/<manifest>)\n" in text
    assert "  run_dir     the tree of the finished run it was blessed from\n" in text
