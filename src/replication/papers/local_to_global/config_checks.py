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
