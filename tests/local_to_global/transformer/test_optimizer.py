"""The optimiser: weight decay on every parameter except those named in no_decay; the schedules."""

import copy

import numpy as np
import pytest
import torch

from helpers import small_run_settings
from replication.papers.local_to_global.transformer.settings import run_settings
from replication.papers.local_to_global.transformer.train import make_model, make_optimizer, make_schedule

SETTINGS = small_run_settings()


def _groups(optimizer):
    return [({id(p) for p in group["params"]}, group["weight_decay"]) for group in optimizer.param_groups]


@pytest.mark.parametrize("name", ["adamw", "sgd"])
def test_no_decay_parameters_have_zero_weight_decay(name):
    settings = copy.deepcopy(SETTINGS)
    settings["optimizer"].update(name=name, weight_decay=0.25, momentum=0.5)
    model = make_model(run_settings(settings))
    optimizer = make_optimizer(model, run_settings(settings))
    expected_type = torch.optim.AdamW if name == "adamw" else torch.optim.SGD
    assert type(optimizer) is expected_type
    params = dict(model.named_parameters())
    no_decay = {id(params["p"]), id(params["b"])}
    decay = {id(param) for key, param in params.items() if key not in ("p", "b")}
    assert sorted(_groups(optimizer), key=lambda g: g[1]) == [(no_decay, 0.0), (decay, 0.25)]
    assert all(group["lr"] == settings["optimizer"]["lr"] for group in optimizer.param_groups)
    if name == "adamw":
        assert all(group["betas"] == (0.9, 0.95) for group in optimizer.param_groups)
        # PyTorch's fused kernel: the runs' update as measured (docs/performance.md), not its loop's
        assert all(group["fused"] is True for group in optimizer.param_groups)
    else:
        assert all(group["momentum"] == 0.5 for group in optimizer.param_groups)


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
    model = make_model(run_settings(settings))
    optimizer = make_optimizer(model, run_settings(settings))
    schedule = make_schedule(optimizer, run_settings(settings), 100)
    lrs = []
    for _ in range(100):
        lrs.append(schedule.get_last_lr()[0])
        optimizer.step()
        schedule.step()
    lr, sched = settings["optimizer"]["lr"], settings["schedule"]
    assert np.isclose(lrs[0], lr / sched["div_factor"])
    assert np.isclose(max(lrs), lr) and int(np.argmax(lrs)) == round(sched["warmup"] * 100) - 1
    peak = int(np.argmax(lrs))
    assert np.all(np.diff(lrs[peak:]) < 0)
    assert np.isclose(lrs[-1], lr / sched["div_factor"] / sched["final_div_factor"], rtol=1e-6)


def test_constant_schedule_keeps_the_rate():
    settings = copy.deepcopy(SETTINGS)
    settings["schedule"] = {**settings["schedule"], "name": "constant"}
    model = make_model(run_settings(settings))
    optimizer = make_optimizer(model, run_settings(settings))
    schedule = make_schedule(optimizer, run_settings(settings), 50)
    for _ in range(50):
        assert schedule.get_last_lr()[0] == settings["optimizer"]["lr"]
        optimizer.step()
        schedule.step()


def test_one_cycle_leaves_the_adam_betas_alone():
    settings = copy.deepcopy(SETTINGS)
    model = make_model(run_settings(settings))
    optimizer = make_optimizer(model, run_settings(settings))
    schedule = make_schedule(optimizer, run_settings(settings), 40)
    for _ in range(10):
        optimizer.step()
        schedule.step()
    assert all(group["betas"] == (0.9, 0.95) for group in optimizer.param_groups)


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
    model = make_model(run_settings(settings))
    optimizer = make_optimizer(model, run_settings(settings))
    scheduler = make_schedule(optimizer, run_settings(settings), steps)
    lrs = []
    for _ in range(steps):
        lrs.append(scheduler.get_last_lr()[0])
        optimizer.step()
        scheduler.step()
    return np.array(lrs)


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
