"""Plateau points: which (seed, iteration) are on a run's plateau, and training again to them gives
the phase run's parameters there exactly (the phase grid's stopping rule only watches a run)."""

import dataclasses

import numpy as np
import pandas as pd

from helpers import small_run_settings
from replication.papers.local_to_global.markov import MarkovChain
from replication.papers.local_to_global.phase.settings import StopSettings
from replication.papers.local_to_global.phase.training import GapMonitor
from replication.papers.local_to_global.plateau.points import plateau_points, point_parameters, train_to_points
from replication.papers.local_to_global.plateau.settings import PlateauSettings
from replication.papers.local_to_global.transformer.settings import run_settings
from replication.papers.local_to_global.transformer.train import train


def measures(**runs) -> pd.DataFrame:
    rows = [{"init": "standard", "seed": seed, **values} for seed, values in runs.items()]
    rows.append({"init": "ours", "seed": 1, "drop_end": 0, "escape": 5.0, "escaped": True, "last_step": 40})
    return pd.DataFrame(rows)


def test_points_on_the_plateau_only_with_the_midpoint_of_escaping_runs():
    table = measures(
        **{
            "1": {"drop_end": 20, "escape": 100.0, "escaped": True, "last_step": 200},
            "2": {"drop_end": 40, "escape": np.nan, "escaped": False, "last_step": 300},
        }
    )
    table["seed"] = table.seed.astype(int)
    plateau = PlateauSettings(points=(10, 50, 150), mid_plateau=True, hessian=None)
    points = plateau_points(table, plateau)
    got = {(r.seed, r.step, r.kind) for r in points.itertuples()}
    # seed 1: 10 is before the drop, 150 after the escape; its midpoint (20 + 100) / 2 = 60.
    # seed 2 never escaped: every fixed point after its drop, no midpoint.
    assert got == {(1, 50, "fixed"), (1, 60, "mid"), (2, 50, "fixed"), (2, 150, "fixed")}
    assert points.on_plateau.all()
    assert plateau_points(table, dataclasses.replace(plateau, mid_plateau=False)).kind.eq("fixed").all()
    assert list(points.columns) == ["seed", "step", "kind", "drop_end", "escape", "on_plateau"]
    assert list(points.index) == list(range(len(points)))
    by_seed = points.groupby("seed")[["drop_end", "escape"]].first()
    assert by_seed.drop_end.tolist() == [20, 40]
    assert by_seed.escape.iloc[0] == 100.0 and np.isnan(by_seed.escape.iloc[1])


def test_the_plateau_starts_at_the_drop_end_and_ends_before_the_escape():
    """A point on the drop's last iteration is on the plateau; one on the escape's iteration is not."""
    table = measures(**{"1": {"drop_end": 20, "escape": 100.0, "escaped": True, "last_step": 200}})
    table["seed"] = table.seed.astype(int)
    points = plateau_points(table, PlateauSettings(points=(19, 20, 99, 100), mid_plateau=False, hessian=None))
    assert points.step.tolist() == [20, 99]


def test_a_cell_without_standard_init_runs_has_no_points():
    table = measures()  # only the other init's run
    points = plateau_points(table, PlateauSettings(points=(10, 50), mid_plateau=True, hessian=None))
    assert points.empty and list(points.columns) == ["seed", "step", "kind", "drop_end", "escape", "on_plateau"]


def test_training_again_gives_the_phase_runs_parameters_at_the_points(capsys):
    settings = run_settings(
        {**small_run_settings(), "steps": 40, "eval_every": 2, "checkpoints": [12, 30], "chain": {"p": 0.8, "q": 0.7}}
    )
    settings = dataclasses.replace(settings, schedule=dataclasses.replace(settings.schedule, horizon=40))
    chain = MarkovChain(0.8, 0.7)
    monitor = GapMonitor(chain, StopSettings(closed=0.9, patience=10), smooth=3)
    phase_run = train(settings, "standard", 3, progress=False, monitor=monitor)
    points = pd.DataFrame({"seed": [3, 3], "step": [12, 30], "kind": ["fixed", "fixed"]})
    again = train_to_points(settings, points, progress=False)
    assert capsys.readouterr().err == ""  # no progress bar asked, none shown
    for index, step in enumerate(phase_run.checkpoints["step"]):
        kept = point_parameters(again, 3, int(step))
        parameters = {k: v for k, v in kept.items() if k in phase_run.checkpoints}  # beside AdamW's state
        assert set(parameters) == {k for k in phase_run.checkpoints if k != "step"}
        assert {k for k in kept if k not in parameters} == {
            *(f"{moment}.{name}" for moment in ("exp_avg", "exp_avg_sq") for name in parameters),
            "adam_step",
            "adam_lr",
        }
        assert kept["adam_step"] == step
        for name, value in parameters.items():
            assert np.array_equal(value, phase_run.checkpoints[name][index]), (step, name)


def test_each_seed_is_trained_to_its_own_last_point_in_the_points_order(tiny_run_settings, capsys):
    """One point per seed, seeds listed against their sorted order: each seed's run ends at its point
    (the schedule of a run that long), the arrays follow the points' order, a progress bar names
    each run."""
    points = pd.DataFrame({"seed": [5, 3], "step": [8, 4], "kind": ["fixed", "fixed"]})
    arrays = train_to_points(tiny_run_settings, points)
    assert [key.split("/")[0] for key in arrays][0] == "seed5"
    assert {key.rsplit("/", 1)[0] for key in arrays} == {"seed5/step8", "seed3/step4"}
    err = capsys.readouterr().err
    assert "plateau/seed5" in err and "plateau/seed3" in err
    for seed, step in ((5, 8), (3, 4)):
        run = dataclasses.replace(tiny_run_settings, steps=step, checkpoints=(step,), eval_every=step)
        reference = train(run, "standard", seed, progress=False)
        kept = point_parameters(arrays, seed, step)
        for name, values in reference.checkpoints.items():
            if name != "step":
                assert np.array_equal(kept[name], values[0]), (seed, name)
