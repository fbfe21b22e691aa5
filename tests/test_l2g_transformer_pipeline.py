"""The transformer part of the smoke pipeline: run outputs, the data behind Figs. 3, 4, 6, claims, tables."""
import numpy as np
import pandas as pd
import yaml

from conftest import ROOT, run_snakemake
from replication.local_to_global.markov import MarkovChain

SMOKE = yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())["local_to_global"]["transformer"]
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
                assert (smoke_run / f"logs/local_to_global/transformer/{name}/{init}/seed{seed}.log").read_text().count("it/s")


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
        assert set(structure.matrix) == {"W_1", "W_V"}
        assert structure.top_share.between(1 / 8 - 1e-9, 1 + 1e-9).all()
        entries = pd.read_csv(smoke_run / FIGURES / f"{name}.csv")
        d = SMOKE["model"]["d"]
        counts = entries.groupby(["matrix", "step"]).size()
        assert (counts.xs("W_1") == 4 * d * d).all() and (counts.xs("W_V") == d * d).all()
    fig6 = pd.read_csv(smoke_run / FIGURES / "fig6_structure.csv")
    at_init = fig6[fig6.step == 0]
    assert np.allclose(at_init.top_share, 1.0) and np.allclose(at_init.e_flatness, 1.0)  # the rank-one init itself


def test_claims_5_and_6_are_reported(smoke_run):
    claims = pd.read_csv(smoke_run / "results/local_to_global/claims_transformer.csv", dtype={"claim_id": str})
    assert list(claims.claim_id) == ["5a", "5b", "6a", "6b"]
    assert (claims.paper == "Local to Global").all() and claims.holds.isin([True, False]).all()
    chain = MarkovChain(**SMOKE["experiments"]["fig4"]["chain"])
    assert f"{chain.unigram_loss:.4f}" in claims.statement[0] and f"{chain.bigram_loss:.4f}" in claims.statement[1]
    fig6 = pd.read_csv(smoke_run / FIGURES / "fig6_structure.csv")
    assert claims.measured[3] == fig6.top_share.min()


def test_tables_from_the_config(smoke_run):
    run_snakemake(smoke_run, "--configfile", str(ROOT / "config" / "smoke.yaml"), "--cores", "1", f"{FIGURES}/table1.md")
    d, n = SMOKE["model"]["d"], SMOKE["model"]["context"]
    table1 = (smoke_run / FIGURES / "table1.md").read_text()
    assert f"| p_n | {n} x {d} | {n * d} |" in table1
    table2 = (smoke_run / FIGURES / "table2.tex").read_text()
    assert "\\toprule" in table2 and f"context length N & {n}" in table2
