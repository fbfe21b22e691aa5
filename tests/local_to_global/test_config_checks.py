"""The paper's config checks that its schema cannot state: no chain with p + q = 1 (the theory), no
one-cycle warm-up of exactly one step, the phase diagram's window and grid, the escape sweeps' cells
above the line; all run through its Paper.check_config."""

import pytest

from replication.errors import ConfigError
from replication.papers.local_to_global import PAPER
from replication.papers.local_to_global.config_checks import (
    _chains,
    check_config,
    check_escape,
    check_phase,
    check_schedule,
    check_theory,
)


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


def test_the_papers_window_lies_within_the_phase_diagrams_horizon():
    def config(window):
        return {"local_to_global": {"transformer": {"fig4": {"window": window}}, "phase": {"horizon": 600}}}

    with pytest.raises(ConfigError) as error:
        check_phase(config(700))
    assert "'local_to_global.transformer.fig4.window'" in str(error.value) and "window <= " in str(error.value)
    check_phase(config(600))


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


def test_every_chain_is_found_with_its_key():
    node = {
        "a": {"p": 0.1, "q": 0.2},
        "b": [{"p": 0.3, "q": 0.4}, {"p": "x", "q": 0.1}],
        "c": {"d": {"p": 0.5, "q": 1}},
    }
    assert list(_chains(node)) == [("a", 0.1, 0.2), ("b.0", 0.3, 0.4), ("c.d", 0.5, 1)]
    assert list(_chains(node["b"], "x.b")) == [("x.b.0", 0.3, 0.4)]


@pytest.mark.parametrize(
    "p, q, excluded", [(0.3, 0.7, True), (0.3, 0.7 + 1e-13, True), (0.3, 0.7 + 1e-9, False), (0.2, 0.2, False)]
)
def test_theory_excludes_exactly_p_plus_q_one(p, q, excluded):
    cfg = {"local_to_global": {"fig1": {"chains": [{"p": 0.1, "q": 0.1}, {"p": p, "q": q}]}}}
    if excluded:
        with pytest.raises(ConfigError) as error:
            check_theory(cfg)
        assert str(error.value) == (
            f"config key 'local_to_global.fig1.chains.1': p + q = 1 (p={p}, q={q}) is excluded by the theory; "
            "allowed: p, q in (0, 1) with p + q != 1"
        )
    else:
        check_theory(cfg)


def test_the_theory_judges_only_the_papers_own_section():
    check_theory({"other_paper": {"p": 0.5, "q": 0.5}})


def test_the_paper_checks_the_theory_then_the_schedule():
    assert PAPER.check_config is check_config
    both = _config({"name": "onecycle", "warmup": 0.05}, fig3={"steps": 20, "chain": {"p": 0.4, "q": 0.6}})
    theory = r"^config key 'local_to_global\.transformer\.experiments\.fig3\.chain': p \+ q = 1"
    with pytest.raises(ConfigError, match=theory):
        check_config(both)
    both["local_to_global"]["transformer"]["experiments"]["fig3"]["chain"] = {"p": 0.4, "q": 0.5}
    with pytest.raises(ConfigError, match=r"warm-up 0.05 of 20 steps \(experiment fig3\)"):
        check_config(both)
    assert check_config({}) is None


def _escape(*cells):
    return {"local_to_global": {"plateau": {"escape": {"cells": [list(cell) for cell in cells]}}}}


@pytest.mark.parametrize("cell, where", [((0.3, 0.7), "on"), ((0.3, 0.7 + 1e-12), "on"), ((0.2, 0.3), "below")])
def test_an_escape_cell_on_or_below_the_line_is_named_with_its_key(cell, where):
    with pytest.raises(ConfigError) as error:
        check_escape(_escape((0.5, 0.8), cell))
    assert str(error.value) == (
        f"config key 'local_to_global.plateau.escape.cells.1': [{cell[0]}, {cell[1]}] lies {where} the line p + q = 1, "
        "where the standard init has no plateau to escape; allowed: [p, q] with p, q in (0, 1) and p + q > 1"
    )


def test_escape_cells_above_the_line_pass_on_the_grid_or_off_it():
    assert check_escape(_escape((0.5, 0.8), (0.9, 0.9), (0.55, 0.47))) is None
    assert check_escape({"local_to_global": {"plateau": {}}}) is None
    with pytest.raises(ConfigError, match=r"escape\.cells\.0"):
        check_config(_escape((0.1, 0.1)))
