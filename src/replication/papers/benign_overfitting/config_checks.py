"""Constraints on the paper's settings that its JSON schema cannot state."""

from __future__ import annotations

from replication.errors import ConfigError


def check_ranges(config: dict) -> None:
    """The grid's axes run from start up to stop."""
    grid = config.get("benign_overfitting", {}).get("grid", {})
    for key in ("dims", "signal_norms"):
        axis = grid.get(key)
        if axis and axis["stop"] < axis["start"]:
            raise ConfigError(
                f"config key 'benign_overfitting.grid.{key}': stop {axis['stop']} < start {axis['start']}; "
                "allowed: start <= stop"
            )
