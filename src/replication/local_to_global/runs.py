"""The training runs a ``local_to_global.transformer`` config section asks for (used by the workflow)."""
from __future__ import annotations

RUN_PATTERN = "results/local_to_global/transformer/{experiment}/{init}/seed{seed}"
_FIGURE_ONLY = ("experiments", "fig4", "claims")


def run_settings(section: dict, experiment: str) -> dict:
    """The shared training settings merged with one experiment's (chain, steps, eval_every, ...)."""
    shared = {key: value for key, value in section.items() if key not in _FIGURE_ONLY}
    return {**shared, **section["experiments"][experiment]}


def runs(section: dict, experiment: str) -> list[tuple[str, int]]:
    """(init, seed) of every run of an experiment, in config order."""
    spec = section["experiments"][experiment]
    return [(init, seed) for init in spec["inits"] for seed in spec["seeds"]]


def run_files(section: dict, experiment: str, name: str) -> list[str]:
    """The file ``name`` of every run of an experiment."""
    return [
        f"{RUN_PATTERN}/{name}".format(experiment=experiment, init=init, seed=seed)
        for init, seed in runs(section, experiment)
    ]
