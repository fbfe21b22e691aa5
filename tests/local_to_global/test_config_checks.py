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
    check_plateau,
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


def _phase(**phase):
    return {"local_to_global": {"phase": phase}}


def test_the_windows_error_names_both_lengths():
    config = {"local_to_global": {"transformer": {"fig4": {"window": 700}}, "phase": {"horizon": 600}}}
    with pytest.raises(ConfigError) as error:
        check_phase(config)
    assert str(error.value) == (
        "config key 'local_to_global.transformer.fig4.window': 700 (the paper's window) lies beyond the phase "
        "diagram's horizon 600; allowed: window <= local_to_global.phase.horizon"
    )


@pytest.mark.parametrize(
    "config",
    [
        {"local_to_global": {"transformer": {"fig4": {"window": 700}}}},  # no horizon to compare with
        _phase(horizon=600),  # no window
        {"local_to_global": {"transformer": {"schedule": {"name": "onecycle", "warmup": 0.01}}}},  # no horizon
        {
            "local_to_global": {
                "transformer": {"schedule": {"name": "constant", "warmup": 0.01}},
                "phase": {"horizon": 100},
            }
        },
        {"local_to_global": {"transformer": {"schedule": {"name": "onecycle"}}, "phase": {"horizon": 1}}},  # no warm-up
        _phase(p=[0.3], horizon=100),  # no q: no grid to judge
        _phase(p=[0.3], q=[0.6]),  # off the line: 0.9 is 0.1 from it
    ],
)
def test_phase_sections_without_a_conflict_pass(config):
    assert check_phase(config) is None


def test_the_phase_diagrams_one_step_warm_up_is_named_with_its_horizon():
    config = {
        "local_to_global": {
            "transformer": {"schedule": {"name": "onecycle", "warmup": 0.01}},
            "phase": {"horizon": 100},
        }
    }
    with pytest.raises(ConfigError) as error:
        check_phase(config)
    assert str(error.value) == (
        "config key 'local_to_global.transformer.schedule.warmup': warm-up 0.01 of the phase diagram's 100 steps "
        "is exactly one step; allowed: warmup x horizon != 1"
    )


def test_a_phase_grid_on_the_line_is_named_in_full():
    with pytest.raises(ConfigError) as error:
        check_phase(_phase(p=[0.3], q=[0.7], seeds=[1]))
    assert str(error.value) == (
        "config key 'local_to_global.phase': every (p, q) of the grid lies on p + q = 1, which is left out; "
        "allowed: at least one p + q != 1"
    )
    check_phase(_phase(p=[0.3, 0.4], q=[0.7, 0.6]))  # two cells of the cross, (0.3, 0.6) and (0.4, 0.7), are off it


def _plateau(held_out=None, phase=None, growth=None):
    plateau = {"hessian": {"held_out": held_out}} if held_out is not None else {}
    if growth is not None:
        plateau["growth"] = growth
    return {"local_to_global": {"plateau": plateau, **({"phase": phase} if phase is not None else {})}}


GRID = {"p": [0.3, 0.6], "q": [0.7, 0.8], "seeds": [1, 2]}  # above the line: (0.3, 0.8), (0.6, 0.7), (0.6, 0.8)


def test_held_out_batches_need_least_at_most_most():
    with pytest.raises(ConfigError) as error:
        check_plateau(_plateau(held_out={"least": 5, "most": 3}))
    assert str(error.value) == (
        "config key 'local_to_global.plateau.hessian.held_out': least 5 > most 3; allowed: least <= most"
    )
    assert check_plateau(_plateau(held_out={"least": 3, "most": 3})) is None
    assert check_plateau(_plateau(held_out={"least": 5})) is None  # the other bound is the schema's default


def test_a_growth_cell_off_the_grid_is_named_with_the_grids_cells_above_the_line():
    growth = {"cells": [[0.6, 0.8], [0.3, 0.7]], "seeds": [1]}  # (0.3, 0.7) is on the line
    with pytest.raises(ConfigError) as error:
        check_plateau(_plateau(phase=GRID, growth=growth))
    assert str(error.value) == (
        "config key 'local_to_global.plateau.growth.cells.1': [0.3, 0.7] is not a cell of the phase grid above "
        "the line; allowed: [[0.3, 0.8], [0.6, 0.7], [0.6, 0.8]]"
    )
    for cell in ([0.3, 0.6], [0.6, 0.3], [0.5, 0.8], [0.6, 0.75], [0.3, 0.8 - 0.1]):  # each misses in p or q
        with pytest.raises(ConfigError, match=r"growth\.cells\.0"):
            check_plateau(_plateau(phase=GRID, growth={"cells": [cell], "seeds": [1]}))


def test_growth_cells_of_the_grid_pass_up_to_rounding():
    growth = {"cells": [[0.6, 0.7], [0.1 + 0.2, 0.8]], "seeds": [2, 1]}  # 0.1 + 0.2 is 0.30000000000000004
    assert check_plateau(_plateau(phase=GRID, growth=growth)) is None


def test_a_cell_1e9_from_the_line_or_from_a_grid_cell_is_not_on_it():
    """The tolerances are strict: a sum exactly 1e-9 above 1 is on the line, a coordinate exactly 1e-9
    off a grid cell's is another cell."""
    at_tolerance = (1 + 1e-9) - 0.5  # 0.5 + this is 1 + 1e-9 exactly
    phase = {"p": [0.5, 0.6], "q": [at_tolerance, 0.7], "seeds": [1]}
    with pytest.raises(ConfigError, match=r"allowed: \[\[0.5, 0.7\], \[0.6, 0.5000000010000001\], \[0.6, 0.7\]\]$"):
        check_plateau(_plateau(phase=phase, growth={"cells": [[0.5, at_tolerance]], "seeds": [1]}))
    near = 0.9999999999
    phase = {"p": [2e-9, near], "q": [near, 2e-9], "seeds": [1]}  # 2e-9 - 1e-9 is 1e-9 exactly
    for cell in ([1e-9, near], [near, 1e-9]):
        with pytest.raises(ConfigError, match=r"growth\.cells\.0"):
            check_plateau(_plateau(phase=phase, growth={"cells": [cell], "seeds": [1]}))


def test_growth_seeds_must_be_the_grids():
    with pytest.raises(ConfigError) as error:
        check_plateau(_plateau(phase=GRID, growth={"cells": [[0.6, 0.8]], "seeds": [5, 1, 3]}))
    assert str(error.value) == (
        "config key 'local_to_global.plateau.growth.seeds': [3, 5] not among the phase grid's seeds; allowed: [1, 2]"
    )


@pytest.mark.parametrize(
    "phase, growth",
    [
        ({"p": [0.3], "q": [0.7]}, {"cells": [[0.1, 0.1]], "seeds": [9]}),  # the grid has no seeds
        ({"p": [0.3], "seeds": [1]}, {"cells": [[0.1, 0.1]], "seeds": [9]}),  # nor q
        (GRID, {"cells": [[0.1, 0.1]]}),  # growth has no seeds
        (GRID, {"seeds": [9]}),  # nor cells
        (GRID, None),  # no growth section
    ],
)
def test_growth_is_checked_only_against_a_grid_and_runs_both_given(phase, growth):
    assert check_plateau(_plateau(phase=phase, growth=growth)) is None


def test_the_paper_checks_the_escape_cells_and_the_plateau():
    with pytest.raises(ConfigError, match=r"hessian\.held_out"):
        check_config(_plateau(held_out={"least": 5, "most": 3}))


def test_an_escape_cell_1e9_above_the_line_is_within_its_tolerance():
    at_tolerance = (1 + 1e-9) - 0.5  # 0.5 + this is 1 + 1e-9 exactly
    with pytest.raises(ConfigError, match=r"escape\.cells\.0"):
        check_escape(_escape((0.5, at_tolerance)))
    assert check_escape(_escape((0.5, 0.5 + 2e-9))) is None
