"""A third paper joins the pipeline by adding its folder: the paper contract, and nothing else.

The example paper (tests/plugin_paper/: y = exp(-k t), one figure, two claims) is copied into a
copy of the checkout as src/replication/papers/exponential_decay/. The smoke run's outputs are
reused, so only the example paper's jobs and the manifest, claims report and diff run again.
"""

import math
import os
import shutil
import subprocess

import pandas as pd
import pytest

from helpers import ROOT, SNAKEMAKE_TIMEOUT_S, markdown_cells, shared_tree, tracked_copy
from replication.snakemake_command import snakemake_command

# Every test here runs Snakemake (or asks for a fixture that does).
pytestmark = pytest.mark.pipeline

PAPER_ID = "exponential_decay"
FIXTURE = ROOT / "tests" / "plugin_paper"


def run_copy(repo, workdir, target):
    """Snakemake from the copy, with the copy's package first on the path (not the installed checkout).
    Outputs are out of date by time only: the copy's code lives elsewhere, which the code and params
    triggers would count as a change of every rule."""
    command = snakemake_command(workdir, target, snakefile=repo / "workflow" / "Snakefile")
    environment = {**os.environ, "PYTHONPATH": str(repo / "src")}
    result = subprocess.run(
        [*command, "--rerun-triggers", "mtime", "--configfile", str(repo / "config" / "smoke.yaml"), "--cores", "2"],
        cwd=repo,
        env=environment,
        capture_output=True,
        text=True,
        timeout=SNAKEMAKE_TIMEOUT_S,
    )
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def plugin_run(smoke_run, tmp_path_factory):
    return shared_tree(tmp_path_factory, "plugin_paper", lambda folder: build_plugin_run(smoke_run, folder))


def build_plugin_run(smoke_run, folder):
    """A copy of the checkout with the plug-in paper added, built over the smoke run's outputs."""
    repo, workdir = folder / "repo", folder / "work"
    repo.mkdir()
    tracked_copy(repo)
    shutil.copytree(FIXTURE, repo / "src" / "replication" / "papers" / PAPER_ID)
    # The smoke run's outputs, times kept, without the manifest, claims report and diff, which the
    # new paper's outputs feed: those and the new paper's jobs are what runs.
    for folder in ("results", "figures", "logs"):
        shutil.copytree(smoke_run / folder, workdir / folder, symlinks=True)
    shutil.rmtree(workdir / "figures" / "diff", ignore_errors=True)
    for path in ("figures/all", "figures/provenance.json", "figures/claims.md", "results/claims.csv"):
        (workdir / path).unlink()
    log = run_copy(repo, workdir, "figures/all")
    return repo, workdir, log


def test_plugin_paper_builds_with_figures_all(plugin_run):
    repo, workdir, log = plugin_run
    # Its rules ran, the other papers' compute rules did not.
    assert "decay_fig1" in log and "decay_claims" in log
    assert "l2g_transformer" not in log and "bo_grid_shard" not in log
    manifest = pd.read_csv(workdir / "figures" / "all", sep="\t")
    row = manifest.set_index("path").loc[f"figures/{PAPER_ID}/fig1.pdf"]
    assert row.paper == "Exponential decay" and row.figure == "Fig. 1"
    data = pd.read_csv(workdir / "figures" / PAPER_ID / "fig1.csv")
    assert (
        len(data) == 21 and data.y.iloc[0] == 1.0 and data.y.iloc[-1] == pytest.approx(math.exp(-4.0), rel=1e-9)
    )  # 21 points: its smoke.yaml over the schema's 41; 10 digits in the CSV
    # The other papers' figures are all still listed.
    assert manifest.paper.value_counts().to_dict().keys() >= {"Local to Global", "Benign overfitting"}


def test_plugin_paper_claims_in_the_report(plugin_run):
    repo, workdir, log = plugin_run
    claims = pd.read_csv(workdir / "results" / "claims.csv", dtype={"claim_id": str})
    ours = claims[claims.paper == "Exponential decay"].set_index("claim_id")
    assert list(ours.index) == ["ED-1", "ED-2"]
    assert ours.loc["ED-1", "holds"] and ours.loc["ED-1", "measured"] == pytest.approx(0.34657359, abs=1e-6)
    assert not ours.loc["ED-2", "holds"] and ours.loc["ED-2", "measured"] == pytest.approx(0.1353, abs=1e-3)
    report = (workdir / "figures" / "claims.md").read_text()
    assert "## Exponential decay" in report
    table = report.split("## Exponential decay")[1].split("\n## ")[0]
    assert [markdown_cells(line)[2] for line in table.splitlines() if line.startswith("| ED-")] == [
        "holds",
        "**fails**",
    ]
    # The papers of the checkout come first, the example (latest arXiv id) last.
    assert list(claims.paper.unique()) == ["Local to Global", "Benign overfitting", "Exponential decay"]


def test_plugin_paper_figure_in_the_diff(plugin_run):
    repo, workdir, log = plugin_run
    # A reference for the new figure, blessed in the copy from this run (as `make bless` would).
    reference = repo / "figures" / "reference" / "smoke" / PAPER_ID
    reference.mkdir(parents=True)
    for suffix in ("png", "csv"):
        shutil.copy2(workdir / "figures" / PAPER_ID / f"fig1.{suffix}", reference / f"fig1.{suffix}")
    run_copy(repo, workdir, "figures/diff/passed")
    summary = pd.read_csv(workdir / "figures" / "diff" / "summary.csv")
    ours = summary[summary.key == f"{PAPER_ID}/fig1"]
    assert set(ours.quantity) >= {"image rms", "t", "y"}
    assert ours.passed.all() and (ours.paper == "Exponential decay").all()
