"""Measures of the phase diagram on constructed loss curves: a plateau then an escape, a run that
never escapes, a run straight to the entropy rate, the stopping rule's stretch, resolvability; the
final structure of a run; the grid's cells and a cell's run settings."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from helpers import l2g_transformer
from replication.papers.local_to_global.markov import MarkovChain
from replication.papers.local_to_global.phase.grid import Cell
from replication.papers.local_to_global.phase.measures import (
    CellOutputs,
    closed_fraction,
    final_structure,
    gap,
    on_plateau_at,
    resolvable,
    run_measures,
    settled_since,
)
from replication.papers.local_to_global.phase.prediction import canonical_prediction
from replication.papers.local_to_global.phase.settings import (
    MeasureSettings,
    PhaseSettings,
    StopSettings,
    phase_run_settings,
)
from replication.papers.local_to_global.phase.tables import _tail, measure_runs, summarise_cells
from replication.papers.local_to_global.transformer.settings import ExperimentSettings, TrainingSettings

CHAIN = MarkovChain(0.5, 0.8)
MEASURES = MeasureSettings(escape=0.5, drop=0.5, smooth=5, resolution=10.0)
STEPS = np.arange(0, 1001, 10)


def curves(model_excess, noise=0.0, seed=0, gap_noise=0.0):
    """Evaluations whose model loss sits ``model_excess`` (in units of the gap) above the chain's
    loss; the chain's and unigram predictor's batch losses share one noise draw per batch, and
    the batch gap between them scatters by ``gap_noise``."""
    rng = np.random.default_rng(seed)
    chain_loss = CHAIN.bigram_loss + noise * rng.standard_normal(len(STEPS))
    unigram_loss = chain_loss + gap(CHAIN) + gap_noise * rng.standard_normal(len(STEPS))
    return pd.DataFrame(
        {
            "step": STEPS,
            "test_loss": chain_loss + np.asarray(model_excess, dtype=float) * gap(CHAIN),
            "chain_loss": chain_loss,
            "unigram_loss": unigram_loss,
        }
    )


def plateau_then_escape(drop_end=100, escape=600):
    """From 2 gaps above the entropy rate down to the plateau (1 gap) by ``drop_end``, on it until
    ``escape - 50``, then linearly down to the entropy rate by ``escape + 50``."""
    excess = np.interp(STEPS, [0, drop_end, escape - 50, escape + 50], [2.0, 1.0, 1.0, 0.0])
    return excess


def test_a_plateau_then_an_escape():
    measures = run_measures(curves(plateau_then_escape()), CHAIN, MEASURES, reached=0.9, tail=10)
    # The trailing mean of 5 evaluations (40 iterations) delays each threshold by about 20 iterations.
    assert 50 <= measures["drop_end"] <= 100
    assert measures["escaped"] and not measures["censored"]
    assert 600 <= measures["escape"] <= 640
    assert measures["plateau_length"] == measures["escape"] - measures["drop_end"]
    assert measures["reached"] and measures["final_closed"] == pytest.approx(1.0)
    assert measures["final_excess"] == pytest.approx(0.0, abs=1e-12)


def test_a_run_that_never_escapes_is_censored_at_its_last_step():
    excess = np.interp(STEPS, [0, 100, 1000], [2.0, 1.0, 1.0])
    measures = run_measures(curves(excess), CHAIN, MEASURES, reached=0.9, tail=10)
    assert not measures["escaped"] and measures["censored"] and np.isnan(measures["escape"])
    assert measures["plateau_length"] == 1000 - measures["drop_end"]
    assert not measures["reached"] and measures["final_closed"] == pytest.approx(0.0)
    frame = pd.DataFrame([measures])
    assert on_plateau_at(frame, 600).item() and on_plateau_at(frame, 1000).item()


def test_on_plateau_at_a_step_counts_escapes_up_to_that_step():
    frame = pd.DataFrame({"escaped": [True, True, False], "escape": [300.0, 700.0, np.nan]})
    assert list(on_plateau_at(frame, 600)) == [False, True, True]
    assert list(on_plateau_at(frame, 700)) == [False, False, True]


def test_a_run_straight_to_the_entropy_rate_has_no_plateau():
    excess = np.interp(STEPS, [0, 100], [2.0, 0.0])
    measures = run_measures(curves(excess), CHAIN, MEASURES, reached=0.9, tail=10)
    assert measures["escaped"]
    # The "plateau" is only the passage from 1.5 gaps (end of the drop) to 0.5 (half closed): 50 iterations.
    assert measures["plateau_length"] == pytest.approx(50, abs=10)


def test_the_closed_fraction_cancels_the_batch_noise_at_both_ends():
    noisy = 0.01  # a batch-to-batch noise of a fifth of the gap (0.047 nats)
    at_plateau = closed_fraction(
        *curves(np.ones(len(STEPS)), noise=noisy)[["test_loss", "chain_loss", "unigram_loss"]].T.values, 1
    )
    at_rate = closed_fraction(
        *curves(np.zeros(len(STEPS)), noise=noisy)[["test_loss", "chain_loss", "unigram_loss"]].T.values, 1
    )
    np.testing.assert_allclose(at_plateau, 0.0, atol=1e-12)
    np.testing.assert_allclose(at_rate, 1.0, atol=1e-12)
    # Against the fixed population losses the same batches scatter by noise / gap.
    measures = run_measures(curves(np.zeros(len(STEPS)), noise=noisy), CHAIN, MEASURES, reached=0.9, tail=50)
    assert measures["noise_closed"] < 1e-9
    assert measures["noise_closed_fixed"] == pytest.approx(noisy / gap(CHAIN), rel=0.3)


def test_closed_fraction_sums_over_the_trailing_window():
    model, chain, unigram = np.array([1.0, 1.0, 0.0]), np.zeros(3), np.array([1.0, 3.0, 1.0])
    # Window 2: (u - m) summed / (u - c) summed: [0/1, (0+2)/(1+3), (2+1)/(3+1)].
    np.testing.assert_allclose(closed_fraction(model, chain, unigram, 2), [0.0, 0.5, 0.75])


def test_settled_since_is_the_start_of_the_last_stretch_above_the_threshold():
    steps = np.array([0, 10, 20, 30, 40, 50])
    assert settled_since(steps, np.array([0.0, 0.95, 0.5, 0.92, 0.95, 0.99]), 0.9) == 30
    assert settled_since(steps, np.full(6, 0.95), 0.9) == 0
    assert settled_since(steps, np.array([0.95, 0.95, 0.95, 0.95, 0.95, 0.2]), 0.9) is None


@pytest.mark.parametrize(
    ("noise", "expected"),
    [(0.001, True), (0.02, False)],
)
def test_a_cell_is_resolvable_only_when_its_gap_exceeds_the_noise(noise, expected):
    # Gap 0.047; the smoothed noise is noise / sqrt(5): 0.00045 (x105 below) or 0.0089 (x5.3 below).
    assert resolvable(gap(CHAIN), noise, MEASURES) is expected


def test_the_noise_measured_on_the_batches_decides_resolvability():
    quiet = run_measures(curves(np.ones(len(STEPS)), gap_noise=0.001), CHAIN, MEASURES, reached=0.9, tail=10)
    loud = run_measures(curves(np.ones(len(STEPS)), gap_noise=0.03, seed=1), CHAIN, MEASURES, reached=0.9, tail=10)
    assert quiet["noise_gap"] == pytest.approx(0.001, rel=0.25)
    assert loud["noise_gap"] == pytest.approx(0.03, rel=0.25)
    assert resolvable(gap(CHAIN), quiet["noise_gap"], MEASURES)
    assert not resolvable(gap(CHAIN), loud["noise_gap"], MEASURES)


def small_grid(p: tuple[float, ...], q: tuple[float, ...]) -> PhaseSettings:
    """A phase grid over ``p`` x ``q``, both inits, two seeds, 100 iterations."""
    return PhaseSettings(
        p=p,
        q=q,
        inits=("standard", "ours"),
        seeds=(1, 2),
        horizon=100,
        eval_every=10,
        window=50,
        stop=StopSettings(closed=0.9, patience=20),
        measures=MEASURES,
    )


def test_the_grid_leaves_out_the_line_and_names_cells_both_ways():
    phase = small_grid(p=(0.1, 0.2, 0.7), q=(0.3, 0.8, 0.9))
    cells = [cell.key for cell in phase.cells]
    # 0.7 + 0.3 misses 1 by rounding only
    assert (0.1, 0.9) not in cells and (0.2, 0.8) not in cells and (0.7, 0.3) not in cells
    assert len(cells) == 9 - 3
    assert phase.runs == [("standard", 1), ("standard", 2), ("ours", 1), ("ours", 2)]
    for cell in phase.cells:
        assert Cell.named(cell.name) == cell == Cell.keyed(*cell.key)
    cell = Cell(MarkovChain(0.1, 0.9))
    assert (cell.name, cell.key, cell.label) == ("p0.1_q0.9", (0.1, 0.9), "p=0.1, q=0.9")


def test_a_cells_run_settings_are_made_as_a_figures_are():
    """The transformer's shared settings as a figure's run gets them, the cell's runs, and a one-cycle
    schedule over the horizon."""
    transformer = l2g_transformer({})
    phase = small_grid(p=(0.2,), q=(0.3,))
    cell = phase.cells[0]
    run = phase_run_settings(transformer, phase, cell)
    figure = transformer.run("fig4")
    for field in dataclasses.fields(TrainingSettings):
        if field.name != "schedule":
            assert getattr(run, field.name) == getattr(figure, field.name), field.name
    assert run.schedule == dataclasses.replace(transformer.schedule, horizon=100)
    assert {field.name: getattr(run, field.name) for field in dataclasses.fields(ExperimentSettings)} == {
        "chain": MarkovChain(0.2, 0.3),
        "inits": ("standard", "ours"),
        "seeds": (1, 2),
        "steps": 100,
        "eval_every": 10,
        "checkpoints": (),
    }
    assert run.embedding == figure.embedding == "scalar"


def test_final_structure_of_a_rank_one_run():
    e = np.array([0.5, -0.5, 0.5, 0.5])
    final = {
        "standard/seed1/e": e,
        "standard/seed1/W_1": np.outer(np.arange(1.0, 17.0), e),  # rank one, input side e
        "standard/seed1/W_V": np.outer(e, [1.0, 2.0, 0.0, 1.0]),  # rank one, output side e
    }
    structure = final_structure(final, "standard", 1)
    assert structure == pytest.approx({"share_W_1": 1.0, "share_W_V": 1.0, "cos_e_W_1": 1.0, "cos_e_W_V": 1.0})


def test_the_canonical_prediction_by_init_and_side():
    assert canonical_prediction("standard", 0.6, 0.6) is True
    assert canonical_prediction("standard", 0.2, 0.3) is False
    assert canonical_prediction("ours", 0.6, 0.6) is False
    assert canonical_prediction("ours", 0.2, 0.3) is None
    assert canonical_prediction("rank_one", 0.6, 0.6) is None


def hand_run(closed, gaps=(1.0, 2.0, 1.0, 2.0, 1.0)):
    """Evaluations with the given unsmoothed closed fractions and batch gaps u - c (dyadic numbers:
    every fraction is exact); the chain's losses vary from batch to batch."""
    chain_loss = np.array([0.25, 0.5, 0.0, 0.75, 0.125])
    gaps = np.asarray(gaps)
    unigram_loss = chain_loss + gaps
    model_loss = unigram_loss - np.asarray(closed) * gaps
    steps = np.arange(0, 50, 10)
    return pd.DataFrame(
        {"step": steps, "test_loss": model_loss, "chain_loss": chain_loss, "unigram_loss": unigram_loss}
    )


def sample_std(values) -> float:
    values = np.asarray(values, dtype=float)
    return float(np.sqrt(((values - values.mean()) ** 2).sum() / (len(values) - 1)))


def test_the_measures_of_a_hand_made_run():
    """No smoothing: the drop ends where the closed fraction first reaches -drop, the escape where it
    first reaches ``escape`` (here only at the last evaluation), both thresholds inclusive."""
    settings = MeasureSettings(escape=0.5, drop=0.5, smooth=1, resolution=10.0)
    closed = [-1.0, -0.5, 0.25, 0.375, 0.5]
    frame = hand_run(closed)
    measures = run_measures(frame, CHAIN, settings, reached=0.5, tail=3)
    assert (measures["last_step"], measures["drop_end"], measures["escape"]) == (40, 10, 40.0)
    assert measures["escaped"] and not measures["censored"] and measures["plateau_length"] == 30.0
    assert measures["final_closed"] == 0.5 and measures["reached"]  # at the threshold: reached
    assert measures["noise_gap"] == pytest.approx(sample_std(frame.unigram_loss - frame.chain_loss))
    assert measures["noise_closed"] == pytest.approx(sample_std(closed[-3:]))  # 0.125
    fixed = (CHAIN.unigram_loss - frame.test_loss.to_numpy()[-3:]) / gap(CHAIN)
    assert measures["noise_closed_fixed"] == pytest.approx(sample_std(fixed))
    never = run_measures(hand_run([-1.0, -0.75, -0.625, -0.75, -0.875]), CHAIN, settings, reached=0.5, tail=3)
    assert never["drop_end"] == 40 and not never["escaped"] and never["plateau_length"] == 0.0


@pytest.mark.parametrize("noise, expected", [(0.5, True), (0.5 + 1e-9, False)])
def test_a_gap_exactly_at_the_resolution_is_resolvable(noise, expected):
    """The trailing mean of 4 batches has noise / 2: a gap of 0.5 against a noise of 0.5 at a
    resolution of 2 sits exactly at the bound."""
    settings = MeasureSettings(escape=0.5, drop=0.5, smooth=4, resolution=2.0)
    assert resolvable(0.5, noise, settings) is expected


@pytest.mark.parametrize("patience, tail", [(10, 3), (35, 3), (40, 4)])
def test_the_noise_tail_is_the_patience_in_evaluations_at_least_three(patience, tail):
    phase = dataclasses.replace(small_grid((0.8,), (0.7,)), stop=StopSettings(closed=0.9, patience=patience))
    assert _tail(phase) == tail


def test_the_cell_table_pools_the_noise_and_keeps_the_runs_order():
    """Cells and inits in the order of measures.csv (not sorted); the noise of a cell is the root mean
    square over both inits' runs; a median escape only where every seed escaped."""
    rows = []
    for p, q in ((0.8, 0.7), (0.2, 0.3)):
        for init, noise, escapes in (("standard", 0.3, (600.0, np.nan)), ("ours", 0.4, (100.0, 300.0))):
            for seed, escape in zip((1, 2), escapes):
                rows.append(
                    {"p": p, "q": q, "init": init, "seed": seed, "noise_gap": noise, "escaped": not np.isnan(escape),
                     "escape": escape, "plateau_length": 100.0 * seed, "censored": np.isnan(escape),
                     "on_plateau_window": seed == 1, "on_plateau_horizon": False, "reached": seed == 2,
                     "final_excess": 0.1 * seed, "noise_closed": 0.01 * seed, "noise_closed_fixed": 0.02 * seed,
                     "steps_run": 400 * seed}
                )  # fmt: skip
    phase = small_grid((0.2, 0.8), (0.3, 0.7))
    cells = summarise_cells(pd.DataFrame(rows), phase)
    assert list(zip(cells.p, cells.q, cells.init)) == [
        (0.8, 0.7, "standard"), (0.8, 0.7, "ours"), (0.2, 0.3, "standard"), (0.2, 0.3, "ours")
    ]  # fmt: skip
    assert cells.noise_gap.tolist() == pytest.approx([np.sqrt((0.3**2 + 0.4**2) / 2)] * 4)
    assert np.isnan(cells.median_escape[0]) and cells.median_escape[1] == 200.0
    assert cells.censored.tolist() == [1, 0, 1, 0] and cells.seeds.tolist() == [2] * 4
    assert cells.median_final_excess.tolist() == pytest.approx([0.15] * 4)
    assert cells.noise_closed.tolist() == pytest.approx([0.015] * 4)
    assert cells.noise_closed_fixed.tolist() == pytest.approx([0.03] * 4)
    assert cells.steps_run.tolist() == [1200] * 4 and cells.steps_horizon.tolist() == [2 * phase.horizon] * 4
    assert cells.on_plateau_window.tolist() == [0.5] * 4 and cells.reached.tolist() == [0.5] * 4


def test_the_run_table_has_a_row_per_run_in_the_cells_order_with_its_plateau_at_window_and_horizon():
    e = np.array([0.5, -0.5, 0.5, 0.5])
    runs = [("standard", 2, plateau_then_escape(escape=600), True), ("standard", 1, np.ones(len(STEPS)), False),
            ("ours", 1, plateau_then_escape(escape=800), False)]  # fmt: skip
    evaluations = pd.concat([curves(excess).assign(init=init, seed=seed) for init, seed, excess, _ in runs])
    table = pd.DataFrame(
        [{"init": init, "seed": seed, "steps_run": 1000, "stopped_early": stopped} for init, seed, _, stopped in runs]
    )
    weights = (("e", e), ("W_1", np.outer(np.arange(1.0, 17.0), e)), ("W_V", np.outer(e, e)))
    final = {f"{init}/seed{seed}/{name}": value for init, seed, _, _ in runs for name, value in weights}
    phase = dataclasses.replace(small_grid((0.5,), (0.8,)), horizon=1000, window=700, measures=MEASURES)
    frame = measure_runs({Cell.keyed(0.5, 0.8): CellOutputs(evaluations, table, final)}, phase)
    assert list(zip(frame.init, frame.seed)) == [("standard", 2), ("standard", 1), ("ours", 1)]
    assert frame.stopped_early.tolist() == [True, False, False]
    assert frame.on_plateau_window.tolist() == [False, True, True]  # the escape near 620 is before 700, 820 not
    assert frame.on_plateau_horizon.tolist() == [False, True, False]
    assert frame.escape[0] == pytest.approx(620, abs=20) and frame.escape[2] == pytest.approx(820, abs=20)
