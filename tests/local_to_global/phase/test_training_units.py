"""A phase cell's training, in parts: the stopping rule on hand-made evaluations (a stretch that
settles late), the CPU clock, and a cell's runs named on their progress bars, timed within the
call and returned as one table numbered from zero."""

import resource
import time

import numpy as np
import torch

from helpers import training_settings
from replication.papers.local_to_global.markov import MarkovChain
from replication.papers.local_to_global.phase.measures import chain_cross_entropy, unigram_cross_entropy
from replication.papers.local_to_global.phase.settings import StopSettings
from replication.papers.local_to_global.phase.training import GapMonitor, _cpu_seconds, train_cell
from replication.papers.local_to_global.transformer.settings import run_settings

CHAIN = MarkovChain(0.3, 0.9)
NEVER = StopSettings(closed=np.inf, patience=0)
SETTINGS = run_settings(
    {
        **training_settings(),
        "model": {"d": 4, "context": 8, "mlp_ratio": 4},
        "batch_size": 2,
        "chunk": 2,
        "steps": 4,
        "eval_every": 2,
        "checkpoints": [],
        "chain": {"p": CHAIN.p, "q": CHAIN.q},
        "inits": ["standard", "ours"],
        "seeds": [3],
    }
)


def test_the_monitor_stops_a_patience_after_the_stretch_that_settled_last():
    """Evaluations at steps 0, 2, ..., 20: on the plateau (closed 0) up to step 8, at the entropy rate
    (closed 1) from step 10 on; smooth 1, so the stretch starts at 10 and a patience of 4 ends at 14."""
    monitor = GapMonitor(CHAIN, StopSettings(closed=0.9, patience=4), smooth=1)
    generator = torch.Generator().manual_seed(0)
    for step in range(0, 21, 2):
        x, y = (torch.randint(0, 2, (2, 8), generator=generator) for _ in range(2))
        closed = 1.0 if step >= 10 else 0.0
        chain, unigram = chain_cross_entropy(CHAIN, x, y), unigram_cross_entropy(CHAIN, y)
        monitor.evaluated(step, x, y, (unigram - closed * (unigram - chain)).float())
        if step == 12:
            assert not monitor.should_stop(12)
    assert [monitor.should_stop(step) for step in (13, 14, 20)] == [False, True, True]


def test_the_cpu_clock_is_user_plus_system_time():
    before = resource.getrusage(resource.RUSAGE_SELF)
    clock = _cpu_seconds()
    after = resource.getrusage(resource.RUSAGE_SELF)
    assert before.ru_stime > 0  # the interpreter's start-up alone takes system time
    assert before.ru_utime + before.ru_stime <= clock <= after.ru_utime + after.ru_stime


def test_a_cells_runs_are_named_on_their_bars_and_timed_within_the_call(capsys):
    cpu, wall = _cpu_seconds(), time.perf_counter()
    evaluations, runs, _ = train_cell(SETTINGS, NEVER, 1)  # progress bars by default
    cpu, wall = _cpu_seconds() - cpu, time.perf_counter() - wall
    bars = capsys.readouterr().err
    assert "p0.3_q0.9/standard/seed3" in bars and "p0.3_q0.9/ours/seed3" in bars
    assert (runs.cpu_s > 0).all() and runs.cpu_s.sum() <= cpu
    assert (runs.wall_s > 0).all() and runs.wall_s.sum() <= wall
    assert evaluations.index.tolist() == list(range(6))  # two runs of three evaluations, numbered as one table
    assert evaluations[["init", "step"]].values.tolist() == [
        ["standard", 0], ["standard", 2], ["standard", 4], ["ours", 0], ["ours", 2], ["ours", 4]
    ]  # fmt: skip


def test_a_cell_trained_without_progress_bars_writes_none(capsys):
    train_cell(SETTINGS, NEVER, 1, progress=False)
    assert "seed3" not in capsys.readouterr().err
