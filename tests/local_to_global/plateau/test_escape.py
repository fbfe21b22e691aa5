"""The escape sweeps: their runs' settings are the phase runs' with one setting changed, a job's rows
are the phase grid's measures of its runs, and the per-seed slope and ratio, the verdict per cell,
the claims and the findings on synthetic tables whose answers are known."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from helpers import SMALL_RUN_TRAINING, schema_defaults
from replication.contract import BEYOND_THE_PAPER
from replication.papers.local_to_global import PAPER
from replication.papers.local_to_global.phase.grid import Cell
from replication.papers.local_to_global.phase.settings import phase_run_settings, phase_settings
from replication.papers.local_to_global.phase.tables import measure_runs
from replication.papers.local_to_global.phase.training import train_cell
from replication.papers.local_to_global.plateau.claims import ESCAPE_FIGURE, escape_claims
from replication.papers.local_to_global.plateau.escape import (
    COLUMNS,
    batch_free,
    batch_ratio,
    cell_tests,
    explanation,
    median_escape,
    phase_grid_runs,
    seed_tests,
    sigma_slope,
    sweep_runs,
)
from replication.papers.local_to_global.plateau.findings import escape_findings
from replication.papers.local_to_global.plateau.plots import escape_figure
from replication.papers.local_to_global.plateau.settings import (
    EscapeSettings,
    escape_files,
    escape_path,
    escape_phase,
    escape_run_settings,
    escape_runtime,
    escape_settings,
    from_phase_grid,
    value_name,
)
from replication.papers.local_to_global.transformer.settings import transformer_settings

HORIZON = 3000
SIGMAS = (0.005, 0.01, 0.02, 0.04)
BATCHES = (4, 8, 16)
SETTINGS = EscapeSettings(
    cells=((0.5, 0.8),), seeds=(1, 2, 3), sigma=SIGMAS, batch_size=BATCHES, batch_factor=2.0
)  # fmt: skip


def saddle(sigma, rate=100.0, offset=50.0):
    """A saddle escape: offset + rate x log(1/sigma)."""
    return offset + rate * np.log(1 / sigma)


def runs(cell, seed, sigma_escapes, batch_escapes):
    """escape.csv rows of one (cell, seed): ``None`` for a run that never escaped."""
    rows = []
    for sweep, escapes in (("sigma", sigma_escapes), ("batch_size", batch_escapes)):
        for value, escape in escapes.items():
            rows.append(
                {
                    "p": cell[0], "q": cell[1], "sweep": sweep, "value": value, "seed": seed,
                    "sigma": value if sweep == "sigma" else 0.02, "batch_size": value if sweep == "batch_size" else 16,
                    "escaped": escape is not None, "escape": np.nan if escape is None else float(escape),
                    "horizon": HORIZON,
                }
            )  # fmt: skip
    return rows


def table(*cells):
    """escape.csv of ``cells``: each (cell, [(sigma escapes, batch escapes) per seed])."""
    rows = [row for cell, seeds in cells for seed, both in enumerate(seeds, 1) for row in runs(cell, seed, *both)]
    return pd.DataFrame(rows)


def sigma_sweep(**changes):
    return {s: changes.get(str(s), saddle(s)) for s in SIGMAS}


def batch_sweep(*escapes):
    return dict(zip(BATCHES, escapes))


# --- settings ------------------------------------------------------------------------------------


def test_the_default_sweeps_and_their_jobs():
    section = schema_defaults()["local_to_global"]
    escape = escape_settings(section)
    assert escape.cells == ((0.5, 0.8), (0.8, 0.5), (0.7, 0.6), (0.9, 0.9))
    assert escape.sigma == SIGMAS and escape.batch_size == BATCHES and escape.seeds == (1, 2, 3)
    assert escape.batch_factor == 2.0
    assert len(escape.jobs) == 4 * (4 + 3)
    assert escape.value_named("sigma", value_name(0.005)) == 0.005 and escape.value_named("batch_size", "8") == 8
    assert escape_path(Cell.keyed(0.5, 0.8), "sigma", 0.005).endswith("escape/p0.5_q0.8/sigma_0.005.csv")
    assert escape_path(Cell.keyed(0.5, 0.8), "sigma", 0.02, True).endswith("escape/p0.5_q0.8/phase_sigma_0.02.csv")
    wide = dataclasses.replace(escape, batch_size=(4, 16, 64, 256))
    assert [escape_runtime(wide, 16, "batch_size", value_name(b)) for b in wide.batch_size] == [30, 30, 120, 480]
    odd = dataclasses.replace(escape, batch_size=(17, 20))  # 30 minutes per started 16 sequences
    assert [escape_runtime(odd, 16, "batch_size", value_name(b)) for b in odd.batch_size] == [60, 60]
    assert escape_runtime(escape, 32, "sigma", value_name(0.005)) == 60  # outside the batch sweep: the model's batch
    # At the default grid every sweep cell is a cell of it: sigma 0.02 and batch 16 are its runs, read, not trained.
    transformer, phase = transformer_settings(section), phase_settings(section)
    files = escape_files(transformer, phase, escape)
    read = [path for path in files if "/phase_" in path]
    assert len(files) == len(escape.jobs) and len(read) == 2 * 4
    assert all(path.endswith(("phase_sigma_0.02.csv", "phase_batch_size_16.csv")) for path in read)


def test_a_job_is_read_from_the_phase_grid_only_when_the_grid_has_its_runs():
    section = schema_defaults()["local_to_global"]
    transformer, phase, escape = transformer_settings(section), phase_settings(section), escape_settings(section)
    on_grid = Cell.keyed(0.7, 0.6)
    assert from_phase_grid(transformer, phase, escape, on_grid, "sigma", transformer.sigma)
    assert from_phase_grid(transformer, phase, escape, on_grid, "batch_size", transformer.batch_size)
    assert not from_phase_grid(transformer, phase, escape, on_grid, "sigma", 0.01)  # not the grid's setting
    assert not from_phase_grid(transformer, phase, escape, Cell.keyed(0.75, 0.6), "sigma", transformer.sigma)
    more_seeds = dataclasses.replace(escape, seeds=(1, 2, 3, 4))
    assert not from_phase_grid(transformer, phase, more_seeds, on_grid, "sigma", transformer.sigma)
    ours_only = dataclasses.replace(phase, inits=("ours",))
    assert not from_phase_grid(transformer, ours_only, escape, on_grid, "sigma", transformer.sigma)


def test_the_rows_read_from_the_phase_grid_are_its_measures_of_the_cell():
    section = schema_defaults()["local_to_global"]
    transformer, phase, escape = transformer_settings(section), phase_settings(section), escape_settings(section)
    cell = Cell.keyed(0.7, 0.6)
    settings = escape_run_settings(transformer, phase, escape, cell, "batch_size", 16)
    keys = [
        (p, q, init, seed)
        for p, q in ((0.7, 0.6), (0.6, 0.7))
        for init in ("standard", "ours")
        for seed in (1, 2, 3, 4)
    ]
    measures = pd.DataFrame(
        [{"p": p, "q": q, "init": init, "seed": seed, "escaped": seed != 2,
          "escape": np.nan if seed == 2 else 100.0 * seed + p, "drop_end": 40, "plateau_length": 60.0,
          "steps_run": 900 + seed, "stopped_early": seed != 2}
         for p, q, init, seed in keys]
    )  # fmt: skip
    costs = pd.DataFrame(
        [
            {"init": init, "seed": seed, "horizon": 3000, "cpu_s": 1.0 + seed, "wall_s": 2.0}
            for _, _, init, seed in keys[:8]
        ]
    )
    rows = phase_grid_runs(settings, "batch_size", measures, costs, (3, 1, 2))
    assert list(rows.columns) == COLUMNS and rows.seed.tolist() == [1, 2, 3]
    assert rows.escape.tolist() == pytest.approx([100.7, np.nan, 300.7], nan_ok=True)
    assert rows.escaped.tolist() == [True, False, True] and rows.cpu_s.tolist() == [2.0, 3.0, 4.0]
    assert (rows.value == 16).all() and (rows.batch_size == 16).all() and (rows.sigma == transformer.sigma).all()
    with pytest.raises(ValueError, match=r"no standard-init runs of seeds \[5\]"):
        phase_grid_runs(settings, "batch_size", measures, costs, (1, 5))


@pytest.mark.parametrize("sweep, value", [("sigma", 0.005), ("batch_size", 4)])
def test_a_jobs_runs_are_the_phase_runs_with_one_setting_changed(sweep, value):
    section = schema_defaults()["local_to_global"]
    transformer, phase, escape = transformer_settings(section), phase_settings(section), escape_settings(section)
    cell = Cell.keyed(0.7, 0.6)  # a cell of the default grid: its phase runs exist
    run = escape_run_settings(transformer, phase, escape, cell, sweep, value)
    expected = dataclasses.replace(phase_run_settings(transformer, phase, cell), inits=("standard",), **{sweep: value})
    assert run == dataclasses.replace(expected, seeds=escape.seeds)
    assert run.steps == phase.horizon and run.schedule.horizon == phase.horizon
    narrowed = escape_phase(phase, escape, cell)
    assert narrowed.cells == [cell] and narrowed.runs == [("standard", seed) for seed in escape.seeds]
    assert (narrowed.measures, narrowed.horizon) == (phase.measures, phase.horizon)
    assert (narrowed.stop.closed, narrowed.stop.patience) == (phase.measures.escape, 0)  # each run ends at its escape


def test_a_jobs_rows_are_the_phase_measures_of_its_runs():
    tiny = {**SMALL_RUN_TRAINING, "model": {"d": 4, "context": 16, "mlp_ratio": 4}, "chunk": 5}
    section = schema_defaults({"local_to_global": {"transformer": tiny}})["local_to_global"]
    transformer = transformer_settings(section)
    phase = dataclasses.replace(phase_settings(section), horizon=30, eval_every=2)
    escape = dataclasses.replace(SETTINGS, cells=((0.3, 0.9),), seeds=(1, 2))
    cell = escape.cell_list[0]
    settings = escape_run_settings(transformer, phase, escape, cell, "batch_size", 4)
    narrowed = escape_phase(phase, escape, cell)
    outputs = train_cell(settings, narrowed.stop, narrowed.measures.smooth, progress=False)
    rows = sweep_runs(settings, "batch_size", outputs, narrowed)
    assert list(rows.columns) == COLUMNS and rows.seed.tolist() == [1, 2]
    assert (rows.value == 4).all() and (rows.batch_size == 4).all() and (rows.sigma == transformer.sigma).all()
    measured = measure_runs({cell: outputs}, narrowed)
    for column in ("escaped", "escape", "drop_end", "plateau_length", "steps_run"):
        assert rows[column].tolist() == pytest.approx(measured[column].tolist(), nan_ok=True)
    assert (rows.horizon == 30).all() and (rows.cpu_s > 0).all()


# --- per seed ------------------------------------------------------------------------------------


def sweep_rows(sweep, escapes):
    return pd.DataFrame(runs((0.5, 0.8), 1, escapes if sweep == "sigma" else {}, escapes if sweep != "sigma" else {}))


def test_the_sigma_slope_is_least_squares_over_the_values_that_escaped():
    assert sigma_slope(sweep_rows("sigma", sigma_sweep())) == pytest.approx(100.0)
    falling = {s: 1000 - 100 * np.log(1 / s) for s in SIGMAS}
    assert sigma_slope(sweep_rows("sigma", falling)) == pytest.approx(-100.0)
    two = {0.005: None, 0.01: None, 0.02: saddle(0.02), 0.04: saddle(0.04)}  # the rest never escaped
    assert sigma_slope(sweep_rows("sigma", two)) == pytest.approx(100.0)
    assert np.isnan(sigma_slope(sweep_rows("sigma", {**two, 0.02: None})))  # one value: not checkable
    assert sigma_slope(sweep_rows("sigma", {s: 18.0 for s in SIGMAS})) == 0.0  # flat: exactly 0, no rounding


@pytest.mark.parametrize(
    "escapes, ratio, bound, free",
    [
        ((500, 520, 600), 1.2, False, 1.0),  # batch-independent
        ((500, 900, 1500), 3.0, False, 0.0),  # slows with the batch
        ((500, 900, None), 6.0, True, 0.0),  # never escaped at 256: the horizon, >= 6 > 2, tells
        ((2000, 2500, None), 1.5, True, np.nan),  # a lower bound of 1.5 <= 2 cannot tell
        ((None, 900, 1000), np.nan, False, np.nan),  # the smallest batch never escaped
        ((None, 900, None), np.nan, False, np.nan),  # ... nor did the largest: still no ratio, and no bound
        ((500, 800, 1000), 2.0, False, 1.0),  # exactly the factor: batch-independent
        ((500, 800, None), HORIZON / 500, True, 0.0),
        ((1500, 2000, None), 2.0, True, np.nan),  # a lower bound of exactly the factor cannot tell
        ((0, 900, 1000), np.nan, False, np.nan),  # escaped at 0: no ratio to take
        ((1, 2, 3), 3.0, False, 0.0),
    ],
)
def test_the_batch_ratio_and_what_it_tells(escapes, ratio, bound, free):
    got, got_bound = batch_ratio(sweep_rows("batch_size", batch_sweep(*escapes)))
    assert got == pytest.approx(ratio, nan_ok=True) and got_bound is bound
    assert batch_free(got, got_bound, 2.0) == pytest.approx(free, nan_ok=True)


# --- per cell ------------------------------------------------------------------------------------

SADDLE_CELL = ((0.5, 0.8), [(sigma_sweep(), batch_sweep(500, 520, 600))] * 3)
NOISE_CELL = ((0.8, 0.5), [(sigma_sweep(), batch_sweep(500, 1500, None))] * 3)
FLAT = {s: 700.0 - 10 * np.log(1 / s) for s in SIGMAS}
NEITHER_CELL = ((0.7, 0.6), [(FLAT, batch_sweep(700, 710, 720))] * 2 + [(sigma_sweep(), batch_sweep(500, 500, 500))])
NEVER = ({s: None for s in SIGMAS}, batch_sweep(None, None, None))
NONE_CELL = ((0.9, 0.9), [NEVER] * 3)
# Sigma: seed 1 grows, seeds 2 (one value escaped) and 3 cannot be told; batch: seed 1 1.2, seed 2 3.2, seed 3 never.
SPLIT_CELL = (
    (0.6, 0.9),
    [
        (sigma_sweep(), batch_sweep(500, 500, 600)),
        ({**{s: None for s in SIGMAS}, 0.04: 300.0}, batch_sweep(500, 500, 1600)),
        NEVER,
    ],
)
ESCAPE = table(SADDLE_CELL, NOISE_CELL, NEITHER_CELL, NONE_CELL, SPLIT_CELL)


def test_each_cell_gets_the_explanation_its_seeds_support():
    cells = cell_tests(ESCAPE, 2.0).set_index(["p", "q"])
    assert cells.explanation.to_dict() == {
        (0.5, 0.8): "saddle",
        (0.8, 0.5): "noise",
        (0.7, 0.6): "neither",  # 2 of 3 seeds do not grow; every seed batch-independent
        (0.9, 0.9): "not checkable",
        (0.6, 0.9): "noise",  # batch-independent in 1 of the 2 seeds that can be told: no strict majority
    }
    split = cells.loc[(0.6, 0.9)]
    assert (split.grows_told, split.grows_hold, bool(split.grows)) == (1, 1, True)
    assert (split.batch_told, split.batch_hold, bool(split.batch_free)) == (2, 1, False)
    none = cells.loc[(0.9, 0.9)]
    assert none.grows is None and none.batch_free is None and none.grows_told == 0


@pytest.mark.parametrize(
    "grows, free, expected",
    [(True, True, "saddle"), (None, False, "noise"), (True, False, "noise"), (False, True, "neither"),
     (None, True, "not checkable"), (True, None, "not checkable"), (None, None, "not checkable")],
)  # fmt: skip
def test_the_explanation_of_two_verdicts(grows, free, expected):
    assert explanation(grows, free) == expected


def test_the_claims_per_cell_are_the_verdicts_of_the_seeds_that_can_be_told():
    settings = dataclasses.replace(SETTINGS, cells=tuple(dict.fromkeys(zip(ESCAPE.p, ESCAPE.q))))
    claims = {claim.claim_id: claim for claim in escape_claims(ESCAPE, settings)}
    assert len(claims) == 2 * 5
    assert claims["5i (p=0.5, q=0.8)"].holds and claims["5b (p=0.5, q=0.8)"].holds
    assert claims["5i (p=0.5, q=0.8)"].measured == pytest.approx(100.0) and claims["5i (p=0.5, q=0.8)"].n_runs == 3
    assert claims["5i (p=0.8, q=0.5)"].holds and not claims["5b (p=0.8, q=0.5)"].holds
    assert claims["5b (p=0.8, q=0.5)"].kind == "checked" and "ratio >= 6" in claims["5b (p=0.8, q=0.5)"].reason
    assert not claims["5i (p=0.7, q=0.6)"].holds and claims["5b (p=0.7, q=0.6)"].holds
    for claim in ("5i", "5b"):
        row = claims[f"{claim} (p=0.9, q=0.9)"]
        assert row.kind == "not checkable" and not row.holds and row.reason.startswith("no seed can be told")
    assert claims["5i (p=0.6, q=0.9)"].n_runs == 1 and claims["5i (p=0.6, q=0.9)"].holds
    assert claims["5b (p=0.6, q=0.9)"].n_runs == 2 and not claims["5b (p=0.6, q=0.9)"].holds
    statement = claims["5b (p=0.5, q=0.8)"].statement
    assert "at batch 16 it comes at most 2 times later than at batch 4" in statement and "sigma 0.02" in statement
    assert "sigma 0.005, 0.01, 0.02, 0.04 at batch 16" in claims["5i (p=0.5, q=0.8)"].statement


def test_every_escape_claim_names_its_cell_figure_and_spec_in_the_tables_order():
    settings = dataclasses.replace(SETTINGS, cells=tuple(dict.fromkeys(zip(ESCAPE.p, ESCAPE.q))))
    claims = escape_claims(ESCAPE, settings)
    cells = [f"p={p:g}, q={q:g}" for p, q in dict.fromkeys(zip(ESCAPE.p, ESCAPE.q))]  # not sorted
    assert [c.claim_id for c in claims] == [f"{kind} ({cell})" for cell in cells for kind in ("5i", "5b")]
    for claim in claims:
        assert (claim.paper, claim.figure, claim.spec) == (PAPER.name, ESCAPE_FIGURE, BEYOND_THE_PAPER)
        p, q = claim.claim_id.removesuffix(")").split("(")[1].replace("p=", "").replace("q=", "").split(", ")
        assert claim.statement.startswith(f"Standard init, (p, q) = ({p}, {q}): the escape ")
    byid = {c.claim_id: c for c in claims}
    grows, free = byid["5i (p=0.6, q=0.9)"], byid["5b (p=0.6, q=0.9)"]
    assert grows.threshold.startswith("least-squares slope of the escape iteration against log(1/sigma) > 0")
    assert grows.threshold.endswith("(per seed; at least 2)")
    assert (
        grows.reason
        == "seed 1 slope 100; seed 2 fewer than 2 sigma values escaped; seed 3 fewer than 2 sigma values escaped"
    )
    assert free.threshold.startswith("escape at batch 16 / escape at batch 4 <= 2 (per seed; a run that never escaped")
    assert free.reason == "seed 1 ratio 1.2; seed 2 ratio 3.2; seed 3 batch 4 never escaped"
    assert byid["5b (p=0.8, q=0.5)"].reason.startswith("seed 1 ratio >= 6; seed 2 ratio >= 6")
    assert "; a noise-driven escape slows with a bigger batch." in free.statement


def test_the_findings_name_each_cells_explanation():
    text = escape_findings(ESCAPE, 2.0)
    assert "- **(0.5, 0.8): saddle.** Growth with log(1/sigma) holds in 3 of the 3 seeds (of 3) that can" in text
    assert "- **(0.9, 0.9): not checkable.** Growth with log(1/sigma) cannot be told in any of the 3 seeds" in text
    assert "Batch independence holds in 1 of the 2 seeds (of 3) that can be told" in text
    assert "escape by sigma 0.005: >= 3000, 0.01: >= 3000, 0.02: >= 3000, 0.04: 372" in text  # 1 of 3 never: exact
    assert "escape by batch 4: 500, 8: 1500, 16: >= 3000" in text
    assert "saddle: 1 ((0.5, 0.8)); noise: 2 ((0.8, 0.5), (0.6, 0.9)); neither: 1 ((0.7, 0.6))" in text


def test_each_cells_finding_lists_its_own_seeds_slopes_ratios_and_medians():
    text = escape_findings(ESCAPE, 2.0)
    assert text.startswith(
        "## What decides the escape\n\nWritten by the pipeline from `results/local_to_global/plateau/escape.csv`"
    )
    assert "(5b: at the largest batch at most 2 times later than at the smallest)" in text
    lines = {line.split(":")[0]: line for line in text.splitlines() if line.startswith("- **(")}
    saddle, none, split = lines["- **(0.5, 0.8)"], lines["- **(0.9, 0.9)"], lines["- **(0.6, 0.9)"]
    assert "(slopes, iterations per unit of log(1/sigma): 100, 100, 100)" in saddle
    assert "(largest over smallest batch: 1.2, 1.2, 1.2)" in saddle  # no bound: no ">="
    assert "(slopes, iterations per unit of log(1/sigma): none)" in none  # not the seeds of (0.6, 0.9)
    assert "(largest over smallest batch: none)" in none
    assert "(slopes, iterations per unit of log(1/sigma): 100);" in split
    assert "(largest over smallest batch: 1.2, 3.2)" in split
    assert "(largest over smallest batch: >= 6, >= 6, >= 6)" in lines["- **(0.8, 0.5)"]
    backwards = escape_findings(ESCAPE.iloc[::-1], 2.0)  # the medians stay in the order of the values
    assert "escape by sigma 0.005: 580, 0.01: 511, 0.02: 441, 0.04: 372." in backwards
    assert "escape by batch 4: 500, 8: 520, 16: 600." in backwards
    assert text.endswith("not checkable: 1 ((0.9, 0.9)).\n")


def test_the_figure_draws_every_run_and_never_escaped_ones_at_the_horizon():
    figure, data = escape_figure(ESCAPE, 2.0)
    assert len(data) == len(ESCAPE)
    merged = data.merge(ESCAPE, on=["sweep", "p", "q", "value", "seed"], suffixes=("", "_table"))
    assert len(merged) == len(ESCAPE)
    assert (merged.escape_plotted == merged.escape.where(merged.escaped_table, HORIZON)).all()
    sigma = merged[merged.sweep == "sigma"]
    assert np.allclose(sigma.x, np.log(1 / sigma.value))
    for _, group in merged.groupby(["sweep", "p", "q", "value"]):
        assert (group["median"] == group.escape_plotted.median()).all()
        assert (group.median_bound == ((~group.escaped_table).sum() * 2 >= len(group))).all()


def test_a_cells_standard_init_runs_do_not_depend_on_its_other_inits():
    """config/variants/plateau.yaml trains only the grid's standard-init runs: they are the same
    numbers as when the cell job trains ours beside them."""
    tiny = {**SMALL_RUN_TRAINING, "model": {"d": 4, "context": 16, "mlp_ratio": 4}, "chunk": 5}
    section = schema_defaults({"local_to_global": {"transformer": tiny}})["local_to_global"]
    transformer = transformer_settings(section)
    phase = dataclasses.replace(phase_settings(section), horizon=40, eval_every=2, seeds=(2,))
    cell = Cell.keyed(0.3, 0.9)
    runs = []
    for inits in (("ours", "standard"), ("standard",)):
        settings = phase_run_settings(transformer, dataclasses.replace(phase, inits=inits), cell)
        outputs = train_cell(settings, phase.stop, phase.measures.smooth, progress=False)
        runs.append(outputs.evaluations[outputs.evaluations.init == "standard"].reset_index(drop=True))
    assert len(runs[0]) > 0
    pd.testing.assert_frame_equal(runs[0], runs[1])


@pytest.mark.parametrize("never, bound", [(0, False), (1, False), (2, True), (3, True), (4, True)])
def test_the_median_escape_is_a_lower_bound_once_half_the_runs_never_escaped(never, bound):
    escapes = [100.0, 200.0, 300.0, 400.0]
    frame = pd.DataFrame(
        {
            "escaped": [i >= never for i in range(4)],
            "escape": [np.nan if i < never else e for i, e in enumerate(escapes)],
            "horizon": HORIZON,
        }
    )
    median, is_bound = median_escape(frame)
    assert is_bound is bound
    assert median == pytest.approx(np.median([HORIZON if i < never else e for i, e in enumerate(escapes)]))


def test_a_seed_grows_only_for_a_positive_slope_and_a_bound_it_cannot_tell_stays_untold():
    level = {s: 700.0 for s in SIGMAS}  # the same escape at every sigma: slope exactly 0
    gentle = {s: 700.0 + 0.5 * np.log(1 / s) for s in SIGMAS}  # slope 0.5: grows, if slowly
    frame = table(((0.5, 0.8), [(level, batch_sweep(1500, 2000, None)), (gentle, batch_sweep(500, 520, 600))]))
    seeds = seed_tests(frame, 2.0).set_index("seed")
    assert seeds.loc[1, "slope"] == 0.0 and seeds.loc[1, "grows"] == 0.0
    assert seeds.loc[2, "slope"] == pytest.approx(0.5) and seeds.loc[2, "grows"] == 1.0
    assert seeds.loc[1, "ratio"] == 2.0 and bool(seeds.loc[1, "ratio_bound"]) and np.isnan(seeds.loc[1, "batch_free"])
    assert seeds.loc[2, "batch_free"] == 1.0


def test_the_escape_findings_say_how_they_were_measured_and_end_with_the_counts():
    text = escape_findings(ESCAPE, 2.0)
    intro = (
        "Written by the pipeline from `results/local_to_global/plateau/escape.csv`: the standard init's runs "
        "trained again with the init's scale sigma or the batch size changed (the phase grid's horizon, stopping "
        "rule and escape measure). A saddle escape grows with log(1/sigma) (5i) and does not depend on the batch "
        "(5b: at the largest batch at most 2 times later than at the smallest); a noise-driven escape slows with "
        "a bigger batch. Escape iterations below are medians over seeds, a run that never escaped counted at the "
        "horizon (`>=`: a lower bound, half the seeds or more never escaped).\n\n- **("
    )
    assert f"## What decides the escape\n\n{intro}" in text
    assert ".\n\nCells per explanation: saddle: 1" in text
