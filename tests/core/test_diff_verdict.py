"""``python -m replication.diff.verdict``, what ``make diff`` runs after its run: its help, its
arguments as given on the command line, and the verdict line of figures with and without a worst
quantity."""

import os

import pandas as pd
import pytest

from helpers import help_words
from replication.diff.verdict import VERDICT_FILE, main, verdict_line

STOPPED = "make diff: no verdict: the run stopped before the comparison (its error is above)"


def test_help_names_the_command_and_explains_its_arguments():
    text = help_words(main)
    assert text.startswith("usage: python -m replication.diff.verdict [-h] --since SINCE --status STATUS diff_dir")
    assert "make diff's verdict in the terminal: the check of the diff" in text
    assert "diff_dir the tree's figures/diff" in text
    assert "--since SINCE when the run started (seconds since the epoch)" in text
    assert "--status STATUS the run's exit status" in text


@pytest.mark.parametrize("missing", ["--since", "--status"])
def test_both_options_are_required(tmp_path, missing, capsys):
    given = {"--since": "0", "--status": "0"}
    del given[missing]
    with pytest.raises(SystemExit) as stopped:
        main([str(tmp_path), *[word for option in given.items() for word in option]])
    assert stopped.value.code == 2
    assert f"the following arguments are required: {missing}" in capsys.readouterr().err


def test_a_failed_run_prints_the_verdict_its_check_wrote_after_it_started(tmp_path, capsys):
    verdict = tmp_path / VERDICT_FILE
    verdict.write_text("make diff: 1 of 2 figures differ\n")
    os.utime(verdict, (1_000.5, 1_000.5))
    # The start time as the shell gives it (a decimal string): half a second before the verdict.
    assert main([str(tmp_path), "--since", "1000.0", "--status", "2"]) == 2
    assert main([str(tmp_path), "--since", "1001.0", "--status", "2"]) == 2
    assert capsys.readouterr().out.splitlines() == ["make diff: 1 of 2 figures differ", STOPPED]


def test_a_figure_without_a_worst_quantity_is_named_with_its_status_only():
    verdicts = pd.DataFrame(
        {
            "key": ["p/a", "p/b"],
            "status": ["missing figure", "fail"],
            "passed": [False, False],
            "margin": [float("nan"), 12.3456],
            "worst": ["", "y"],
        }
    )
    assert verdict_line(verdicts, "ref", "report.html") == (
        "make diff: 2 of 2 figures differ from ref: p/a (missing figure), p/b (fail, y at 12.3 x tolerance); "
        "report: report.html"
    )
