"""The whole smoke pipeline (config/smoke.yaml) in a temporary directory."""

import pytest
import hashlib

import numpy as np
import pandas as pd

from helpers import ROOT, run_snakemake
from replication.papers.local_to_global.landscape import canonical
from replication.papers.local_to_global.markov import MarkovChain

# Every test here runs Snakemake (or asks for a fixture that does).
pytestmark = pytest.mark.pipeline


def test_manifest_lists_every_figure_with_its_hash(smoke_run):
    manifest = pd.read_csv(smoke_run / "figures" / "all", sep="\t")
    assert list(manifest.columns[:4]) == ["path", "sha256", "paper", "figure"]
    assert "figures/local_to_global/fig1.pdf" in set(manifest.path)
    assert manifest.path.is_unique
    for row in manifest.itertuples():
        path = smoke_run / row.path
        if path.suffix == ".pdf":  # a figure: its PNG and tidy data stand beside it
            assert path.with_suffix(".png").exists() and path.with_suffix(".csv").exists()
        assert hashlib.sha256(path.read_bytes()).hexdigest() == row.sha256
        assert row.paper in {"Local to Global", "Benign overfitting", "all"}
        assert isinstance(row.figure, str) and row.figure.strip()


@pytest.mark.usefixtures("smoke_tree_alone")
def test_every_rule_logs_and_a_rerun_does_nothing(smoke_run):
    logs = list((smoke_run / "logs").rglob("*.log"))
    assert logs
    result = run_snakemake(
        smoke_run, "--configfile", str(ROOT / "config" / "smoke.yaml"), "--cores", "1", "-n", "figures/all"
    )
    assert "Nothing to be done" in result.stdout + result.stderr


def test_one_figure_is_its_own_target(tmp_path):
    result = run_snakemake(
        tmp_path,
        "--configfile",
        str(ROOT / "config" / "smoke.yaml"),
        "--cores",
        "1",
        "-n",
        "figures/local_to_global/fig1.pdf",
    )
    out = result.stdout + result.stderr
    assert "l2g_fig1" in out and "figures_manifest" not in out


def test_lint_is_clean():
    result = run_snakemake(ROOT, "--lint")
    assert "Congratulations, your workflow is in a good condition!" in result.stdout + result.stderr


def test_rulegraph_shows_stages(tmp_path):
    # The target first: --configfile and --rulegraph would both swallow it.
    graph = run_snakemake(
        tmp_path, "figures/all", "--configfile", str(ROOT / "config" / "smoke.yaml"), "--forceall", "--rulegraph"
    ).stdout
    assert "l2g_fig1_flows" in graph and "l2g_fig1" in graph and "figures_manifest" in graph
    assert graph.count("->") >= 10


def test_fig1_data_holds_the_theory(smoke_run):
    data = pd.read_csv(smoke_run / "figures" / "local_to_global" / "fig1.csv")
    assert {"panel", "p", "q", "layer", "w", "e"} <= set(data.columns)
    assert set(data.panel) == {"a", "b", "c", "d"}
    assert {
        "energy",
        "field",
        "global_min_locus",
        "local_min",
        "local_max",
        "saddle",
        "basin",
        "separatrix",
        "trajectory",
    } <= set(data.layer)
    for (p, q), chain_data in data.groupby(["p", "q"]):
        chain = MarkovChain(p, q)
        # The saddle, the locus of global minima, the unit field.
        saddle = chain_data[chain_data.layer == "saddle"]
        assert np.allclose(saddle[["w", "e"]], [canonical.SADDLE_W, 0.0])
        locus = chain_data[(chain_data.layer == "global_min_locus")].dropna(subset=["e"])
        assert np.allclose(canonical.gap(locus.e, locus.w), chain.optimal_gap)
        field = chain_data[chain_data.layer == "field"]
        assert np.allclose(np.hypot(field.dw, field.de)[np.hypot(field.dw, field.de) > 0], 1.0)
        # Flows: energy conserved, each ends where the theorem says.
        flows = chain_data[chain_data.layer == "trajectory"]
        assert len(flows)
        for _, path in flows.groupby("id"):
            assert np.ptp(path.value) / abs(path.value.iloc[0]) < 1e-8
        ends = flows.sort_values("t").groupby("id").tail(1)
        starts = flows.sort_values("t").groupby("id").head(1)
        predicted = canonical.predicted_basin(chain, starts.e.to_numpy(), starts.w.to_numpy())
        assert list(ends.label) == list(predicted)
        # Basin shading: I_min exactly where the theorem says.
        basin = chain_data[chain_data.layer == "basin"]
        expected = np.where(canonical.predicted_basin(chain, basin.e, basin.w) == canonical.LOCAL_MIN, "I_min", "I*")
        assert (basin.label.to_numpy() == expected).all()
