"""The plateau analysis at smoke settings (figures/plateau): its manifest, tables that agree with
each other, the figures' data, the claims' verdicts per seed and the findings' counts."""

import hashlib

import numpy as np
import pandas as pd
import pytest
import yaml

from helpers import ROOT, defaulted_section
from replication.claims import cell_holds
from replication.papers.local_to_global.plateau.hessian import BLOCKS

FIGURES = "figures/local_to_global"
RESULTS = "results/local_to_global/plateau"
SMOKE = yaml.safe_load((ROOT / "src/replication/papers/local_to_global/smoke.yaml").read_text())
ABOVE = [(p, q) for p in SMOKE["phase"]["p"] for q in SMOKE["phase"]["q"] if p + q > 1 + 1e-9]

pytestmark = pytest.mark.pipeline


def test_the_plateau_manifest_lists_its_figures_findings_and_claims(plateau_smoke_run):
    manifest = pd.read_csv(plateau_smoke_run / "figures" / "plateau", sep="\t")
    assert list(manifest.path) == [
        f"{FIGURES}/plateau_curvature.pdf",
        f"{FIGURES}/plateau_law.pdf",
        f"{FIGURES}/plateau_directions.pdf",
        "figures/plateau_findings.md",
        "figures/plateau_claims.md",
        "figures/settings.yaml",
    ]
    for row in manifest.itertuples():
        assert hashlib.sha256((plateau_smoke_run / row.path).read_bytes()).hexdigest() == row.sha256


def test_points_are_on_the_plateau_with_finite_spectra(plateau_smoke_run):
    points = pd.read_csv(plateau_smoke_run / RESULTS / "points.csv")
    measures = pd.read_csv(plateau_smoke_run / "results/local_to_global/phase/measures.csv")
    assert len(points) > 0 and set(zip(points.p, points.q)) <= set(ABOVE)
    for row in points.itertuples():
        run = measures[(measures.p == row.p) & (measures.q == row.q) & (measures.init == "standard")]
        run = run[run.seed == row.seed].iloc[0]
        assert row.step >= run.drop_end and not (run.escaped and row.step >= run.escape)
    assert np.all(points.lambda_1 <= points.lambda_2) and np.all(points.lambda_2 < points.lambda_max)
    assert np.all(points.noise > 0) and np.all(points.gradient_norm > 0)
    weights = points[[f"weight_{b}" for b in BLOCKS]].sum(axis=1)
    assert np.allclose(weights, 1) and np.all((points.canonical_weight >= 0) & (points.canonical_weight <= 1 + 1e-9))
    significance = defaulted_section("local_to_global", "plateau", given=SMOKE["plateau"])["hessian"]["significance"]
    assert points.saddle.tolist() == (points.lambda_1 < -significance * points.noise).tolist()


def test_the_figures_plot_the_cells_table(plateau_smoke_run):
    cells = pd.read_csv(plateau_smoke_run / RESULTS / "cells.csv")
    curvature = pd.read_csv(plateau_smoke_run / FIGURES / "plateau_curvature.csv")
    full = curvature[curvature.restriction == "full model"].merge(cells, on=["p", "q", "point"], suffixes=("", "_cell"))
    assert len(full) == len(cells)
    assert np.allclose(full.lambda_min, full.lambda_min_cell) and (full.saddles == full.saddles_cell).all()
    directions = pd.read_csv(plateau_smoke_run / FIGURES / "plateau_directions.csv")
    assert set(directions.block) == set(BLOCKS)


def test_each_claim_is_its_seeds_verdicts(plateau_smoke_run):
    points = pd.read_csv(plateau_smoke_run / RESULTS / "points.csv")
    claims = pd.read_csv(plateau_smoke_run / RESULTS / "claims.csv").set_index("claim_id")
    for (p, q, point), group in points.groupby(["p", "q", "point"]):
        for claim, column in (("3m", "saddle"), ("3c", "canonical_saddle")):
            row = claims.loc[f"{claim} (p={p:g}, q={q:g}) {point}"]
            assert bool(row.holds) == cell_holds(1 - group[column].mean())
            assert row.n_runs == len(group)
    curvature = pd.read_csv(plateau_smoke_run / FIGURES / "plateau_curvature.csv")
    for row in curvature.itertuples():  # the red outline is the claim's verdict
        claim = "3m" if row.restriction == "full model" else "3c"
        assert bool(claims.loc[f"{claim} (p={row.p:g}, q={row.q:g}) {row.point}"].holds) == row.local_minimum
    findings = (plateau_smoke_run / "figures" / "plateau_findings.md").read_text()
    cells = pd.read_csv(plateau_smoke_run / RESULTS / "cells.csv")
    for point, group in cells.groupby("point"):
        none = int((group.saddles == 0).sum())
        assert f"**A minimum within the noise in every seed**: {none} of {len(group)} cells" in findings, point
