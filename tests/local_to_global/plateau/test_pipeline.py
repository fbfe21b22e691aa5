"""The plateau analysis at smoke settings (figures/plateau): its manifest, tables that agree with
each other, the figures' data, the claims' verdicts per seed and the findings' counts; the escape
sweeps' table, figure, claims and findings."""

import hashlib

import numpy as np
import pandas as pd
import pytest
import yaml

from helpers import ROOT, defaulted_section, schema_defaults
from replication.claims import cell_holds
from replication.papers.local_to_global.plateau.settings import BLOCKS

FIGURES = "figures/local_to_global"
RESULTS = "results/local_to_global/plateau"
SMOKE = yaml.safe_load((ROOT / "src/replication/papers/local_to_global/smoke.yaml").read_text())
ABOVE = [(p, q) for p in SMOKE["phase"]["p"] for q in SMOKE["phase"]["q"] if p + q > 1 + 1e-9]
ESCAPE = defaulted_section("local_to_global", "plateau", "escape", given=SMOKE["plateau"]["escape"])

pytestmark = pytest.mark.pipeline


def test_the_plateau_manifest_lists_its_figures_findings_and_claims(plateau_smoke_run):
    manifest = pd.read_csv(plateau_smoke_run / "figures" / "plateau", sep="\t")
    assert list(manifest.path) == [
        f"{FIGURES}/plateau_curvature.pdf",
        f"{FIGURES}/plateau_law.pdf",
        f"{FIGURES}/plateau_growth.pdf",
        f"{FIGURES}/plateau_directions.pdf",
        f"{FIGURES}/plateau_escape.pdf",
        "figures/plateau_findings.md",
        "figures/plateau_claims.md",
        "figures/settings.yaml",
    ]
    for row in manifest.itertuples():
        assert hashlib.sha256((plateau_smoke_run / row.path).read_bytes()).hexdigest() == row.sha256


def test_points_are_on_the_plateau_with_finite_spectra_and_their_verdicts(plateau_smoke_run):
    points = pd.read_csv(plateau_smoke_run / RESULTS / "points.csv")
    measures = pd.read_csv(plateau_smoke_run / "results/local_to_global/phase/measures.csv")
    assert len(points) > 0 and set(zip(points.p, points.q)) <= set(ABOVE)
    for row in points.itertuples():
        run = measures[(measures.p == row.p) & (measures.q == row.q) & (measures.init == "standard")]
        run = run[run.seed == row.seed].iloc[0]
        assert row.step >= run.drop_end and not (run.escaped and row.step >= run.escape)
    assert np.all(points.lambda_min < points.lambda_max) and np.all(points.gradient_norm > 0)
    assert np.all(points.noise > 0) and np.all(points.curvature_noise > 0) and np.all(points.mode_curvature_noise > 0)
    weights = points[[f"weight_{b}" for b in BLOCKS]].sum(axis=1)
    assert np.allclose(weights, 1) and np.all((points.canonical_weight >= 0) & (points.canonical_weight <= 1 + 1e-9))
    hessian = defaulted_section("local_to_global", "plateau", given=SMOKE["plateau"])["hessian"]
    z, least, most = hessian["significance"], hessian["held_out"]["least"], hessian["held_out"]["most"]
    assert points.held_out_batches.between(least, most).all()
    # tol: the rate that grows a mode from sigma to 1 by the end of the schedule, for every direction
    assert hessian["tolerance"] == "horizon" and np.allclose(points.tol, points.mode_tol)
    assert np.allclose(points.canonical_tol, points.tol)
    for prefix in ("", "canonical_", "mode_"):  # the verdicts are verdict.decide's of the row's numbers
        curvature, noise, tol = (points[f"{prefix}{c}"] for c in ("curvature", "curvature_noise", "tol"))
        saddle = curvature + z * noise < -tol
        quiet = np.maximum.reduce([noise, points[f"{prefix}noise"], points[f"{prefix}bias"]]) <= tol
        fitted_clear = points[f"{prefix}lambda_min"] - z * points[f"{prefix}noise"] > -tol
        minimum = ~saddle & quiet & (curvature - z * noise > -tol) & fitted_clear
        expected = np.where(saddle, "saddle", np.where(minimum, "minimum", "unresolved"))
        assert points[f"{prefix}verdict"].tolist() == expected.tolist(), prefix
    assert (points.adam_step == points.step).all() and (points.lr > 0).all()
    assert np.allclose(points.mode_rate, -points.mode_curvature - points.mode_decay)


def test_the_figures_plot_the_cells_table(plateau_smoke_run):
    cells = pd.read_csv(plateau_smoke_run / RESULTS / "cells.csv")
    curvature = pd.read_csv(plateau_smoke_run / FIGURES / "plateau_curvature.csv")
    assert set(curvature.direction) == {"full model", "canonical directions", "AdamW's view (D^-1/2 H D^-1/2)"}
    full = curvature[curvature.direction == "full model"].merge(cells, on=["p", "q", "point"], suffixes=("", "_cell"))
    assert len(full) == len(cells)
    assert np.allclose(full.curvature, full.curvature_cell) and np.allclose(full.lambda_min, full.lambda_min_cell)
    assert np.allclose(full.curvature_over_tol, full.curvature_cell / full.tol_cell)
    assert (full.saddles == full.saddles_cell).all() and (full.minima == full.minima_cell).all()
    directions = pd.read_csv(plateau_smoke_run / FIGURES / "plateau_directions.csv")
    assert set(directions.block) == set(BLOCKS)


CLAIMS_OF = {"full model": ("3m", ""), "canonical directions": ("3c", "canonical_")}


def test_each_claim_is_its_seeds_verdicts(plateau_smoke_run):
    points = pd.read_csv(plateau_smoke_run / RESULTS / "points.csv")
    claims = pd.read_csv(plateau_smoke_run / RESULTS / "claims.csv").set_index("claim_id")
    outcome = {"minimum": 1.0, "saddle": 0.0, "unresolved": np.nan}
    for (p, q, point), group in points.groupby(["p", "q", "point"]):
        for claim, prefix in CLAIMS_OF.values():
            row = claims.loc[f"{claim} (p={p:g}, q={q:g}) {point}"]
            told = group[f"{prefix}verdict"].map(outcome).dropna()
            if len(told):
                assert row.kind == "checked" and bool(row.holds) == cell_holds(told.mean()) and row.n_runs == len(told)
            else:
                assert row.kind == "not checkable" and not row.holds
    resolved = (points.verdict != "unresolved").mean()
    assert claims.loc["3r"].measured == pytest.approx(resolved) and bool(claims.loc["3r"].holds) == (resolved >= 0.9)
    curvature = pd.read_csv(plateau_smoke_run / FIGURES / "plateau_curvature.csv")
    for row in curvature[curvature.direction.isin(CLAIMS_OF)].itertuples():  # outline = verdict, hatch = not checkable
        claim = claims.loc[f"{CLAIMS_OF[row.direction][0]} (p={row.p:g}, q={row.q:g}) {row.point}"]
        assert bool(claim.holds) == row.local_minimum and (claim.kind == "not checkable") == (not row.resolved)
    findings = (plateau_smoke_run / "figures" / "plateau_findings.md").read_text()
    cells = pd.read_csv(plateau_smoke_run / RESULTS / "cells.csv")
    for point, group in cells.groupby("point"):
        every = int((group.minima == group.seeds).sum())
        assert f"a minimum in every seed at {every} (" in findings, point


def test_the_escape_table_has_a_row_per_cell_sweep_value_and_seed(plateau_smoke_run):
    escape = pd.read_csv(plateau_smoke_run / RESULTS / "escape.csv")
    sweeps = {"sigma": ESCAPE["sigma"], "batch_size": ESCAPE["batch_size"]}
    jobs = [(p, q, sweep, value) for p, q in ESCAPE["cells"] for sweep in sweeps for value in sweeps[sweep]]
    expected = {(*job, seed) for job in jobs for seed in ESCAPE["seeds"]}
    assert len(escape) == len(expected) == len(ESCAPE["cells"]) * sum(map(len, sweeps.values())) * len(ESCAPE["seeds"])
    assert set(zip(escape.p, escape.q, escape.sweep, escape.value, escape.seed)) == expected
    transformer = defaulted_section("local_to_global", "transformer", given=SMOKE["transformer"])
    for sweep, other, default in (("sigma", "batch_size", "batch_size"), ("batch_size", "sigma", "sigma")):
        rows = escape[escape.sweep == sweep]
        assert (rows[sweep] == rows.value).all() and (rows[other] == transformer[default]).all()
    assert (escape.horizon == SMOKE["phase"]["horizon"]).all() and (escape.cpu_s > 0).all()
    assert (escape.escaped == escape.escape.notna()).all() and (escape.steps_run <= escape.horizon).all()
    # At the default batch and sigma a run is the phase grid's run of its cell and seed, bit for bit.
    measures = pd.read_csv(plateau_smoke_run / "results/local_to_global/phase/measures.csv")
    standard = measures[measures.init == "standard"].set_index(["p", "q", "seed"])
    default = escape[(escape.sweep == "batch_size") & (escape.value == transformer["batch_size"])]
    compared = default.join(standard, on=["p", "q", "seed"], rsuffix="_phase", how="inner")
    assert len(compared) == len(default) > 0
    for column in ("escaped", "drop_end", "plateau_length", "steps_run"):
        assert (compared[column] == compared[f"{column}_phase"]).all(), column
    assert np.allclose(compared.escape, compared.escape_phase, equal_nan=True)


def test_the_escape_figure_claims_and_findings_are_the_tables_verdicts(plateau_smoke_run):
    escape = pd.read_csv(plateau_smoke_run / RESULTS / "escape.csv")
    figure = pd.read_csv(plateau_smoke_run / FIGURES / "plateau_escape.csv")
    drawn = figure.merge(escape, on=["sweep", "p", "q", "value", "seed"], suffixes=("", "_table"), validate="1:1")
    assert len(drawn) == len(escape) == len(figure)
    assert np.allclose(drawn.escape_plotted, drawn.escape.where(drawn.escaped_table, drawn.horizon_table))
    claims = pd.read_csv(plateau_smoke_run / RESULTS / "claims.csv").set_index("claim_id")
    findings = (plateau_smoke_run / "figures" / "plateau_findings.md").read_text()
    factor = ESCAPE["batch_factor"]
    for (p, q), cell in escape.groupby(["p", "q"]):
        grows, free = [], []
        for _, runs in cell.groupby("seed"):
            sigma = runs[(runs.sweep == "sigma") & runs.escaped]
            if sigma.value.nunique() >= 2:  # covariance of escape and log(1/sigma) > 0 (exactly 0 when flat)
                x, y = np.log(1 / sigma.value), sigma.escape
                grows.append(((x - x.mean()) * (y - y.mean())).sum() > 0)
            batch = runs[runs.sweep == "batch_size"].sort_values("value")
            small, large = batch.iloc[0], batch.iloc[-1]
            if small.escaped and small.escape > 0:
                ratio = (large.escape if large.escaped else large.horizon) / small.escape
                if large.escaped or ratio > factor:
                    free.append(ratio <= factor)
        verdicts = {}
        for claim, outcomes in (("5i", grows), ("5b", free)):
            row = claims.loc[f"{claim} (p={p:g}, q={q:g})"]
            if outcomes:
                assert row.kind == "checked" and row.n_runs == len(outcomes)
                assert bool(row.holds) == cell_holds(np.mean(outcomes))
                verdicts[claim] = bool(row.holds)
            else:
                assert row.kind == "not checkable" and not row.holds
        if verdicts.get("5b") is False:
            kind = "noise"
        elif verdicts.get("5b") and "5i" in verdicts:
            kind = "saddle" if verdicts["5i"] else "neither"
        else:
            kind = "not checkable"
        assert f"- **({p:g}, {q:g}): {kind}.**" in findings
        assert (figure[(figure.p == p) & (figure.q == q)].sweep.nunique()) == 2


def test_a_run_trained_to_its_escape_has_the_escape_of_the_grids_run(plateau_smoke_run):
    """The escape jobs' runs stop at their escape, and the grid's own runs stand in for the default
    setting: trained along the sweeps' path at the default setting, every seed has the phase grid's
    drop, escape and plateau, in no more steps."""
    from replication.papers.local_to_global.phase.grid import Cell
    from replication.papers.local_to_global.phase.settings import phase_settings
    from replication.papers.local_to_global.phase.training import train_cell
    from replication.papers.local_to_global.plateau.escape import sweep_runs
    from replication.papers.local_to_global.plateau.settings import (
        escape_phase,
        escape_run_settings,
        escape_settings,
    )
    from replication.papers.local_to_global.transformer.settings import transformer_settings

    section = schema_defaults({"local_to_global": SMOKE})["local_to_global"]
    transformer, phase, escape = transformer_settings(section), phase_settings(section), escape_settings(section)
    cell = Cell.keyed(*ESCAPE["cells"][0])
    settings = escape_run_settings(transformer, phase, escape, cell, "batch_size", transformer.batch_size)
    narrowed = escape_phase(phase, escape, cell)
    runs = sweep_runs(settings, "batch_size", train_cell(settings, narrowed.stop, narrowed.measures.smooth), narrowed)
    escape_table = pd.read_csv(plateau_smoke_run / RESULTS / "escape.csv")
    grid = escape_table[(escape_table.sweep == "batch_size") & (escape_table.value == transformer.batch_size)]
    compared = runs.merge(grid, on=["p", "q", "seed"], suffixes=("", "_grid"), validate="1:1")
    assert len(compared) == len(ESCAPE["seeds"])
    for column in ("escaped", "drop_end", "plateau_length"):
        assert (compared[column] == compared[f"{column}_grid"]).all(), column
    assert np.allclose(compared.escape, compared.escape_grid, equal_nan=True)
    assert (compared.steps_run <= compared.steps_run_grid).all()
