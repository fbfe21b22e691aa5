"""Constraints on the paper's settings that its JSON schema cannot state."""

from __future__ import annotations


def check_schedule(config: dict) -> None:
    """torch's OneCycleLR divides by (warmup x total steps - 1): a warm-up of exactly one step fails."""
    from replication.config import ConfigError  # here: importing the package stays cheap

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
    """The phase diagram: its window lies within the horizon, its one-cycle schedule over the horizon
    has no one-step warm-up, and its grid keeps at least one cell off the line p + q = 1."""
    from replication.config import ConfigError

    section = config.get("local_to_global", {})
    phase = section.get("phase", {})
    if {"window", "horizon"} <= set(phase) and phase["window"] > phase["horizon"]:
        raise ConfigError(
            f"config key 'local_to_global.phase.window': {phase['window']} lies beyond the horizon "
            f"{phase['horizon']}; allowed: window <= local_to_global.phase.horizon"
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


def check_local_to_global(config: dict) -> None:
    """Every constraint of the paper's settings that its schema cannot state."""
    check_schedule(config)
    check_phase(config)
