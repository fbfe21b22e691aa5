"""The phase diagram at smoke settings (figures/phase): its manifest, the figures' data (one value
per cell, init and measure, in range), the claims rows with verdicts, and figures/all without it."""

import hashlib

import numpy as np
import pandas as pd
import pytest
import yaml

from helpers import ROOT, run_snakemake
from replication.contract import BEYOND_THE_PAPER
from replication.diff.bless import bless
from replication.papers.local_to_global.phase.grid import off_the_line
from replication.papers.local_to_global.phase.prediction import canonical_prediction
from replication.variants import read_record

FIGURES = "figures/local_to_global"
SMOKE = yaml.safe_load((ROOT / "src/replication/papers/local_to_global/smoke.yaml").read_text())["phase"]
CELLS = [(p, q) for p in SMOKE["p"] for q in SMOKE["q"] if off_the_line(p, q)]
INITS = ["standard", "ours"]  # the schema's default inits
HORIZON = SMOKE["horizon"]

pytestmark = pytest.mark.pipeline


def test_the_phase_manifest_lists_its_figures_and_claims(phase_smoke_run):
    manifest = pd.read_csv(phase_smoke_run / "figures" / "phase", sep="\t")
    assert list(manifest.path) == [
        f"{FIGURES}/phase_heatmaps.pdf",
        f"{FIGURES}/phase_plateau.pdf",
        "figures/phase_claims.md",
        "figures/settings.yaml",
    ]
    for row in manifest.itertuples():
        assert hashlib.sha256((phase_smoke_run / row.path).read_bytes()).hexdigest() == row.sha256
    assert (phase_smoke_run / "figures" / "phase_provenance.json").is_file()
    assert yaml.safe_load((phase_smoke_run / "figures" / "settings.yaml").read_text())["name"] == "smoke"
    # The laptop set is not built by this target.
    assert not (phase_smoke_run / "figures" / "all").exists()


def test_heatmap_data_one_value_per_cell_init_and_measure(phase_smoke_run):
    data = pd.read_csv(phase_smoke_run / FIGURES / "phase_heatmaps.csv")
    assert len(data) == len(CELLS) * len(INITS) * 3
    assert set(map(tuple, data[["p", "q"]].drop_duplicates().to_numpy())) == set(CELLS)
    for (init, measure), group in data.groupby(["init", "measure"]):
        assert init in INITS and len(group) == len(CELLS)
        values = group.value.to_numpy()
        upper = HORIZON if measure == "median_plateau" else 1.0
        assert np.all((values >= 0) & (values <= upper)), (init, measure, values)
    for row in data.itertuples():
        predicted = canonical_prediction(row.init, row.p, row.q)
        if predicted is None:
            assert pd.isna(row.predicted_on_plateau)
        else:
            assert bool(row.predicted_on_plateau) is predicted


def test_cells_and_runs_tables(phase_smoke_run):
    cells = pd.read_csv(phase_smoke_run / "results/local_to_global/phase/cells.csv")
    runs = pd.read_csv(phase_smoke_run / "results/local_to_global/phase/measures.csv")
    assert len(cells) == len(CELLS) * len(INITS)
    assert len(runs) == len(CELLS) * len(INITS) * len(SMOKE["seeds"])
    assert (cells.seeds == len(SMOKE["seeds"])).all()
    # The fraction on the plateau can only fall with time; a run that stopped early had escaped.
    assert (cells.on_plateau_horizon <= cells.on_plateau_window).all()
    assert (runs[runs.stopped_early].escaped).all()
    assert (runs.steps_run <= HORIZON).all() and (runs.plateau_length <= HORIZON).all()
    assert (runs.noise_gap > 0).all() and cells.resolvable.dtype == bool
    # The rank-one structure of every run's final weights is measured here, for claim 6g to read.
    assert runs[["share_W_1", "share_W_V", "cos_e_W_1", "cos_e_W_V"]].notna().all().all()
    # The smoke cells next to the line p + q = 1 are below the noise of 16 x 32 symbols: unresolvable.
    near = cells[np.isclose(cells.switching_distance, 0.1)]
    assert len(near) and not near.resolvable.any()


def test_claims_rows_per_cell_with_verdicts(phase_smoke_run):
    claims = pd.read_csv(phase_smoke_run / "results/phase_claims.csv", dtype={"claim_id": str})
    cells = pd.read_csv(phase_smoke_run / "results/local_to_global/phase/cells.csv")
    standard = cells[cells.init == "standard"]
    for claim, side in (("6g", None), ("5w", "p+q>1"), ("5h", "p+q>1"), ("5r", "p+q<1")):
        expected = standard if side is None else standard[standard.side == side]
        for cell in expected.itertuples():
            rows = claims[claims.claim_id == f"{claim} (p={cell.p:g}, q={cell.q:g})"]
            assert len(rows) == 1, (claim, cell.p, cell.q)
            row = rows.iloc[0]
            if cell.resolvable:
                assert row.kind == "checked" and row.n_runs == len(SMOKE["seeds"])
                assert 0 <= row.ci_low <= row.holds_fraction <= row.ci_high <= 1
            else:
                # Never a pass or a fail where the gap is below the noise.
                assert row.kind == "not checkable" and "unresolvable" in row.reason and not row.holds
        summary = claims[claims.claim_id == f"{claim} (all cells)"]
        assert len(summary) == 1 and summary.iloc[0].n_runs == int(expected.resolvable.sum())
    assert (claims.spec == BEYOND_THE_PAPER).all()  # the spec's claims are about the paper's two chains
    report = (phase_smoke_run / "figures/phase_claims.md").read_text()
    assert report.startswith("# Claims checked by figures/phase")
    assert "no claims table reports it" not in report  # a part of the claims, not the spec's catalogue


def test_blessing_the_phase_run_takes_its_figures_claims_and_settings(phase_smoke_run, tmp_path):
    """make bless-manifest MANIFEST=phase: the set holds the phase manifest's figures (PNG + CSV), its claims report,
    the settings record and the phase provenance, and nothing of the laptop set."""
    dest = tmp_path / "phase"
    assert bless(phase_smoke_run, dest, manifest="phase") == [
        "local_to_global/phase_heatmaps",
        "local_to_global/phase_plateau",
    ]
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == [
        "claims.csv",
        "claims.md",
        "local_to_global/phase_heatmaps.csv",
        "local_to_global/phase_heatmaps.png",
        "local_to_global/phase_plateau.csv",
        "local_to_global/phase_plateau.png",
        "provenance.json",
        "settings.yaml",
    ]
    assert (dest / "claims.md").read_bytes() == (phase_smoke_run / "figures/phase_claims.md").read_bytes()
    assert read_record(dest)["name"] == "smoke"


def test_figures_all_has_no_phase_job(tmp_path):
    result = run_snakemake(tmp_path, "--configfile", str(ROOT / "config" / "smoke.yaml"), "-n", "figures/all")
    assert "l2g_transformer" in result.stdout
    assert "l2g_phase" not in result.stdout + result.stderr
