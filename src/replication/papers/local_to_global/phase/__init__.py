"""Phase diagram of the transformer over (p, q): where the standard init stays at the unigram
plateau, for how long, and whether the canonical model's prediction (p + q > 1: stays; p + q < 1:
reaches the entropy rate) holds beyond the paper's two chains. Built by figures/phase, not by
figures/all: it is a cluster-sized workload (docs/phase-diagram.md)."""

from replication.contract import Figure, Part

MANIFEST = "phase"  # figures/phase: its own manifest target, beside the laptop set figures/all

_FIGURES = "figures/local_to_global"

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
)
