"""What packaging leaves in the checkout (`pip wheel .`: build/) is ignored by git and by the linter."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUFF = Path(sys.executable).with_name("ruff")
BAD = "import os,sys\nx=1;  y =2\n"


def ruff_findings(path: str) -> str:
    """ruff's findings on ``BAD`` as if it were the file ``path`` of the checkout (none when excluded)."""
    done = subprocess.run(
        [RUFF, "check", "--force-exclude", "--stdin-filename", path, "-"],
        input=BAD, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    return done.stdout


def test_build_is_ignored_by_git():
    ignored = subprocess.run(["git", "check-ignore", "-q", "build/lib/replication/claims.py"], cwd=ROOT)
    assert ignored.returncode == 0


def test_build_is_not_linted_and_the_sources_are():
    assert "F401" not in ruff_findings("build/lib/replication/claims.py")
    assert "F401" in ruff_findings("src/replication/claims.py")  # the check sees the same text in the sources
