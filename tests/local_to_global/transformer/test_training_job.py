"""A training rule's job run in process: its log and threads set up first, then the run of its
wildcards' init and seed trained and written (the losses CSV, the checkpoints); a plain Monitor,
which never ends a run early; and the optimiser's state a checkpoint keeps (AdamW's moments, step
and rate)."""

import dataclasses
import logging
from types import SimpleNamespace

import numpy as np
import pandas as pd
import torch

import replication.compute
import replication.io
from helpers import training_settings
from replication.papers.local_to_global.transformer.model import initialise
from replication.papers.local_to_global.transformer.settings import run_settings
from replication.papers.local_to_global.transformer.train import (
    Monitor,
    make_model,
    make_optimizer,
    optimizer_snapshot,
    train,
    training_job,
)

SETTINGS = run_settings(
    {
        **training_settings(),
        "model": {"d": 4, "context": 8, "mlp_ratio": 4},
        "batch_size": 4,
        "chunk": 3,
        "steps": 6,
        "eval_every": 2,
        "checkpoints": [0, 4],
        "chain": {"p": 0.3, "q": 0.9},
        "inits": ["ours"],
        "seeds": [2],
    }
)


def test_a_training_job_trains_and_writes_the_run_of_its_wildcards(tmp_path, monkeypatch, caplog):
    # The job's log and threads are the process's: recorded here, not applied to the test session.
    set_up = []
    monkeypatch.setattr(replication.io, "log_to", lambda path: set_up.append(("log", path)))
    monkeypatch.setattr(
        replication.compute, "prepare_training_job", lambda threads: set_up.append(("threads", threads))
    )
    job = SimpleNamespace(
        log=[str(tmp_path / "job.log")],
        threads=3,
        params=SimpleNamespace(settings=SETTINGS, run="fig4/ours/seed2"),
        wildcards=SimpleNamespace(init="ours", seed="2"),
        output=SimpleNamespace(losses=str(tmp_path / "losses.csv"), checkpoints=str(tmp_path / "checkpoints.npz")),
    )
    with caplog.at_level(logging.INFO, logger="replication"):
        training_job(job)
    assert set_up == [("log", str(tmp_path / "job.log")), ("threads", 3)]
    expected = train(SETTINGS, "ours", 2, progress=False)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "losses.csv"), expected.losses, rtol=1e-9)
    with np.load(tmp_path / "checkpoints.npz") as saved:
        assert sorted(saved) == sorted(expected.checkpoints)
        for name, value in expected.checkpoints.items():
            np.testing.assert_array_equal(saved[name], value)
    assert caplog.messages[0].startswith("run fig4/ours/seed2: {'steps': 6, 'eval_every': 2")
    last = expected.losses.test_loss.iloc[-1]
    assert caplog.messages[1] == f"run fig4/ours/seed2: final test loss {last:.4f} at step 6"


def test_a_plain_monitor_lets_the_run_reach_its_last_step():
    watched = train(SETTINGS, "standard", 1, progress=False, monitor=Monitor())
    assert watched.losses.step.iloc[-1] == 6
    pd.testing.assert_frame_equal(watched.losses, train(SETTINGS, "standard", 1, progress=False).losses)


def _snapshot_after(steps, optimizer_settings, lr):
    """A model and its optimiser after ``steps`` updates on one batch, and optimizer_snapshot of them."""
    settings = dataclasses.replace(SETTINGS, optimizer=optimizer_settings)
    generator = torch.Generator().manual_seed(1)
    model = initialise(make_model(settings), "standard", settings.sigma, generator, settings.rank_one_value)
    optimizer = make_optimizer(model, settings)
    x, y = (torch.randint(0, 2, (2, 8), generator=generator) for _ in range(2))
    for _ in range(steps):
        optimizer.zero_grad()
        model.loss(x, y).backward()
        optimizer.step()
    return model, optimizer, optimizer_snapshot(optimizer, model, lr)


def test_adamws_state_before_its_first_step_is_zero():
    model, _, state = _snapshot_after(0, dataclasses.replace(SETTINGS.optimizer, name="adamw"), float("nan"))
    names = [name for name, _ in model.named_parameters()]
    assert sorted(state) == sorted(
        [f"exp_avg.{n}" for n in names] + [f"exp_avg_sq.{n}" for n in names] + ["adam_step", "adam_lr"]
    )
    for name, param in model.named_parameters():
        assert torch.equal(state[f"exp_avg.{name}"], torch.zeros_like(param))
        assert torch.equal(state[f"exp_avg_sq.{name}"], torch.zeros_like(param))
    assert state["adam_step"].item() == 0.0 and state["adam_lr"].item() == 0.0  # no step yet: no rate
    assert state["adam_step"].dtype == state["adam_lr"].dtype == torch.float64


def test_adamws_state_after_two_steps_is_a_copy_of_its_moments():
    model, optimizer, state = _snapshot_after(2, dataclasses.replace(SETTINGS.optimizer, name="adamw"), 0.004)
    assert state["adam_step"].item() == 2.0 and state["adam_lr"].item() == 0.004
    for name, param in model.named_parameters():
        for key in ("exp_avg", "exp_avg_sq"):
            assert torch.equal(state[f"{key}.{name}"], optimizer.state[param][key])
            assert state[f"{key}.{name}"].data_ptr() != optimizer.state[param][key].data_ptr()
    assert state["exp_avg_sq.W_V"].abs().sum() > 0


def test_another_optimisers_state_is_not_kept():
    assert _snapshot_after(1, dataclasses.replace(SETTINGS.optimizer, name="sgd"), 0.01)[2] == {}
