"""The paper's config checks that its schema cannot state: a one-cycle warm-up of exactly one step, the
phase diagram's window and grid."""

import pytest

from replication.config import ConfigError
from replication.papers.local_to_global.config_checks import check_phase, check_schedule


def _config(schedule, **experiments):
    return {"local_to_global": {"transformer": {"schedule": schedule, "experiments": experiments}}}


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"local_to_global": {}},
        {"local_to_global": {"transformer": {}}},
        {"local_to_global": {"transformer": {"experiments": {"fig3": {"steps": 20}}}}},  # no schedule section
        {"local_to_global": {"transformer": {"schedule": {"name": "onecycle", "warmup": 0.05}}}},  # no experiments
        _config({"name": "constant", "warmup": 0.05}, fig3={"steps": 20}),  # no warm-up in a constant rate
        _config({"name": "onecycle"}, fig3={"steps": 20}),  # warm-up not given (the schema's default applies)
        _config({"name": "onecycle", "warmup": 0.05}, fig3={}),  # steps not given
        _config({"name": "onecycle", "warmup": 0.05}, fig3={"steps": 40}),
    ],
)
def test_configs_without_a_one_step_warm_up_pass(config):
    assert check_schedule(config) is None


def test_a_one_step_warm_up_is_named_with_its_experiment_and_length():
    with pytest.raises(ConfigError) as error:
        check_schedule(_config({"name": "onecycle", "warmup": 0.05}, fig4={"steps": 40}, fig3={"steps": 20}))
    assert str(error.value) == (
        "config key 'local_to_global.transformer.schedule.warmup': warm-up 0.05 of 20 steps (experiment fig3) "
        "is exactly one step, which the one-cycle schedule cannot take; allowed: warmup x steps != 1"
    )


def test_the_cycle_length_is_the_longer_of_the_run_and_the_horizon():
    schedule = {"name": "onecycle", "warmup": 0.01, "horizon": 100}
    with pytest.raises(ConfigError, match=r"warm-up 0.01 of 100 steps \(experiment fig6\)"):
        check_schedule(_config(schedule, fig6={"steps": 50}))
    check_schedule(_config(schedule, fig6={"steps": 200}))  # the run is longer: 2 warm-up steps
    with pytest.raises(ConfigError, match=r"warm-up 0.5 of 2 steps"):  # the shortest cycle is 2 steps
        check_schedule(_config({"name": "onecycle", "warmup": 0.5, "horizon": None}, fig6={"steps": 1}))


def test_an_experiment_without_steps_does_not_stop_the_check_of_the_next():
    config = _config({"name": "onecycle", "warmup": 0.05}, fig4={}, fig3={"steps": 20})
    with pytest.raises(ConfigError, match=r"\(experiment fig3\)"):
        check_schedule(config)


def test_the_phase_diagrams_window_lies_within_its_horizon():
    with pytest.raises(ConfigError) as error:
        check_phase({"local_to_global": {"phase": {"window": 700, "horizon": 600}}})
    assert "'local_to_global.phase.window'" in str(error.value) and "window <= " in str(error.value)
    check_phase({"local_to_global": {"phase": {"window": 600, "horizon": 600}}})


def test_the_phase_diagrams_schedule_has_no_one_step_warm_up():
    config = {
        "local_to_global": {
            "transformer": {"schedule": {"name": "onecycle", "warmup": 0.01}},
            "phase": {"horizon": 100},
        }
    }
    with pytest.raises(ConfigError) as error:
        check_phase(config)
    assert "warmup x horizon != 1" in str(error.value)


def test_a_phase_grid_on_the_line_only_is_an_error():
    with pytest.raises(ConfigError) as error:
        check_phase({"local_to_global": {"phase": {"p": [0.3], "q": [0.7]}}})
    assert "p + q = 1" in str(error.value)
    check_phase({"local_to_global": {"phase": {"p": [0.3, 0.6], "q": [0.7]}}})
