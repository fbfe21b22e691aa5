"""Every `python -m` command of the library introduces itself: `--help` names the command a user types,
says in whole sentences what it does, and explains every argument."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import re
import sys

import pytest

from helpers import ROOT
from replication.command_line import command_description

SOURCES = ROOT / "src"


def command_modules() -> list[str]:
    """The library's modules that build a command line (command_line.py only defines the shared one)."""
    builds = ("ArgumentParser(", "command_parser(__spec__")
    paths = [
        path
        for path in (SOURCES / "replication").rglob("*.py")
        if path.name != "command_line.py" and any(call in path.read_text() for call in builds)
    ]
    return sorted(".".join(path.relative_to(SOURCES).with_suffix("").parts) for path in paths)


class Parsed(Exception):
    """Raised instead of parsing: the command's parser is all the test needs."""


def command_parser(module_name: str, monkeypatch) -> argparse.ArgumentParser:
    """The parser the module's command builds (its `main`, or `parser` where that builds it)."""
    module = importlib.import_module(module_name)
    seen = []

    def capture(parser, args=None, namespace=None):
        seen.append(parser)
        raise Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    monkeypatch.setattr(sys, "argv", [module_name])
    if hasattr(module, "main"):
        with pytest.raises(Parsed):
            module.main(*([[]] if inspect.signature(module.main).parameters else []))
        return seen[0]
    return module.parser()


def test_the_commands_are_found():
    modules = command_modules()
    assert {"replication.pipeline_run", "replication.diff.verdict", "replication.run_cost"} <= set(modules)
    assert "replication.papers.local_to_global.transformer.step_cost" in modules


@pytest.mark.parametrize("module_name", command_modules())
def test_help_names_the_command_says_what_it_does_and_explains_every_argument(module_name, monkeypatch):
    parser = command_parser(module_name, monkeypatch)
    command = re.fullmatch(r"python -m (replication(?:\.\w+)+)", parser.prog or "")
    assert command, f"{module_name}: usage names {parser.prog!r}, not the command to type"
    runs = command.group(1)
    spec = importlib.util.find_spec(runs)
    assert spec is not None, f"{module_name}: {runs} is not a module"
    runner = runs if spec.submodule_search_locations is None else f"{runs}.__main__"
    assert runner == module_name or importlib.util.find_spec(runner) is not None, f"{runs} does not run {module_name}"
    description = parser.description or ""
    assert description.endswith(".") and "``" not in description, f"{module_name}: {description!r}"
    assert len(description.split()) >= 5, f"{module_name}: {description!r}"
    for action in parser._actions:
        if not isinstance(action, argparse._HelpAction):
            assert action.help and action.help.strip(), f"{module_name}: {action.dest} has no help"


def test_a_description_is_the_first_paragraph_on_one_line_without_markup():
    doc = """``make diff``'s verdict: the check writes it
    in one line.

    More detail that --help leaves out.
    """
    assert command_description(doc) == "make diff's verdict: the check writes it in one line."
    assert command_description("One line.") == "One line."


def test_the_verdict_needs_the_start_time_and_the_exit_status(capsys):
    from replication.diff import verdict

    with pytest.raises(SystemExit) as stopped:
        verdict.main(["figures/diff"])
    assert stopped.value.code == 2
    assert "--since" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        verdict.main(["figures/diff", "--since", "0"])
    assert "--status" in capsys.readouterr().err


def test_make_figures_runs_the_projects_workflow_here_unless_told_otherwise():
    from replication.paths import PROJECT_ROOT
    from replication.pipeline_run import parse_arguments, snakemake_arguments

    args = parse_arguments(["--", "figures/all", "--cores", "2"])
    assert args.directory == "." and args.make_goal is None and args.resume_command is None
    assert args.snakefile == str(PROJECT_ROOT / "workflow" / "Snakefile")
    assert snakemake_arguments(args) == ["figures/all", "--cores", "2"]
    args = parse_arguments(["--directory", "tree", "--make-goal", "figures", "--resume-command", "make figures"])
    assert (args.directory, args.make_goal, args.resume_command) == ("tree", "figures", "make figures")
