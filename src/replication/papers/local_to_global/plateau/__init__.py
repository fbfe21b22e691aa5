"""The full transformer's loss landscape at the unigram plateau, cell by cell of the phase grid:
is the plateau point a minimum of the full loss, as the canonical model says above the line, or a
saddle? ``points`` trains the phase runs again to points on their plateau, ``hessian`` gives the
loss as a twice-differentiable function with Hessian-vector products and Lanczos, ``spectrum`` the
curvature at a point, ``analysis`` the tables and the saddle law, ``plots`` and ``claims`` read them.
Built by figures/plateau (docs/plateau.md), which reads the phase grid (figures/phase)."""

from pathlib import Path

from replication.contract import Figure, Part, RunCost, Table

MANIFEST = "plateau"  # figures/plateau: its own manifest target

_FIGURES = "figures/local_to_global"


def cost_arguments(run: Path) -> tuple[str, ...]:
    """What ``plateau.cost`` reports of a finished run in ``run``: its total from ``run/time*.txt``
    (``/usr/bin/time -v`` reports, one per part of a run stopped and resumed), the phase grid's from
    ``run/phase_time.txt`` when there, and what the run did."""
    times = sorted(run.glob("time*.txt"))
    found = ("--time", *map(str, times)) if times else ()  # plateau.cost says the reports are needed
    phase = ("--phase-time", str(run / "phase_time.txt")) if (run / "phase_time.txt").is_file() else ()
    return ("--directory", str(run), *found, *phase)


# What it makes (captions in report/), all in figures/plateau: the paper gathers it (replication.contract.Part).
PART = Part(
    "plateau",
    figures=(
        Figure(
            f"{_FIGURES}/plateau_curvature.pdf", "Curvature at the plateau (beyond the paper)", "plateau_curvature.rst"
        ),
        Figure(
            f"{_FIGURES}/plateau_law.pdf",
            "The escape predicted from AdamW's step (beyond the paper)",
            "plateau_law.rst",
        ),
        Figure(
            f"{_FIGURES}/plateau_growth.pdf", "The instability seen growing (beyond the paper)", "plateau_growth.rst"
        ),
        Figure(
            f"{_FIGURES}/plateau_directions.pdf",
            "Where the lowest curvature lies (beyond the paper)",
            "plateau_directions.rst",
        ),
        Figure(f"{_FIGURES}/plateau_escape.pdf", "What decides the escape (beyond the paper)", "plateau_escape.rst"),
    ),
    tables=(Table("figures/plateau_findings.md", "Minimum or saddle: findings in words"),),
    claims=("results/local_to_global/plateau/claims.csv",),
    manifest=MANIFEST,
    run_cost=RunCost(f"{__name__}.cost", "plateau_run.md", cost_arguments),
)
