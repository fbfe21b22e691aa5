"""Phase diagram of the transformer over (p, q): where the standard init stays at the unigram
plateau, for how long, and whether the canonical model's prediction (p + q > 1: stays; p + q < 1:
reaches the entropy rate) holds beyond the paper's two chains. Built by figures/phase, not by
figures/all: it is a cluster-sized workload (docs/phase-diagram.md)."""

from pathlib import Path

from replication.contract import Figure, Part, RunCost

MANIFEST = "phase"  # figures/phase: its own manifest target, beside the laptop set figures/all

_FIGURES = "figures/local_to_global"


def cost_arguments(run: Path) -> tuple[str, ...]:
    """What ``phase.cost`` measures of a finished grid in ``run``: its runs' kernel counts, a job's
    start-up, the machine's GEMM rate, the step and the heap; with ``run/time.txt`` (a ``/usr/bin/time -v``
    report of the whole run), its total."""
    found = ("--time", str(run / "time.txt")) if (run / "time.txt").is_file() else ()
    return ("--directory", str(run), "--startups", "3", "--gemm", "--step", "--heap", *found)


# What it makes (captions in report/), all in figures/phase: the paper gathers it (replication.contract.Part).
PART = Part(
    "phase",
    figures=(
        Figure(f"{_FIGURES}/phase_heatmaps.pdf", "Phase diagram over (p, q) (beyond the paper)", "phase_heatmaps.rst"),
        Figure(
            f"{_FIGURES}/phase_plateau.pdf",
            "Plateau length against the candidate explanations (beyond the paper)",
            "phase_plateau.rst",
        ),
    ),
    claims=("results/local_to_global/phase/claims.csv",),
    manifest=MANIFEST,
    run_cost=RunCost(f"{__name__}.cost", "phase_cost.md", cost_arguments),
)
