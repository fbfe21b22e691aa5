"""The commands a newcomer types, as written: `snakemake <target>` with no flags (the workflow's
default profile), a mistyped config file, and the rule graph without Graphviz."""

import os
import subprocess

import pandas as pd
import pytest

from helpers import ROOT, SNAKEMAKE, SNAKEMAKE_TIMEOUT_S, tracked_copy

pytestmark = pytest.mark.pipeline

PROFILE_NOTE = "Using workflow specific profile"
SMALL_TARGET = "figures/local_to_global/fig1.pdf"  # the canonical model's flows: seconds at smoke settings


@pytest.fixture(scope="module")
def fresh_copy(tmp_path_factory):
    """What a fresh clone holds, with its own package first on the path."""
    return tracked_copy(tmp_path_factory.mktemp("clone"))


def snakemake_in(repo, *args):
    """`snakemake ARGS` typed in ``repo``: no --snakefile, no --cores, no --profile."""
    return subprocess.run(
        [str(SNAKEMAKE), *args],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo / "src")},
        capture_output=True,
        text=True,
        timeout=SNAKEMAKE_TIMEOUT_S,
    )


def test_snakemake_with_no_flags_builds_from_a_fresh_clone(fresh_copy):
    # The smoke settings have their own tree (the project root holds the paper's settings only).
    result = snakemake_in(
        fresh_copy, SMALL_TARGET, "--directory", "variants/smoke", "--configfile", "config/smoke.yaml"
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-5000:]
    assert f"{PROFILE_NOTE} workflow/profiles/default" in log
    assert "cores have to be specified" not in log
    # The profile's settings took effect: every core, shell commands printed.
    assert f"Provided cores: {os.cpu_count()}" in log
    # The figure, and the data it plotted equal to the committed smoke reference within the
    # figure diff's data tolerance (config/config.yaml diff.data: atol 1e-9, rtol 1e-6).
    figure = fresh_copy / "variants" / "smoke" / SMALL_TARGET
    assert figure.stat().st_size > 0 and figure.with_suffix(".png").stat().st_size > 0
    data = pd.read_csv(figure.with_suffix(".csv"))
    reference = pd.read_csv(ROOT / "figures" / "reference" / "smoke" / "local_to_global" / "fig1.csv")
    assert set(data.panel) == {"a", "b", "c", "d"} and len(data) > 1000
    pd.testing.assert_frame_equal(data, reference, check_exact=False, rtol=1e-6, atol=1e-9)


def test_a_mistyped_config_file_is_one_line_naming_it(tmp_path):
    result = snakemake_in(ROOT, SMALL_TARGET, "--directory", str(tmp_path), "--configfile", "config/smok.yaml")
    assert result.returncode == 1
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    lines = [line for line in output.splitlines() if line.strip() and not line.startswith(PROFILE_NOTE)]
    assert lines == [f"Error: config file not found: config/smok.yaml (given with --configfile, read from {ROOT})"]
    assert not any(tmp_path.iterdir()), "nothing ran"


def test_every_missing_config_file_is_named_and_the_existing_ones_are_not(tmp_path):
    result = snakemake_in(
        ROOT, SMALL_TARGET, "-n", "--directory", str(tmp_path), "--configfile", "config/smoke.yaml", "nope.yaml"
    )
    assert result.returncode == 1 and "config file not found: nope.yaml (" in result.stderr
    assert "smoke.yaml" not in result.stderr


def test_the_rule_graph_needs_no_graphviz(fresh_copy):
    """`make rulegraph`: a Mermaid flowchart in Markdown, every stage and its edges."""
    venv = SNAKEMAKE.parent.parent
    result = subprocess.run(
        ["make", "--no-print-directory", "rulegraph", f"VENV={venv}", "-o", f"{venv}/.installed"],
        cwd=fresh_copy,
        env={**os.environ, "PYTHONPATH": str(fresh_copy / "src")},
        capture_output=True,
        text=True,
        timeout=SNAKEMAKE_TIMEOUT_S,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    graph = (fresh_copy / "rulegraph.md").read_text().splitlines()
    assert graph[0] == "```mermaid" and graph[-1] == "```"
    assert "flowchart TB" in graph
    nodes = {line.strip().split("[")[1].rstrip("]") for line in graph if "[" in line and "-->" not in line}
    assert {"l2g_fig1_flows", "l2g_fig1", "l2g_transformer", "bo_grid_shard", "figures_manifest"} <= nodes
    assert sum("-->" in line for line in graph) >= 10
    assert not any("Using workflow" in line or "Building DAG" in line for line in graph), "only the graph"
