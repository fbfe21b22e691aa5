"""The training jobs of the workflow: where each run's files lie (figure runs, ablation runs) and how soon it starts."""

from __future__ import annotations

from .settings import RunSettings, TransformerSettings

RUN_PATTERN = "results/local_to_global/transformer/{experiment}/{init}/seed{seed}"
ABLATION_PATTERN = "results/local_to_global/ablation_run/{experiment}/{variant}/{init}/seed{seed}"


def run_files(settings: TransformerSettings, experiment: str, name: str) -> list[str]:
    """The file ``name`` of every run of an experiment."""
    return [
        f"{RUN_PATTERN}/{name}".format(experiment=experiment, init=init, seed=seed)
        for init, seed in settings.runs(experiment)
    ]


def ablation_runs(settings: TransformerSettings, experiment: str) -> list[tuple[str, str, int]]:
    """(variant, init, seed) of the ablation of one figure: its first init and seed, every variant."""
    spec = settings.experiments[experiment]
    variants = ["pipeline", *getattr(settings.ablation, experiment)]
    return [(variant, spec.inits[0], spec.seeds[0]) for variant in variants]


def ablation_files(settings: TransformerSettings, experiment: str) -> list[str]:
    """Checkpoints of every ablation variant; ``pipeline`` is the figure's own first run."""
    files = []
    for variant, init, seed in ablation_runs(settings, experiment):
        pattern = RUN_PATTERN if variant == "pipeline" else ABLATION_PATTERN
        files.append(f"{pattern}/checkpoints.npz".format(experiment=experiment, variant=variant, init=init, seed=seed))
    return files


# A test evaluation (forward only, no gradients) costs about a third of a training step.
EVALUATION_COST = 1 / 3


def training_cost(settings: RunSettings) -> float:
    """A run's work in training steps: its steps plus its test evaluations (every ``eval_every``
    steps and at step 0) at EVALUATION_COST each."""
    evaluations = settings.steps // settings.eval_every + 1
    return settings.steps + EVALUATION_COST * evaluations


def training_priority(settings: RunSettings) -> int:
    """Snakemake priority of a training job: 100 plus its cost in hundreds of steps, so that on a few
    cores the longest runs start first and no long run is left alone at the end (Fig. 4's 2000 steps
    with a test every step: 126; Fig. 3's 800 with a test every 10: 108)."""
    return 100 + int(training_cost(settings)) // 100
