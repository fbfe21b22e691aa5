"""The training loop (train.py) at tiny sizes (d = 4, context 8, a few steps): every step logged,
the losses table, the NaN guard at step 0 and in the loop, the progress bar, the noise hooks."""

import copy

import numpy as np
import pytest
import torch

from helpers import training_settings
from replication.papers.local_to_global.data import BatchStream, sample_sequences
from replication.papers.local_to_global.markov import MarkovChain
from replication.papers.local_to_global.transformer import train as train_module
from replication.papers.local_to_global.transformer.settings import run_settings
from replication.papers.local_to_global.transformer.train import NonFiniteLoss, train
from replication.perturbation import VARIABLE

CHAIN = MarkovChain(0.2, 0.3)
TINY = {
    **training_settings(),
    "model": {"d": 4, "context": 8, "mlp_ratio": 4},
    "batch_size": 4,
    "chunk": 4,
    "steps": 9,
    "eval_every": 3,
    "checkpoints": [0, 9],
    "chain": {"p": 0.2, "q": 0.3},
    "inits": ["standard"],
    "seeds": [1],
}


def _settings(**changes):
    settings = copy.deepcopy(TINY)
    for key, value in changes.items():
        if isinstance(value, dict):
            settings[key] = {**settings[key], **value}
        else:
            settings[key] = value
    return run_settings(settings)


def test_every_step_is_trained_and_logged_when_the_last_chunk_is_short():
    """9 steps in chunks of 4: 1-4, 5-8, 9. Step 0 has no training loss and no learning rate."""
    result = train(_settings(), "standard", 1, progress=False)
    losses = result.losses
    assert list(losses.columns) == ["step", "lr", "train_loss", "test_loss"]
    assert list(losses.step) == list(range(10))
    assert all(losses[c].dtype == np.float64 for c in ("lr", "train_loss", "test_loss"))
    assert np.isnan(losses.lr[0]) and np.isnan(losses.train_loss[0])
    assert losses.lr[1:].notna().all() and losses.train_loss[1:].notna().all()
    assert list(losses.dropna(subset=["test_loss"]).step) == [0, 3, 6, 9]
    assert list(result.checkpoints["step"]) == [0, 9]
    # the checkpoint at step 9 is the parameters after the ninth update: they moved from step 0
    assert not np.allclose(result.checkpoints["W_1"][0], result.checkpoints["W_1"][1])


def test_without_checkpoints_the_step_array_is_empty():
    result = train(_settings(checkpoints=[]), "standard", 1, progress=False)
    assert list(result.checkpoints) == ["step"]
    assert result.checkpoints["step"].shape == (0,)


def test_the_test_loss_at_step_0_is_the_loss_of_the_initial_model_on_a_fresh_batch():
    """Independent check of the first test loss: the model at checkpoint 0 evaluated on the first
    batch of the test stream (seed stream 2), which is what ``test_loss`` at step 0 must be."""
    settings = _settings()
    result = train(settings, "standard", 1, progress=False)
    model = train_module.make_model(settings)
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(torch.from_numpy(result.checkpoints[name][0]))
        x, y = next(BatchStream(CHAIN, 4, 8, train_module.stream_seed(1, 2), 4))
        expected = model.loss(x, y).item()
    assert result.losses.test_loss[0] == pytest.approx(expected, rel=1e-6)


def test_a_model_that_starts_non_finite_fails_at_step_0_naming_the_run():
    settings = _settings(sigma=1e38)  # logits overflow at the initial parameters
    with pytest.raises(NonFiniteLoss, match=r"^fig3/standard/seed2: test loss is (nan|inf|-inf) at step 0$"):
        train(settings, "standard", 2, name="fig3/standard/seed2", progress=False)


def test_a_test_loss_that_blows_up_is_reported_at_its_step():
    """SGD at lr 1e30: the training loss of step 1 is the initial model's (finite); the update
    blows the parameters up, so the test loss after it (step 1, its own chunk) is the first bad one."""
    settings = _settings(optimizer={"name": "sgd", "lr": 1e30}, schedule={"name": "constant"}, chunk=1, eval_every=1)
    with pytest.raises(NonFiniteLoss, match=r"^blow-up: test loss is (nan|inf|-inf) at step 1$"):
        train(settings, "standard", 7, name="blow-up", progress=False)


def test_the_default_run_name_is_run():
    settings = _settings(optimizer={"name": "sgd", "lr": 1e30}, schedule={"name": "constant"}, eval_every=1000)
    with pytest.raises(NonFiniteLoss, match=r"^run: training loss is (nan|inf|-inf) at step 2$"):
        train(settings, "standard", 7, progress=False)


class FrozenClock:
    """tqdm's clock stopped: no refresh interval ever elapses, so only forced redraws print."""

    def __call__(self):
        return 1000.0


def test_progress_is_shown_by_default_without_a_redraw_per_chunk(capsys, monkeypatch):
    import tqdm.std

    monkeypatch.setattr(tqdm.std, "time", FrozenClock())
    train(_settings(steps=8, chunk=1, eval_every=2), "standard", 1, name="tiny")
    err = capsys.readouterr().err
    assert "tiny" in err and "8/8" in err
    # chunks end at steps 1..7 without printing (the bar is drawn at the start and at the end only)
    assert not any(f" {k}/8 " in err for k in range(1, 8))


def test_each_noise_hook_has_its_own_name(monkeypatch):
    """Under a noise ensemble the initial parameters and every step's parameters are perturbed from
    streams named after the run and the step, so that no two hooks share their noise."""
    calls = []
    monkeypatch.setattr(train_module, "perturb_module", lambda model, name: calls.append(name))
    train(_settings(steps=5), "standard", 1, name="fig4/ours/seed3", progress=False)
    assert len(calls) == 6 and len(set(calls)) == 6
    assert calls[0] == "transformer/fig4/ours/seed3"
    assert all(call.startswith("transformer/fig4/ours/seed3/") for call in calls[1:])
    assert [call.rsplit("/", 1)[1] for call in calls[1:]] == [f"step{k}" for k in range(1, 6)]


def test_noise_members_move_the_run_reproducibly(monkeypatch):
    monkeypatch.setenv(VARIABLE, "2")
    first = train(_settings(), "standard", 1, name="a", progress=False)
    again = train(_settings(), "standard", 1, name="a", progress=False)
    other = train(_settings(), "standard", 1, name="b", progress=False)
    for key in ("e", "W_V"):
        assert np.array_equal(first.checkpoints[key], again.checkpoints[key])
        # another run's name draws other noise from the very first hook on
        assert not np.array_equal(first.checkpoints[key][0], other.checkpoints[key][0])


def test_batch_stream_serves_the_sampled_chunks_in_order():
    """The stream's batches are the chunks of ``sample_sequences`` drawn from its generator, one
    after the other, every batch of a chunk once."""
    chain, chunk = MarkovChain(0.5, 0.8), 3
    stream = BatchStream(chain, batch_size=2, context=5, seed=11, chunk=chunk)
    generator = torch.Generator().manual_seed(11)
    draws = [sample_sequences(chain, (chunk, 2), 6, generator) for _ in range(2)]
    expected = [draw[k] for draw in draws for k in range(chunk)]
    for sequences in expected:
        x, y = next(stream)
        assert torch.equal(x, sequences[:, :-1]) and torch.equal(y, sequences[:, 1:])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_training_on_cuda_keeps_everything_on_the_device_and_returns_host_arrays():
    settings = _settings(device="cuda")
    result = train(settings, "standard", 1, progress=False)
    assert result.losses.train_loss[1:].notna().all()
    assert isinstance(result.checkpoints["e"], np.ndarray)
    stream = BatchStream(CHAIN, 2, 4, 0, 2, device="cuda")
    x, y = next(stream)
    assert x.device.type == "cuda" and y.device.type == "cuda"
