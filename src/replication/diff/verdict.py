"""``make diff``'s verdict in the terminal: the check of the diff (``scripts/figures_diff_check.py``)
writes it in one line beside the report (``figures/diff/verdict.txt``); after the run, ``python -m
replication.diff.verdict`` prints it, or that the run stopped before the comparison."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd

from ..command_line import command_parser

VERDICT_FILE = "verdict.txt"  # beside the report: the line `make diff` prints


def verdict_line(verdicts: pd.DataFrame, reference: str, report: str) -> str:
    """``make diff``'s verdict in one line: how many figures differ from the reference set, which,
    by how much, and where the report is."""
    failed = verdicts[~verdicts.passed]
    if failed.empty:
        return f"make diff: all {len(verdicts)} figures within tolerance of {reference}; report: {report}"
    named = ", ".join(
        f"{row.key} ({row.status}" + (f", {row.worst} at {row.margin:.3g} x tolerance)" if row.worst else ")")
        for row in failed.itertuples()
    )
    return f"make diff: {len(failed)} of {len(verdicts)} figures differ from {reference}: {named}; report: {report}"


def print_verdict(diff_dir: str | os.PathLike, since: float, status: int) -> int:
    """What ``make diff`` prints after its run: the verdict its check wrote, when it belongs to this
    run (written during it, or the run succeeded: the check is up to date); else that the run stopped
    before the comparison. Returns ``status``, the run's exit status."""
    verdict = Path(diff_dir) / VERDICT_FILE
    current = verdict.is_file() and (status == 0 or verdict.stat().st_mtime >= since)
    if current:
        print(verdict.read_text().strip())
    else:
        print("make diff: no verdict: the run stopped before the comparison (its error is above)")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__spec__, __doc__)
    parser.add_argument("diff_dir", help="the tree's figures/diff")
    parser.add_argument("--since", type=float, required=True, help="when the run started (seconds since the epoch)")
    parser.add_argument("--status", type=int, required=True, help="the run's exit status")
    arguments = parser.parse_args(argv)
    return print_verdict(arguments.diff_dir, arguments.since, arguments.status)


if __name__ == "__main__":
    sys.exit(main())
