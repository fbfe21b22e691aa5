"""docs/add-a-figure.md's worked example, applied as written to a copy of the checkout: the new
figure of the `landscape` part is declared, captioned, built by the part's rule and listed in the
README's table, and the example writes nothing outside the part's folder but that README row."""

import os
import re
import subprocess
import sys

import pandas as pd
import pytest

from helpers import ROOT, SNAKEMAKE_TIMEOUT_S, tracked_copy
from replication.snakemake_command import snakemake_command

pytestmark = pytest.mark.pipeline  # builds the figure with Snakemake

PAGE = ROOT / "docs" / "add-a-figure.md"
PART = "src/replication/papers/local_to_global/landscape"
EXAMPLE = re.compile(
    r"<!-- example: (?P<path>\S+)(?: (?P<how>after|append):?(?P<anchor>[^\n]*?))? -->\n```\w*\n(?P<text>.*?)```", re.S
)
FIGURE = "figures/local_to_global/basin_grid.pdf"


def examples(text: str) -> list[dict]:
    """The page's blocks: the file each goes to (in the part, or the checkout's README.md), and how
    (a new file; ``append``; ``after`` the line that starts with the anchor)."""
    found = [match.groupdict() for match in EXAMPLE.finditer(text)]
    for example in found:
        example["path"] = (
            example["path"] if example["path"] == "README.md" else f"{PART}/{example['path'].split('/', 1)[1]}"
        )
    return found


def apply(repo, example: dict) -> None:
    path = repo / example["path"]
    if example["how"] is None:
        assert not path.exists(), example["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(example["text"])
    elif example["how"] == "append":
        path.write_text(path.read_text() + example["text"])
    else:
        lines = path.read_text().splitlines(keepends=True)
        at = [i for i, line in enumerate(lines) if line.strip().startswith(example["anchor"].strip())]
        assert len(at) == 1, (example["path"], example["anchor"])
        lines.insert(at[0] + 1, example["text"])
        path.write_text("".join(lines))


def test_the_example_touches_the_part_and_the_readme_only():
    touched = {example["path"] for example in examples(PAGE.read_text())}
    assert len(touched) == 5 and {path for path in touched if not path.startswith(f"{PART}/")} == {"README.md"}


@pytest.fixture(scope="module")
def example_checkout(tmp_path_factory):
    repo = tracked_copy(tmp_path_factory.mktemp("repo"))
    for example in examples(PAGE.read_text()):
        apply(repo, example)
    return repo


def in_copy(repo, *command, timeout=SNAKEMAKE_TIMEOUT_S):
    environment = {**os.environ, "PYTHONPATH": str(repo / "src")}
    return subprocess.run(command, cwd=repo, env=environment, capture_output=True, text=True, timeout=timeout)


def test_the_paper_gathers_the_new_figure_and_the_readme_lists_it(example_checkout):
    repo = example_checkout
    done = in_copy(
        repo, sys.executable, "-c",
        "from replication.papers.local_to_global import PAPER\n"
        "figure = PAPER.figure('basin_grid')\n"
        "print(figure.manifest, PAPER.caption_path(figure).relative_to(PAPER.package_dir), figure.figure)",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "all landscape/report/basin_grid.rst Basin grid agreement (beyond the paper)"
    readme = in_copy(repo, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/core/test_readme.py",
                     "-k", "table_is_the_registry", "--override-ini", "addopts=")  # fmt: skip
    assert readme.returncode == 0, readme.stdout[-3000:]


def test_the_parts_rule_builds_it(example_checkout, tmp_path):
    repo = example_checkout
    command = snakemake_command(tmp_path, FIGURE, snakefile=repo / "workflow" / "Snakefile")
    done = in_copy(repo, *command, "--configfile", str(repo / "config" / "smoke.yaml"), "--cores", "2")
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    assert "l2g_basin_grid_figure" in done.stdout + done.stderr
    data = pd.read_csv(tmp_path / FIGURE.replace(".pdf", ".csv"))
    grid = pd.read_csv(tmp_path / "results" / "local_to_global" / "basin_grid.csv")
    assert len(data) == len(grid) and (data.share == grid.agreeing / grid.n_starts).all()
    assert (tmp_path / FIGURE).stat().st_size > 0 and (tmp_path / FIGURE.replace(".pdf", ".png")).stat().st_size > 0
