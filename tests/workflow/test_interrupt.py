"""Ctrl-C in a smoke build typed in a fresh clone: the run stops, keeps the jobs it finished and ends
with one line, free of tracebacks, naming the command that resumes it (replication.pipeline_run)."""

import os
import re
import signal
import time

import pytest

from helpers import finished_outputs, make_in, make_recipe, snapshot, tracked_copy

pytestmark = pytest.mark.pipeline

SMOKE_BUILD = ["figures", "CONFIG=config/smoke.yaml", "CORES=2"]


def default_interrupt() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_ends_with_one_line_that_names_the_command_to_resume(tmp_path):
    clone = tracked_copy(tmp_path / "clone")
    tree = clone / "variants" / "smoke"
    # Typed at a terminal: its own process group, SIGINT not ignored (a suite run in the background
    # of a shell inherits SIGINT ignored, and make and its children would keep that).
    build = make_in(clone, *SMOKE_BUILD, start_new_session=True, preexec_fn=default_interrupt)
    deadline = time.monotonic() + 900
    while build.poll() is None and not finished_outputs(tree):  # until a first job has finished
        assert time.monotonic() < deadline, "no job finished"
        time.sleep(0.2)
    assert build.poll() is None, "the build ended before it could be stopped:\n" + build.stdout.read()[-3000:]
    finished = {name: state for name, state in snapshot(tree).items() if name in finished_outputs(tree)}
    os.killpg(build.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole foreground process group
    output, _ = build.communicate(timeout=600)
    assert build.returncode == -signal.SIGINT, output[-3000:]  # make died of the Ctrl-C: 130 in a shell
    last = output.rstrip("\n").splitlines()[-1]
    resume = "make figures CONFIG=config/smoke.yaml CORES=2"
    match = re.fullmatch(
        rf"Stopped: the finished jobs are kept; run the same command to resume: {re.escape(resume)} "
        r"\(Snakemake's log of the run: (variants/smoke/\.snakemake/log/\S+\.snakemake\.log)\)",
        last,
    )
    assert match, last
    for noise in ("Traceback", "KeyboardInterrupt", "Error in rule", "WorkflowError", "Logfile", "make: ***"):
        assert noise not in output, f"{noise!r} in the output:\n{output[-3000:]}"
    # What Snakemake printed after Ctrl-C is in its log, for whoever wants it.
    assert "Terminating processes on user request" in (clone / match.group(1)).read_text()
    # The jobs that had finished are kept as they were.
    assert finished and all(snapshot(tree).get(name) == state for name, state in finished.items())
    # The line's command is the one typed: make expands both to the same commands.
    assert make_recipe(clone, *resume.split()[1:]) == make_recipe(clone, *SMOKE_BUILD)
