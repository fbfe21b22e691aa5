"""Constraints on the paper's settings that its JSON schema cannot state."""

from __future__ import annotations

from typing import Any

from replication.errors import ConfigError


def check_config(config: dict) -> None:
    """The paper's checks of a validated config (its ``Paper.check_config``): the theory, the schedule,
    the phase diagram, the escape sweeps' cells, the plateau's held-out batches and growth runs."""
    check_theory(config)
    check_schedule(config)
    check_phase(config)
    check_escape(config)
    check_plateau(config)


def _chains(node: Any, path: str = ""):
    """Yield (key, p, q) for every Markov chain {p, q} anywhere below ``node``."""
    if isinstance(node, dict):
        if {"p", "q"} <= node.keys() and all(isinstance(node[k], (int, float)) for k in ("p", "q")):
            yield path, node["p"], node["q"]
        for key, value in node.items():
            yield from _chains(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _chains(value, f"{path}.{index}")


def check_theory(config: dict) -> None:
    """Constraints JSON schema cannot state: the theory excludes p + q = 1 (i.i.d. data)."""
    for key, p, q in _chains(config.get("local_to_global", {}), "local_to_global"):
        if abs(p + q - 1.0) < 1e-12:
            raise ConfigError(
                f"config key '{key}': p + q = 1 (p={p}, q={q}) is excluded by the theory; "
                "allowed: p, q in (0, 1) with p + q != 1"
            )


def check_schedule(config: dict) -> None:
    """The one-cycle schedule (OneCycleLR's formula, transformer/schedule.py) divides by
    (warmup x total steps - 1): a warm-up of exactly one step fails."""
    transformer = config.get("local_to_global", {}).get("transformer", {})
    schedule = transformer.get("schedule", {})
    if schedule.get("name") != "onecycle" or "warmup" not in schedule:
        return
    for name, experiment in transformer.get("experiments", {}).items():
        steps = experiment.get("steps")
        if steps is None:
            continue
        total = max(steps, schedule.get("horizon") or steps, 2)
        if schedule["warmup"] * total == 1.0:
            raise ConfigError(
                f"config key 'local_to_global.transformer.schedule.warmup': warm-up {schedule['warmup']} of "
                f"{total} steps (experiment {name}) is exactly one step, which the one-cycle schedule cannot "
                "take; allowed: warmup x steps != 1"
            )


def check_phase(config: dict) -> None:
    """The phase diagram: the paper's window lies within its horizon, its one-cycle schedule over the horizon
    has no one-step warm-up, and its grid keeps at least one cell off the line p + q = 1."""
    section = config.get("local_to_global", {})
    phase = section.get("phase", {})
    window = section.get("transformer", {}).get("fig4", {}).get("window")
    if window is not None and "horizon" in phase and window > phase["horizon"]:
        raise ConfigError(
            f"config key 'local_to_global.transformer.fig4.window': {window} (the paper's window) lies beyond "
            f"the phase diagram's horizon {phase['horizon']}; allowed: window <= local_to_global.phase.horizon"
        )
    schedule = section.get("transformer", {}).get("schedule", {})
    if (
        schedule.get("name") == "onecycle"
        and "horizon" in phase
        and schedule.get("warmup", 0) * phase["horizon"] == 1.0
    ):
        raise ConfigError(
            f"config key 'local_to_global.transformer.schedule.warmup': warm-up {schedule['warmup']} of the phase "
            f"diagram's {phase['horizon']} steps is exactly one step; allowed: warmup x horizon != 1"
        )
    if {"p", "q"} <= set(phase) and all(abs(p + q - 1) <= 1e-9 for p in phase["p"] for q in phase["q"]):
        raise ConfigError(
            "config key 'local_to_global.phase': every (p, q) of the grid lies on p + q = 1, which is left out; "
            "allowed: at least one p + q != 1"
        )


def check_escape(config: dict) -> None:
    """The escape sweeps study the plateau, which the standard init has above the line: every cell
    [p, q] of ``plateau.escape.cells`` has p + q > 1 (the schema has checked p, q in (0, 1))."""
    cells = config.get("local_to_global", {}).get("plateau", {}).get("escape", {}).get("cells", [])
    for index, cell in enumerate(cells):
        p, q = cell
        if p + q <= 1 + 1e-9:
            where = "on" if abs(p + q - 1) <= 1e-9 else "below"
            raise ConfigError(
                f"config key 'local_to_global.plateau.escape.cells.{index}': [{p}, {q}] lies {where} the line "
                "p + q = 1, where the standard init has no plateau to escape; allowed: [p, q] with p, q in (0, 1) "
                "and p + q > 1"
            )


def check_plateau(config: dict) -> None:
    """``plateau.hessian.held_out``: least <= most; ``plateau.growth``: its cells are cells of the phase
    grid above the line and its seeds the grid's (a growth run reads the grid cell's plateau points)."""
    section = config.get("local_to_global", {})
    plateau = section.get("plateau", {})
    held_out = plateau.get("hessian", {}).get("held_out", {})
    if {"least", "most"} <= set(held_out) and held_out["least"] > held_out["most"]:
        raise ConfigError(
            f"config key 'local_to_global.plateau.hessian.held_out': least {held_out['least']} > most "
            f"{held_out['most']}; allowed: least <= most"
        )
    phase, growth = section.get("phase", {}), plateau.get("growth", {})
    if not ({"p", "q", "seeds"} <= set(phase) and {"cells", "seeds"} <= set(growth)):
        return
    grid = [(p, q) for p in phase["p"] for q in phase["q"] if p + q > 1 + 1e-9]
    for index, (p, q) in enumerate(growth["cells"]):
        if not any(abs(p - a) < 1e-9 and abs(q - b) < 1e-9 for a, b in grid):
            raise ConfigError(
                f"config key 'local_to_global.plateau.growth.cells.{index}': [{p}, {q}] is not a cell of the phase "
                f"grid above the line; allowed: {[list(cell) for cell in grid]}"
            )
    missing = sorted(set(growth["seeds"]) - set(phase["seeds"]))
    if missing:
        raise ConfigError(
            f"config key 'local_to_global.plateau.growth.seeds': {missing} not among the phase grid's seeds; "
            f"allowed: {sorted(phase['seeds'])}"
        )
