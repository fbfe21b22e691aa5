"""The shared command-line helpers (replication.command_line): the config files a Snakemake command
line names, the one-line error for those that do not exist, and a ``python -m`` command's parser."""

import types

import pytest

from replication.command_line import (
    command_description,
    command_parser,
    configfiles,
    exit_if_configfiles_are_missing,
    missing_configfiles,
)


def test_a_config_file_value_keeps_an_equals_sign_of_its_own():
    assert configfiles(["--configfile=runs/a=1.yaml", "b.yaml"]) == ["runs/a=1.yaml"]
    assert configfiles(["--configfiles", "x=1.yaml", "--cores=2", "figures/all"]) == ["x=1.yaml"]


def test_only_the_missing_config_files_are_reported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "present.yaml").write_text("")
    (tmp_path / "folder.yaml").mkdir()  # a folder is no config file
    argv = ["--configfile", "present.yaml", "absent.yaml", "folder.yaml", "--cores", "1"]
    assert missing_configfiles(argv) == ["absent.yaml", "folder.yaml"]
    assert missing_configfiles(["--configfile", "present.yaml"]) == []


def test_missing_config_files_stop_the_command_with_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        exit_if_configfiles_are_missing(["figures/all", "--configfile", "a.yaml", "b.yaml"])
    assert stopped.value.code == (
        f"Error: config file not found: a.yaml, b.yaml (given with --configfile, read from {tmp_path})"
    )


def test_without_arguments_the_check_reads_the_programs_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "present.yaml").write_text("")
    monkeypatch.setattr("sys.argv", ["snakemake", "--configfile", "gone.yaml"])
    with pytest.raises(SystemExit) as stopped:
        exit_if_configfiles_are_missing()
    assert "config file not found: gone.yaml (" in stopped.value.code
    monkeypatch.setattr("sys.argv", ["snakemake", "--configfile", "present.yaml"])
    assert exit_if_configfiles_are_missing() is None
    # Given arguments are checked instead of the program's own.
    assert exit_if_configfiles_are_missing(["--configfile", "present.yaml"]) is None
    monkeypatch.setattr("sys.argv", ["snakemake", "--configfile", "present.yaml"])
    with pytest.raises(SystemExit):
        exit_if_configfiles_are_missing(["--configfile", "gone.yaml"])


def test_the_description_is_only_the_first_of_several_paragraphs():
    doc = "First paragraph\n  on two lines.\n\nSecond.\n\nThird."
    assert command_description(doc) == "First paragraph on two lines."


def test_a_command_parser_names_the_module_to_run_and_describes_it():
    parser = command_parser(types.SimpleNamespace(name="replication.demo"), "Runs the ``demo``.\n\nDetails.")
    assert parser.prog == "python -m replication.demo"
    assert parser.description == "Runs the demo."
    assert parser.format_usage().startswith("usage: python -m replication.demo")
