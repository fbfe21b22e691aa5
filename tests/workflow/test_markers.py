"""The suite's guard on the pipeline marker: a test not marked pipeline cannot start Snakemake."""

import subprocess
import sys

import pytest

from helpers import ROOT, SNAKEMAKE, starts_the_pipeline


def test_an_unmarked_test_cannot_start_snakemake():
    with pytest.raises(AssertionError, match="not marked pipeline"):
        subprocess.run([str(SNAKEMAKE), "--version"], capture_output=True)
    with pytest.raises(AssertionError, match="not marked pipeline"):
        subprocess.Popen(["make", "-C", str(ROOT), "figures"])
    # Other commands run as usual.
    assert subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True, text=True).stdout == "1\n"


@pytest.mark.pipeline
def test_a_marked_test_may():
    result = subprocess.run([str(SNAKEMAKE), "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("9.")


@pytest.mark.parametrize(
    ("argv", "runs"),
    [
        ([str(SNAKEMAKE), "figures/all"], True),
        ([sys.executable, "-m", "snakemake", "-n"], True),
        ([sys.executable, "-m", "replication.pipeline_run", "--directory", "."], True),
        (["make", "--no-print-directory", "-C", str(ROOT), "figures"], True),
        (str(SNAKEMAKE), True),
        (["/tmp/bin/snakemake", "60"], False),  # a stand-in named like Snakemake (tests/core/test_pipeline_run.py)
        (["make", "-C", "/elsewhere"], False),
        ([sys.executable, "-m", "pytest"], False),
        ([], False),
    ],
)
def test_which_commands_start_the_pipeline(argv, runs):
    assert starts_the_pipeline(argv) is runs
