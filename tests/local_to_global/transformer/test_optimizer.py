"""The optimiser: weight decay on every parameter except those named in no_decay; the schedules."""

import copy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers import small_run_settings
from replication.papers.local_to_global.transformer.model import initialise
from replication.papers.local_to_global.transformer.optimizers import SGD, AdamW
from replication.papers.local_to_global.transformer.schedule import schedule_rates
from replication.papers.local_to_global.transformer.settings import run_settings
from replication.papers.local_to_global.transformer.train import make_model, make_optimizer

SETTINGS = small_run_settings()


def _groups(optimizer):
    return [({id(p) for p in group.params}, group.weight_decay) for group in optimizer.groups]


@pytest.mark.parametrize("name", ["adamw", "sgd"])
def test_no_decay_parameters_have_zero_weight_decay(name):
    settings = copy.deepcopy(SETTINGS)
    settings["optimizer"].update(name=name, weight_decay=0.25, momentum=0.5)
    model = make_model(run_settings(settings))
    optimizer = make_optimizer(model, run_settings(settings))
    assert type(optimizer) is (AdamW if name == "adamw" else SGD)
    params = dict(model.named_parameters())
    no_decay = {id(params["p"]), id(params["b"])}
    decay = {id(param) for key, param in params.items() if key not in ("p", "b")}
    assert sorted(_groups(optimizer), key=lambda g: g[1]) == [(no_decay, 0.0), (decay, 0.25)]
    assert optimizer.lr == settings["optimizer"]["lr"]
    if name == "adamw":
        assert optimizer.betas == (0.9, 0.95) and optimizer.eps == 1e-8
    else:
        assert optimizer.momentum == 0.5


@pytest.mark.parametrize("name", ["adamw", "sgd"])
def test_weight_decay_moves_only_the_decayed_parameters(name):
    """One step with zero gradients: decayed parameters shrink by lr * wd, p and b stay (AdamW's
    decoupled decay; SGD's first step with momentum moves by lr * (0 + wd * param) as well)."""
    settings = copy.deepcopy(SETTINGS)
    settings["optimizer"].update(name=name, weight_decay=0.5, momentum=0.5)
    model = make_model(run_settings(settings))
    with torch.no_grad():
        for param in model.parameters():
            param.fill_(1.0)
    optimizer = make_optimizer(model, run_settings(settings))
    for param in model.parameters():
        param.grad = torch.zeros_like(param)
    optimizer.step()
    lr = settings["optimizer"]["lr"]
    for key, param in model.named_parameters():
        expected = 1.0 if key in ("p", "b") else 1.0 - lr * 0.5
        assert torch.allclose(param, torch.full_like(param, expected), rtol=0, atol=1e-7), key


def test_one_cycle_schedule_warms_up_then_decays():
    settings = copy.deepcopy(SETTINGS)
    rates = schedule_rates(run_settings(settings), 100)
    assert np.isnan(rates[0])  # no update at step 0
    lrs = rates[1:]
    lr, sched = settings["optimizer"]["lr"], settings["schedule"]
    assert np.isclose(lrs[0], lr / sched["div_factor"])
    assert np.isclose(max(lrs), lr) and int(np.argmax(lrs)) == round(sched["warmup"] * 100) - 1
    peak = int(np.argmax(lrs))
    assert np.all(np.diff(lrs[peak:]) < 0)
    assert np.isclose(lrs[-1], lr / sched["div_factor"] / sched["final_div_factor"], rtol=1e-6)


def test_constant_schedule_keeps_the_rate():
    settings = copy.deepcopy(SETTINGS)
    settings["schedule"] = {**settings["schedule"], "name": "constant"}
    assert schedule_rates(run_settings(settings), 50)[1:].tolist() == [settings["optimizer"]["lr"]] * 50


def _torch_run(settings, model, steps: int, batches):
    """The run's updates by torch.optim itself: AdamW(fused=True) or SGD, driven by OneCycleLR or a constant
    rate. Returns the rate of every update."""
    opt, schedule = settings.optimizer, settings.schedule
    no_decay = set(opt.no_decay)
    groups = [
        {"params": [p for n, p in model.named_parameters() if n not in no_decay], "weight_decay": opt.weight_decay},
        {"params": [p for n, p in model.named_parameters() if n in no_decay], "weight_decay": 0.0},
    ]
    if opt.name == "adamw":
        optimizer = torch.optim.AdamW(groups, lr=opt.lr, betas=tuple(opt.betas), fused=True)
    else:
        optimizer = torch.optim.SGD(groups, lr=opt.lr, momentum=opt.momentum, foreach=True)
    if schedule.name == "constant":
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    else:
        scheduler = torch.optim.lr_scheduler.OneCycleLR(
            optimizer,
            max_lr=opt.lr,
            total_steps=max(steps, schedule.horizon or steps, 2),
            pct_start=schedule.warmup,
            anneal_strategy="cos",
            cycle_momentum=False,
            div_factor=schedule.div_factor,
            final_div_factor=schedule.final_div_factor,
        )
    rates = []
    for x, y in batches:
        rates.append(scheduler.get_last_lr()[0])
        loss = model.loss(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
    return rates


@pytest.mark.parametrize(
    "optimizer, schedule",
    [("adamw", {}), ("adamw", {"horizon": 90}), ("adamw", {"name": "constant"}), ("sgd", {"warmup": 0.5})],
    ids=["adamw", "adamw-horizon", "adamw-constant", "sgd"],
)
def test_the_runs_updates_and_rates_are_torch_optims_bit_for_bit(optimizer, schedule):
    """The training loop's optimiser and schedule (train.make_optimizer, schedule.schedule_rates) against
    torch.optim's AdamW (fused) or SGD under OneCycleLR, on a model with both parameter groups."""
    settings = copy.deepcopy(SETTINGS)
    settings["optimizer"].update(name=optimizer, weight_decay=0.1, momentum=0.9)
    settings["schedule"].update(schedule)
    settings = run_settings(settings)
    steps = 30
    generator = torch.Generator().manual_seed(5)
    batches = [
        (torch.randint(0, 2, (4, 32), generator=generator), torch.randint(0, 2, (4, 32), generator=generator))
        for _ in range(steps)
    ]
    ours = initialise(make_model(settings), "standard", settings.sigma, generator, settings.rank_one_value)
    start, theirs = copy.deepcopy(ours), copy.deepcopy(ours)
    expected_rates = _torch_run(settings, theirs, steps, batches)
    rates = schedule_rates(settings, steps)
    run = make_optimizer(ours, settings)
    for step, (x, y) in enumerate(batches, start=1):
        run.lr = float(rates[step])
        loss = ours.loss(x, y)
        run.zero_grad()
        loss.backward()
        run.step()
    assert rates[1:].tolist() == expected_rates
    for (name, mine), theirs_param, initial in zip(ours.named_parameters(), theirs.parameters(), start.parameters()):
        assert torch.equal(mine, theirs_param), name
        assert not torch.equal(mine, initial), name  # every parameter was updated


def test_a_training_run_imports_no_compiler():
    """torch.optim imports torch._dynamo (1.1-1.4 CPU-s); a run's optimiser and schedule do not."""
    code = (
        "import sys\n"
        "from helpers import small_run_settings\n"
        "from replication.papers.local_to_global.transformer.settings import run_settings\n"
        "from replication.papers.local_to_global.transformer.train import train\n"
        "settings = run_settings({**small_run_settings(), 'steps': 3, 'checkpoints': [0, 3]})\n"
        "train(settings, 'standard', 1, progress=False)\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2]
    )
    assert out.stdout.strip() == "False"


def test_training_reports_progress_with_both_losses(capsys):
    from replication.papers.local_to_global.transformer.train import train

    settings = {**copy.deepcopy(SETTINGS), "steps": 8, "chunk": 4, "eval_every": 4, "checkpoints": []}
    result = train(run_settings(settings), "standard", 3, name="bar/standard/seed3", progress=True)
    err = capsys.readouterr().err
    assert "bar/standard/seed3" in err and "8/8" in err
    last = result.losses.test_loss.dropna().iloc[-1]
    assert f"train={result.losses.train_loss.iloc[-1]:.4f}" in err and f"test={last:.4f}" in err
    train(run_settings(settings), "standard", 3, name="quiet", progress=False)
    assert "quiet" not in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the fallback of a machine without CUDA")
def test_cuda_request_without_cuda_falls_back_to_the_cpu_with_a_warning(caplog):
    from replication.papers.local_to_global.transformer.train import resolve_device

    with caplog.at_level("WARNING", logger="replication"):
        assert resolve_device("cuda") == torch.device("cpu")
    assert [r.getMessage() for r in caplog.records] == [
        "device 'cuda' requested but not available; training on the CPU"
    ]
    caplog.clear()
    assert resolve_device("cpu") == torch.device("cpu") and not caplog.records


def _lrs(steps, **schedule):
    settings = copy.deepcopy(SETTINGS)
    settings["schedule"].update(schedule)
    return schedule_rates(run_settings(settings), steps)[1:]


def test_the_cycle_spans_the_run_unless_the_horizon_is_longer():
    lr, sched = SETTINGS["optimizer"]["lr"], SETTINGS["schedule"]
    final = lr / sched["div_factor"] / sched["final_div_factor"]
    # a horizon shorter than the run is ignored: the cycle still spans all 60 steps
    assert np.allclose(_lrs(60, horizon=20), _lrs(60, horizon=None), rtol=1e-12)
    assert np.isclose(_lrs(60, horizon=20)[-1], final, rtol=1e-6)
    # a longer horizon: the run stops mid-cycle, on the horizon's curve
    long = _lrs(60, horizon=200)
    assert np.allclose(long, _lrs(200, horizon=None)[:60], rtol=1e-12) and long[-1] > 2 * final
    # the shortest cycle torch allows: two steps, the second at the final rate
    two = _lrs(2, horizon=None)
    assert np.isclose(two[-1], final, rtol=1e-6) and two[0] > final
