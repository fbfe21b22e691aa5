"""Training a single-layer transformer on a Markov chain (spec §4): seeded, bulk data, few host syncs.

``settings`` are one run's typed settings (settings.RunSettings: the ``local_to_global.transformer``
config section merged with one experiment; every key is described in the paper's schema.yaml).
"""

from __future__ import annotations

import contextlib
import logging
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from replication.compute import compiling_alone
from replication.perturbation import perturb_module

from ..data import BatchStream
from .model import MarkovTransformer, TransformerConfig, initialise, snapshot, stack_snapshots
from .optimizers import SGD, AdamW, ParameterGroup
from .schedule import schedule_rates
from .settings import RunSettings

log = logging.getLogger("replication")

# Independent random streams of one run, all derived from its seed.
_INIT, _TRAIN, _TEST = range(3)


class NonFiniteLoss(RuntimeError):
    """A training or test loss became NaN or infinite."""


@dataclass
class TrainResult:
    losses: pd.DataFrame  # step, lr, train_loss (update `step`'s batch), test_loss (fresh batch at `step`)
    checkpoints: dict[str, np.ndarray]  # "step" (K,) and one (K, *shape) array per parameter
    final: dict[str, np.ndarray]  # every parameter after the last step taken (the stop or the end)


def stream_seed(seed: int, stream: int) -> int:
    return int(np.random.SeedSequence([seed, stream]).generate_state(1, dtype=np.uint64)[0] >> 1)


def resolve_device(requested: str) -> torch.device:
    """CUDA only when asked for and present; CPU otherwise (with a warning if CUDA was asked for)."""
    if requested == "cuda" and not torch.cuda.is_available():
        log.warning("device 'cuda' requested but not available; training on the CPU")
        return torch.device("cpu")
    return torch.device(requested)


def make_model(settings: RunSettings) -> MarkovTransformer:
    return MarkovTransformer(TransformerConfig.from_settings(settings))


def make_optimizer(model: MarkovTransformer, settings: RunSettings) -> AdamW | SGD:
    """AdamW or SGD (the training loop sets each step's rate on ``lr``); weight decay on every parameter
    but those listed in ``no_decay``. AdamW is PyTorch's fused kernel (the same update as its loop, to
    float rounding; a few times less CPU on these small tensors), without torch.optim's machinery
    (optimizers.py)."""
    opt = settings.optimizer
    no_decay = set(opt.no_decay)
    groups = [
        ParameterGroup([p for n, p in model.named_parameters() if n not in no_decay], opt.weight_decay),
        ParameterGroup([p for n, p in model.named_parameters() if n in no_decay], 0.0),
    ]
    if opt.name == "adamw":
        return AdamW(groups, lr=opt.lr, betas=tuple(opt.betas))
    return SGD(groups, lr=opt.lr, momentum=opt.momentum)


def optimizer_snapshot(optimizer: AdamW | SGD, model: MarkovTransformer, lr: float) -> dict:
    """AdamW's state after a step, per parameter ``<name>``: ``exp_avg.<name>`` (m),
    ``exp_avg_sq.<name>`` (v), and ``adam_step`` (steps taken, for the bias corrections) and
    ``adam_lr`` (that step's learning rate). Empty for any other optimiser."""
    if not isinstance(optimizer, AdamW):
        return {}
    out, step = {}, 0.0
    for name, param in model.named_parameters():
        state = optimizer.state.get(param, {})  # none before the first step: m = v = 0
        for key in ("exp_avg", "exp_avg_sq"):
            out[f"{key}.{name}"] = state[key].detach().clone() if key in state else torch.zeros_like(param)
        step = float(state.get("step", 0.0))
    out["adam_step"] = torch.as_tensor(step, dtype=torch.float64)
    out["adam_lr"] = torch.as_tensor(float(0.0 if np.isnan(lr) else lr), dtype=torch.float64)
    return out


def _check_finite(name: str, what: str, losses: torch.Tensor, steps: torch.Tensor) -> None:
    bad = ~torch.isfinite(losses)
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0])
        raise NonFiniteLoss(f"{name}: {what} loss is {losses[first].item()} at step {int(steps[first])}")


class Monitor:
    """Watches a run's test evaluations and may end it early (the phase diagram's stopping rule).

    ``evaluated`` sees every test batch with its loss; ``should_stop`` is asked once per chunk (one
    host sync), and a True ends the run after that chunk's last step.
    """

    def evaluated(self, step: int, x: torch.Tensor, y: torch.Tensor, loss: torch.Tensor) -> None:
        pass

    def should_stop(self, step: int) -> bool:
        return False


def _initial_model(settings: RunSettings, init: str, seed: int, name: str, device: torch.device) -> MarkovTransformer:
    """The model at step 0 on ``device``: initialised on the CPU (every device starts from the same
    parameters) from the seed's init stream, then moved (and, in an ensemble member, perturbed)."""
    generator = torch.Generator().manual_seed(stream_seed(seed, _INIT))
    if settings.embedding == "two_symbol":
        from .ablation_model import build_two_symbol  # the authors' vocabulary-2 embedding (Fig. 3 ablation)

        model = build_two_symbol(settings, generator)
    else:
        model = initialise(make_model(settings), init, settings.sigma, generator, settings.rank_one_value)
    perturb_module(model, f"transformer/{name}")  # numerical-noise ensembles only; a no-op otherwise
    return model.to(device)


def _losses(last: int, lrs: np.ndarray, train_loss: torch.Tensor, test_loss: torch.Tensor) -> pd.DataFrame:
    """The losses table of a run that ended at step ``last`` (TrainResult.losses)."""
    return pd.DataFrame(
        {
            "step": np.arange(last + 1),
            "lr": lrs[: last + 1],
            "train_loss": train_loss[: last + 1].cpu().numpy().astype(float),
            "test_loss": test_loss[: last + 1].cpu().numpy().astype(float),
        }
    )


def train(
    settings: RunSettings,
    init: str,
    seed: int,
    name: str = "run",
    progress: bool = True,
    monitor: Monitor | None = None,
    optimizer_state: bool = False,
) -> TrainResult:
    """Train on ``settings.chain`` from ``init`` with every random draw from ``seed``; raise
    NonFiniteLoss naming ``name`` and the step.

    With ``optimizer_state`` every checkpoint also keeps the optimiser's state after that step
    (``optimizer_snapshot``): what the step after it is preconditioned by.

    A ``monitor`` that asks to stop ends the run early: the learning-rate schedule stays that of the
    full run (or its ``horizon``), and the losses end at the last step taken.
    """
    device = resolve_device(settings.device)
    steps, every = settings.steps, settings.eval_every
    batch, context, chunk = settings.batch_size, settings.model.context, settings.chunk
    ckpt_steps = sorted({s for s in settings.checkpoints if s <= steps})
    model = _initial_model(settings, init, seed, name, device)
    optimizer = make_optimizer(model, settings)
    lrs = schedule_rates(settings, steps)
    train_data = BatchStream(settings.chain, batch, context, stream_seed(seed, _TRAIN), chunk, device)
    test_data = BatchStream(settings.chain, batch, context, stream_seed(seed, _TEST), chunk, device)

    # Losses stay on the device until a chunk ends: one host sync per chunk, not per step.
    train_loss = torch.full((steps + 1,), float("nan"), device=device)
    test_loss = torch.full((steps + 1,), float("nan"), device=device)
    snapshots = []

    def evaluate(step):
        if step % every == 0:
            model.eval()
            with torch.no_grad():
                x, y = next(test_data)
                test_loss[step] = model.loss(x, y)
                if monitor is not None:
                    monitor.evaluated(step, x, y, test_loss[step])
            model.train()
        if step in ckpt_steps:
            state = optimizer_snapshot(optimizer, model, lrs[step]) if optimizer_state else {}
            snapshots.append({**snapshot(model), **state})

    with compiling_alone():  # the kernels' first calls: the evaluation's here, the training step's below
        evaluate(0)
    _check_finite(name, "test", test_loss[:1], torch.zeros(1, dtype=torch.long))
    bar = tqdm(total=steps, desc=name, file=sys.stderr, disable=not progress, mininterval=2.0)
    last = steps
    for start in range(1, steps + 1, chunk):
        stop = min(start + chunk, steps + 1)
        for step in range(start, stop):
            optimizer.lr = float(lrs[step])
            with compiling_alone() if step == 1 else contextlib.nullcontext():
                loss = model.loss(*next(train_data))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            perturb_module(model, f"transformer/{name}/step{step}")  # ensembles only: rounding noise of each step
            train_loss[step] = loss.detach()
            evaluate(step)
        window = torch.arange(start, stop)
        _check_finite(name, "training", train_loss[start:stop], window)
        tested = window[window % every == 0]
        _check_finite(name, "test", test_loss[tested.to(device)], tested)
        bar.update(stop - start)
        last_test = test_loss[tested[-1]].item() if len(tested) else float("nan")
        bar.set_postfix(train=f"{train_loss[stop - 1].item():.4f}", test=f"{last_test:.4f}", refresh=False)
        if monitor is not None and stop <= steps and monitor.should_stop(stop - 1):
            last = stop - 1
            break
    bar.close()

    checkpoints = {"step": np.array(ckpt_steps), **stack_snapshots(snapshots)} if snapshots else {"step": np.array([])}
    final = {name: value.detach().cpu().numpy() for name, value in model.named_parameters()}
    return TrainResult(_losses(last, lrs, train_loss, test_loss), checkpoints, final)


def train_and_write(settings: RunSettings, init: str, seed: int, run: str, losses_path, checkpoints_path) -> None:
    """One run of a figure or of an ablation variant, logged and written atomically (losses CSV, checkpoints)."""
    from replication.io import write_csv, write_npz

    log = logging.getLogger("replication")
    log.info("run %s: %s", run, {k: getattr(settings, k) for k in ("steps", "eval_every", "checkpoints", "device")})
    result = train(settings, init, seed, name=run)
    final = result.losses.dropna(subset=["test_loss"]).iloc[-1]
    log.info("run %s: final test loss %.4f at step %d", run, final.test_loss, final.step)
    write_npz(checkpoints_path, **result.checkpoints)
    write_csv(result.losses, losses_path)


def training_job(snakemake) -> None:
    """The whole of a training rule's script (a figure's run, or an ablation variant's): its log,
    its threads, then ``train_and_write`` of the rule's settings, wildcards and outputs."""
    from replication.compute import prepare_training_job
    from replication.io import log_to

    log_to(snakemake.log[0])
    prepare_training_job(snakemake.threads)
    train_and_write(
        snakemake.params.settings,
        snakemake.wildcards.init,
        int(snakemake.wildcards.seed),
        snakemake.params.run,
        snakemake.output.losses,
        snakemake.output.checkpoints,
    )
