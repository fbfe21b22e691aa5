"""Training of the phase diagram at tiny sizes: a run that stops early keeps the full horizon's
schedule and equals the full run up to the stop; the chain's own cross-entropy on the test batches
against an independent loop over the same sequences."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from helpers import training_settings
from replication.papers.local_to_global.data import BatchStream
from replication.papers.local_to_global.markov import MarkovChain
from replication.papers.local_to_global.phase.measures import chain_cross_entropy, unigram_cross_entropy
from replication.papers.local_to_global.phase.settings import StopSettings
from replication.papers.local_to_global.phase.training import GapMonitor, train_cell
from replication.papers.local_to_global.transformer.settings import run_settings
from replication.papers.local_to_global.transformer.train import _TEST, Monitor, stream_seed, train

CHAIN = MarkovChain(0.3, 0.9)
TINY = {
    "model": {"d": 4, "context": 16, "mlp_ratio": 4},
    "batch_size": 4,
    **training_settings(),
    "chunk": 5,
    "steps": 30,
    "eval_every": 2,
    "checkpoints": [],
    "chain": {"p": CHAIN.p, "q": CHAIN.q},
    "inits": ["standard", "ours"],
    "seeds": [2],
}
TINY["schedule"] = {**TINY["schedule"], "horizon": 30}
SETTINGS = run_settings(TINY)


class StopAt(Monitor):
    def __init__(self, step):
        self.step = step

    def should_stop(self, step):
        return step >= self.step


def test_a_run_stopped_early_is_the_full_run_up_to_its_stop():
    full = train(SETTINGS, "standard", 1, progress=False)
    stopped = train(SETTINGS, "standard", 1, progress=False, monitor=StopAt(12))
    # Asked at the end of each chunk of 5 steps: the first chunk end at or after 12 is 15.
    assert list(stopped.losses.step) == list(range(16))
    # The learning rate follows the schedule of the full horizon, not one of 15 steps.
    pd.testing.assert_frame_equal(stopped.losses, full.losses.iloc[:16])
    assert stopped.losses.lr.iloc[-1] != pytest.approx(full.losses.lr.iloc[-1])
    for name, value in stopped.final.items():
        assert value.shape == full.final[name].shape
    assert not np.array_equal(stopped.final["e"], full.final["e"])  # 15 more updates changed e


def test_the_gap_monitor_stops_once_closed_for_the_patience():
    # Threshold -inf: every evaluation counts as closed, so the stretch starts at step 0 and the
    # run stops at the first chunk end at least `patience` steps later.
    monitor = GapMonitor(CHAIN, StopSettings(closed=-math.inf, patience=12), smooth=3)
    result = train(SETTINGS, "standard", 1, progress=False, monitor=monitor)
    assert result.losses.step.iloc[-1] == 15
    assert monitor.frame().step.tolist() == list(range(0, 16, 2))
    never = GapMonitor(CHAIN, StopSettings(closed=math.inf, patience=0), smooth=3)
    assert train(SETTINGS, "standard", 1, progress=False, monitor=never).losses.step.iloc[-1] == 30


def _independent_cross_entropy(kernel, sequences):
    """-log P(next | current), one position at a time in plain Python."""
    total, count = 0.0, 0
    for sequence in sequences.tolist():
        for current, following in zip(sequence[:-1], sequence[1:]):
            total -= math.log(kernel[current][following])
            count += 1
    return total / count


def test_the_chains_cross_entropy_on_a_batch_against_a_loop():
    generator = torch.Generator().manual_seed(5)
    x = torch.randint(0, 2, (3, 11), generator=generator)
    y = torch.randint(0, 2, (3, 11), generator=generator)
    kernel = [[1 - CHAIN.p, CHAIN.p], [CHAIN.q, 1 - CHAIN.q]]
    expected = np.mean([-math.log(kernel[a][b]) for a, b in zip(x.flatten().tolist(), y.flatten().tolist())])
    assert chain_cross_entropy(CHAIN, x, y).item() == pytest.approx(expected, rel=1e-12)
    pi = CHAIN.stationary
    assert unigram_cross_entropy(CHAIN, y).item() == pytest.approx(
        np.mean([-math.log(pi[b]) for b in y.flatten().tolist()]), rel=1e-12
    )


def test_a_cells_chain_loss_is_the_cross_entropy_of_its_own_test_batches():
    evaluations, runs, final = train_cell(SETTINGS, StopSettings(closed=math.inf, patience=0), 3, progress=False)
    assert list(runs[["init", "seed"]].itertuples(index=False, name=None)) == [("standard", 2), ("ours", 2)]
    assert (runs.steps_run == 30).all() and not runs.stopped_early.any() and (runs.cpu_s > 0).all()
    assert set(final) >= {"standard/seed2/W_V", "ours/seed2/W_1", "ours/seed2/e"}
    kernel = [[1 - CHAIN.p, CHAIN.p], [CHAIN.q, 1 - CHAIN.q]]
    # The test batches of a run, drawn again from the run's test stream: one per evaluation.
    stream = BatchStream(CHAIN, 4, 16, stream_seed(2, _TEST), 5)
    run = evaluations[(evaluations.init == "standard") & (evaluations.seed == 2)]
    assert len(run) == 16
    for row in run.itertuples():
        x, y = next(stream)
        sequences = torch.cat([x[:, :1], y], dim=1)
        assert row.chain_loss == pytest.approx(_independent_cross_entropy(kernel, sequences), rel=1e-12)
    # The model's test loss of the cell is the plain training loop's.
    plain = train(SETTINGS, "ours", 2, progress=False).losses.dropna(subset=["test_loss"])
    ours = evaluations[(evaluations.init == "ours") & (evaluations.seed == 2)]
    np.testing.assert_allclose(ours.test_loss.to_numpy(), plain.test_loss.to_numpy(), rtol=0, atol=1e-7)
