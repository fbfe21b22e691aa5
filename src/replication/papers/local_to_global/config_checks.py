"""Constraints on the paper's settings that its JSON schema cannot state."""

from __future__ import annotations

from typing import Any

from replication.errors import ConfigError


def check_config(config: dict) -> None:
    """The paper's checks of a validated config (its ``Paper.check_config``): the theory, then the schedule."""
    check_theory(config)
    check_schedule(config)


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
    """torch's OneCycleLR divides by (warmup x total steps - 1): a warm-up of exactly one step fails."""
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
