"""The transformer part of the smoke pipeline: run outputs, the data behind Figs. 3, 4, 6, claims, tables."""

import numpy as np
import pandas as pd
import pytest
import yaml

from helpers import ROOT, run_snakemake, squeeze_markdown
from replication.papers.local_to_global.markov import MarkovChain

# Every test here runs Snakemake (or asks for a fixture that does).
pytestmark = pytest.mark.pipeline

SMOKE = yaml.safe_load((ROOT / "src" / "replication" / "papers" / "local_to_global" / "smoke.yaml").read_text())[
    "transformer"
]
FIGURES = "figures/local_to_global"


def test_each_run_has_losses_and_checkpoints(smoke_run):
    for name, experiment in SMOKE["experiments"].items():
        for init in experiment["inits"]:
            for seed in experiment["seeds"]:
                run = smoke_run / f"results/local_to_global/transformer/{name}/{init}/seed{seed}"
                losses = pd.read_csv(run / "losses.csv")
                assert list(losses.step) == list(range(experiment["steps"] + 1))
                tested = losses.dropna(subset=["test_loss"])
                assert list(tested.step) == list(range(0, experiment["steps"] + 1, experiment["eval_every"]))
                checkpoints = np.load(run / "checkpoints.npz")
                assert list(checkpoints["step"]) == sorted(experiment["checkpoints"])
                for key in ("e", "p", "W_Q", "W_K", "W_V", "W_O", "W_1", "W_2", "b"):
                    assert checkpoints[key].shape[0] == len(experiment["checkpoints"])
                assert (
                    (smoke_run / f"logs/local_to_global/transformer/{name}/{init}/seed{seed}.log")
                    .read_text()
                    .count("it/s")
                )


def test_fig4_data_one_row_per_init_seed_step(smoke_run):
    spec = SMOKE["experiments"]["fig4"]
    for name, last in (("fig4", SMOKE["fig4"]["window"]), ("fig4_long", spec["steps"])):
        data = pd.read_csv(smoke_run / FIGURES / f"{name}.csv")
        assert {"init", "seed", "step", "test_loss", "test_loss_smoothed"} <= set(data.columns)
        assert not data.duplicated(["init", "seed", "step"]).any()
        assert set(data.init) == set(spec["inits"]) and set(data.seed) == set(spec["seeds"])
        assert data.step.max() == last and len(data) == len(spec["inits"]) * len(spec["seeds"]) * (last + 1)
        assert np.isfinite(data.test_loss).all() and (data.test_loss > 0).all()
    # Our init starts far above log 2 (large logits), the standard one at ~log 2.
    start = data[data.step == 0].groupby("init").test_loss.mean()
    assert abs(start["standard"] - np.log(2)) < 0.01 and start["ours"] > 1.0


def test_fig3_fig6_structure_and_heatmap_data(smoke_run):
    for name in ("fig3", "fig6"):
        spec = SMOKE["experiments"][name]
        structure = pd.read_csv(smoke_run / FIGURES / f"{name}_structure.csv")
        assert sorted(structure.step.unique()) == sorted(spec["checkpoints"])
        assert set(structure.matrix) == {"W_1", "W_V", "W_Q", "W_K", "W_O", "W_2"}
        assert sorted(structure.seed.unique()) == spec["seeds"]  # every seed's run, not only the plotted one
        assert structure.top_share.between(1 / 8 - 1e-9, 1 + 1e-9).all()
        entries = pd.read_csv(smoke_run / FIGURES / f"{name}.csv")
        d = SMOKE["model"]["d"]
        counts = entries.groupby(["matrix", "step"]).size()
        assert (counts.xs("W_1") == 4 * d * d).all() and (counts.xs("W_V") == d * d).all()
    fig6 = pd.read_csv(smoke_run / FIGURES / "fig6_structure.csv")
    at_init = fig6[(fig6.step == 0) & fig6.matrix.isin(["W_1", "W_V", "W_2"])]  # W_Q, W_K, W_O: standard init
    assert np.allclose(at_init.top_share, 1.0) and np.allclose(at_init.e_flatness, 1.0)  # the rank-one init itself


def test_claims_5_and_6_are_reported(smoke_run):
    claims = pd.read_csv(smoke_run / "results/local_to_global/claims_transformer.csv", dtype={"claim_id": str})
    assert list(claims.claim_id) == [
        "5a",
        "5b",
        "5c",
        "6a",
        "6a-all",
        "6c",
        "6d",
        "6d-output",
        "6e",
        "6f-rank",
        "6f-e",
        "6g",
        "6h",
        "6b",
        "6b-rest",
    ]
    assert (claims.paper == "Local to Global").all() and claims.holds.isin([True, False]).all()
    chain = MarkovChain(**SMOKE["experiments"]["fig4"]["chain"])
    assert f"{chain.unigram_loss:.4f}" in claims.statement[0] and f"{chain.bigram_loss:.4f}" in claims.statement[1]
    rows = claims.set_index("claim_id")
    fig6 = pd.read_csv(smoke_run / FIGURES / "fig6_structure.csv")
    assert rows.loc["6b", "measured"] == fig6[fig6.matrix.isin(["W_1", "W_V"])].top_share.min()
    assert rows.loc["6b", "n_runs"] == len(SMOKE["experiments"]["fig6"]["seeds"])
    assert (rows.kind[["6g", "6h"]] == "not checkable").all() and (rows.kind.drop(["6g", "6h"]) == "checked").all()
    # The W_V row cites the ablation, which names every variant it ran.
    assert (
        "ablation (fig3_ablation.csv)" in rows.loc["6d", "reason"]
        and "two_symbol_embedding" in rows.loc["6d", "reason"]
    )


def test_ablation_data(smoke_run):
    for name, variants in (("fig3", ["pipeline", "two_symbol_embedding"]), ("fig6", ["pipeline", "value_output"])):
        table = pd.read_csv(smoke_run / FIGURES / f"{name}_ablation.csv")
        assert list(dict.fromkeys(table.variant)) == variants
        assert sorted(table.step.unique()) == sorted(SMOKE["experiments"][name]["checkpoints"])
        structure = pd.read_csv(smoke_run / FIGURES / f"{name}_structure.csv")
        # The pipeline variant is the figure's own first run: the same numbers.
        own = structure[
            (structure.seed == SMOKE["experiments"][name]["seeds"][0]) & structure.matrix.isin(["W_V", "W_1"])
        ]
        mine = table[table.variant == "pipeline"]
        merged = own.merge(mine, on=["matrix", "step"], suffixes=("", "_ablation"))
        assert len(merged) == len(mine) and np.allclose(merged.top_share, merged.top_share_ablation)
    fig6 = pd.read_csv(smoke_run / FIGURES / "fig6_ablation.csv")
    start = fig6[(fig6.step == 0) & (fig6.matrix == "W_V")].set_index("variant")
    # alpha on the input side (pipeline) or on the output side (the authors' lowrank init)
    assert start.loc["pipeline", "cos_e_input"] == pytest.approx(1.0) and start.loc[
        "value_output", "cos_e_output"
    ] == pytest.approx(1.0)


@pytest.mark.usefixtures("smoke_tree_alone")
def test_tables_from_the_config(smoke_run):
    run_snakemake(
        smoke_run, "--configfile", str(ROOT / "config" / "smoke.yaml"), "--cores", "1", f"{FIGURES}/table1.md"
    )
    d, n = SMOKE["model"]["d"], SMOKE["model"]["context"]
    table1 = squeeze_markdown((smoke_run / FIGURES / "table1.md").read_text())
    assert f"| p_n | {n} x {d} | {n * d} |" in table1
    table2 = (smoke_run / FIGURES / "table2.tex").read_text()
    assert "\\toprule" in table2 and f"context length N & {n}" in table2
