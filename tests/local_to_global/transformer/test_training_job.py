"""A training rule's job run in process: its log and threads set up first, then the run of its
wildcards' init and seed trained and written (the losses CSV, the checkpoints); and a plain
Monitor, which never ends a run early."""

import logging
from types import SimpleNamespace

import numpy as np
import pandas as pd

import replication.compute
import replication.io
from helpers import training_settings
from replication.papers.local_to_global.transformer.settings import run_settings
from replication.papers.local_to_global.transformer.train import Monitor, train, training_job

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
