"""The parts of the runner of ``make figures`` on their own: Snakemake's output relayed (or held back
after Ctrl-C) and written through at once, which of Snakemake's logs is the run's, the line a stopped
run ends with, what a killed run left behind cleared before the next, and the command line's defaults
and help."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, help_words
from replication import pipeline_run
from replication.pipeline_run import (
    clear_what_a_killed_run_left,
    parse_arguments,
    relay,
    run_log,
    stopped_line,
    take_run_lock,
    write_through,
)
from replication.snakemake_command import SNAKEFILE


def test_bytes_are_written_through_after_what_the_stream_already_held():
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8")
    stream.write("before ")  # held in the text layer until flushed
    write_through(stream, b"caf\xc3\xa9 \xff\n")
    assert raw.getvalue() == b"before caf\xc3\xa9 \xff\n"  # in order, the bytes as they came
    text = io.StringIO()  # a stand-in without a byte layer: decoded, undecodable bytes replaced
    write_through(text, b"caf\xc3\xa9 \xff\n")
    assert text.getvalue() == "caf\u00e9 \ufffd\n"


def test_the_runs_log_is_the_latest_written_since_it_started(tmp_path):
    assert run_log(tmp_path, 1000.0) is None  # no log folder
    logs = tmp_path / ".snakemake" / "log"
    logs.mkdir(parents=True)
    assert run_log(tmp_path, 1000.0) is None  # no log in it

    def log(name: str, written: float) -> Path:
        path = logs / name
        path.write_text("Building DAG of jobs...\n")
        os.utime(path, (written, written))
        return path

    ours = log("2026-01-02T000000.000000.snakemake.log", 999.0)  # a second of clock skew allowed
    log("2026-01-03T000000.000000.snakemake.log", 998.5)  # an earlier run's, though named later
    log("2026-01-04T000000.000000.notes.txt", 1005.0)  # not a Snakemake log
    assert run_log(tmp_path, 1000.0) == ours
    newer = log("2026-01-02T120000.000000.snakemake.log", 1001.0)
    assert run_log(tmp_path, 1000.0) == newer


def test_the_stopped_line_names_the_log_only_where_there_is_one(tmp_path):
    resume = "make figures CONFIG=config/smoke.yaml"
    assert (
        stopped_line(resume, None) == f"Stopped: the finished jobs are kept; run the same command to resume: {resume}"
    )
    log = tmp_path / "run.snakemake.log"
    assert stopped_line(resume, log) == (
        f"Stopped: the finished jobs are kept; run the same command to resume: {resume} "
        f"(Snakemake's log of the run: {log})"
    )
    inside = ROOT / ".snakemake" / "log" / "x.snakemake.log"  # in the checkout: named from its root
    assert stopped_line(resume, inside).endswith("(Snakemake's log of the run: .snakemake/log/x.snakemake.log)")


# Stands in for `snakemake --unlock`: fails unless it holds the run lock (descriptor argv[1]), says
# that it ran on its own standard output, exits with argv[2].
FAKE_UNLOCK = "import os, sys; os.fstat(int(sys.argv[1])); print('unlocked', flush=True); sys.exit(int(sys.argv[2]))"


@pytest.fixture
def unlocks(monkeypatch):
    """The Snakemake commands the runner builds, recorded; each runs FAKE_UNLOCK with ``unlocks.status``."""

    class Recorded(list):
        status = 0
        lock = -1

    calls = Recorded()

    def fake_snakemake(workdir, *arguments, snakefile):
        calls.append((workdir, arguments, snakefile))
        return [sys.executable, "-c", FAKE_UNLOCK, str(calls.lock), str(calls.status)]

    monkeypatch.setattr(pipeline_run, "snakemake_command", fake_snakemake)
    return calls


@contextlib.contextmanager
def stdout_into(fd: int):
    """``sys.stdout`` as it is through a pipe, onto ``fd``: Python holds what is printed back in blocks."""
    buffered = io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8", line_buffering=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdout", buffered)
        yield
    buffered.flush()


def test_a_killed_runs_partial_files_and_snakemake_lock_are_cleared_before_the_run(tmp_path, capfd, unlocks):
    partial = [tmp_path / "results" / ".run.csv.tmp1a2b", tmp_path / "figures" / "l2g" / ".fig1.png.tmpx"]
    kept = [tmp_path / "results" / "run.csv", tmp_path / "logs" / ".job.log.tmp9"]  # finished; not an output
    for path in partial + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
    (tmp_path / ".snakemake" / "locks" / "0.input.lock").write_text("x")
    unlocks.lock = take_run_lock(tmp_path)
    try:
        with stdout_into(1):  # the runner's lines come before the unlock's own output
            clear_what_a_killed_run_left(tmp_path, ["figures/all", "--cores", "2"], Path("wf/Snakefile"), unlocks.lock)
    finally:
        os.close(unlocks.lock)
    assert capfd.readouterr().out.splitlines() == [
        "Removed 2 partial file(s) of writes cut short by a killed run",
        f"Clearing the Snakemake lock left by a run that no longer exists in {tmp_path}",
        "unlocked",
    ]
    assert not any(path.exists() for path in partial) and all(path.exists() for path in kept)
    assert unlocks == [(tmp_path, ("figures/all", "--cores", "2", "--unlock"), Path("wf/Snakefile"))]


def test_the_partial_files_line_comes_before_what_the_run_prints_next(tmp_path, unlocks):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / ".fig1.png.tmpx").write_text("x")
    terminal = tmp_path / "terminal"
    fd = os.open(terminal, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        with stdout_into(fd):
            clear_what_a_killed_run_left(tmp_path, [], SNAKEFILE, -1)
            os.write(fd, b"Building DAG of jobs...\n")  # Snakemake's first line, on the same terminal
    finally:
        os.close(fd)
    assert terminal.read_text().splitlines() == [
        "Removed 1 partial file(s) of writes cut short by a killed run",
        "Building DAG of jobs...",
    ]
    assert unlocks == []  # no Snakemake lock left: nothing to unlock


def test_a_failed_unlock_stops_the_run(tmp_path, unlocks):
    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
    (tmp_path / ".snakemake" / "locks" / "0.input.lock").write_text("x")
    unlocks.lock, unlocks.status = take_run_lock(tmp_path), 1
    try:
        with pytest.raises(subprocess.CalledProcessError):
            clear_what_a_killed_run_left(tmp_path, [], SNAKEFILE, unlocks.lock)
    finally:
        os.close(unlocks.lock)


def test_nothing_left_behind_nothing_said_or_run(tmp_path, capsys, unlocks):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "run.csv").write_text("x")
    clear_what_a_killed_run_left(tmp_path, [], SNAKEFILE, -1)
    assert capsys.readouterr().out == "" and unlocks == []


def test_the_command_line_runs_here_with_the_projects_workflow_by_default():
    args = parse_arguments([])
    assert (args.directory, args.snakefile, args.make_goal, args.resume_command) == (".", str(SNAKEFILE), None, None)
    assert parse_arguments(["--", "figures/all", "--cores", "2"]).snakemake_args == [
        "--",
        "figures/all",
        "--cores",
        "2",
    ]
    shown = help_words(parse_arguments)
    assert shown.startswith("usage: python -m replication.pipeline_run [-h] [--directory DIRECTORY]")
    assert "Run Snakemake so that a stopped run resumes with the same command" in shown
    for text in (
        "snakemake_args targets and options for Snakemake, after --",
        "--directory DIRECTORY the working folder of the run (default: here)",
        "--snakefile SNAKEFILE the workflow (default: the project's)",
        "--make-goal MAKE_GOAL run by `make GOAL`: a Ctrl-C names the make command that resumes and exits 0 "
        "(make ends with 130)",
        "--resume-command RESUME_COMMAND the command a Ctrl-C names as the one that resumes the run",
    ):
        assert text in shown, text


def started(script: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_once_interrupted_everything_is_held_back(capfd):
    child = started("import sys; print('a'); print('b', file=sys.stderr)")
    with child:
        held, open_line = relay(child, [True])
    assert sorted(held.splitlines()) == [b"a", b"b"] and open_line is False
    assert capfd.readouterr() == ("", "")


def test_output_is_relayed_in_full_and_a_cut_line_is_known(capfd, monkeypatch):
    monkeypatch.setattr(pipeline_run, "DRAIN_S", 0.0)  # no wait for leftovers: the pipes' own ends stop it
    for script, cut in (("print('one'); print('two')", False), ("print('one'); print('tw', end='')", True)):
        child = started(script)
        with child:
            child.wait()  # ended before its output is read: all of it is still relayed
            assert relay(child, []) == (b"", cut)
        assert capfd.readouterr().out == ("one\ntw" if cut else "one\ntwo\n")


def test_a_run_silent_for_a_while_is_waited_for(capfd, monkeypatch):
    monkeypatch.setattr(pipeline_run, "DRAIN_S", 0.0)
    child = started("import time; time.sleep(0.6); print('late')")  # quiet longer than one wait for output
    with child:
        assert relay(child, []) == (b"", False)
    assert capfd.readouterr().out == "late\n"


@pytest.mark.timeout(30)
def test_a_process_left_behind_holding_the_output_is_not_waited_for(capfd, monkeypatch):
    monkeypatch.setattr(pipeline_run, "DRAIN_S", 0.1)
    child = started(
        "import subprocess, sys; "
        "left = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); print(left.pid)"
    )
    with child:
        held, open_line = relay(child, [])
    leftover = int(capfd.readouterr().out)
    os.kill(leftover, signal.SIGKILL)
    assert (held, open_line) == (b"", False)
