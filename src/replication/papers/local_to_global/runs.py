"""The training runs a ``local_to_global.transformer`` config section asks for (used by the workflow)."""

from __future__ import annotations

RUN_PATTERN = "results/local_to_global/transformer/{experiment}/{init}/seed{seed}"
_FIGURE_ONLY = ("experiments", "fig4", "claims", "ablation")
ABLATION_PATTERN = "results/local_to_global/ablation_run/{experiment}/{variant}/{init}/seed{seed}"


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


def ablation_runs(section: dict, experiment: str) -> list[tuple[str, str, int]]:
    """(variant, init, seed) of the ablation of one figure: its first init and seed, every variant."""
    spec = section["experiments"][experiment]
    return [(variant, spec["inits"][0], spec["seeds"][0]) for variant in ["pipeline", *section["ablation"][experiment]]]


def ablation_files(section: dict, experiment: str) -> list[str]:
    """Checkpoints of every ablation variant; ``pipeline`` is the figure's own first run."""
    files = []
    for variant, init, seed in ablation_runs(section, experiment):
        pattern = RUN_PATTERN if variant == "pipeline" else ABLATION_PATTERN
        files.append(f"{pattern}/checkpoints.npz".format(experiment=experiment, variant=variant, init=init, seed=seed))
    return files
