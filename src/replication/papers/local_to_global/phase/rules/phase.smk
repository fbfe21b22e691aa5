# Local to Global, phase diagram: the transformer trained over a grid of (p, q), built by
# figures/phase (its own manifest; figures/all stays the laptop set). One training job per cell
# runs every (init, seed) of the cell: a job's start-up (Python, torch, the workflow) is seconds,
# a run tens of seconds, so per-cell jobs keep start-up to a few per cent (docs/phase-diagram.md).
# Measures, figures and claims read the cells and are localrules.

# Self-contained: included before or after the package's other rule files (sorted by path).
from replication.papers import local_to_global
from replication.papers.local_to_global.phase.grid import Cell
from replication.papers.local_to_global.phase.settings import PHASE_DIR, cell_files, phase_run_settings

L2G = SETTINGS["local_to_global"]  # the paper's settings, built once (common.smk)
L2G_PAPER = local_to_global.PAPER
L2G_FIGURES = local_to_global.PAPER.figures_dir
L2G_PHASE_CELLS = [cell.name for cell in L2G.phase.cells]
L2G_PHASE_CLAIMS = local_to_global.phase.PART.claims[0]  # declared with what the part makes


rule l2g_phase_cell:
    """Train every (init, seed) of one (p, q) cell to the horizon or its early stop: evaluations
    (test loss and the chain's own cross-entropy on the same batch), runs (steps, CPU-s), final weights."""
    output:
        evaluations=f"{PHASE_DIR}/cells/{{cell}}/evaluations.csv",
        runs=f"{PHASE_DIR}/cells/{{cell}}/runs.csv",
        final=f"{PHASE_DIR}/cells/{{cell}}/final.npz",
    log:
        "logs/local_to_global/phase/{cell}.log",
    benchmark:
        "benchmarks/l2g_phase_cell/{cell}.tsv"
    wildcard_constraints:
        cell="|".join(L2G_PHASE_CELLS) or "no-cell",
    conda:
        ENVIRONMENT
    threads: L2G.transformer.threads
    resources:
        # Six runs of at most 3000 iterations at 16-32 ms of one core each (measured, busy or idle 2-core
        # machine): up to ~10 min; resident memory ~0.5 GB (docs/phase-diagram.md). Twice that, for slower nodes.
        mem_mb=2000,
        runtime=60,
    params:
        settings=lambda wildcards: rule_param(
            phase_run_settings(L2G.transformer, L2G.phase, Cell.named(wildcards.cell))
        ),
        stop=rule_param(L2G.phase.stop),
        smooth=L2G.phase.measures.smooth,  # the stopping rule's window; the other measures are post hoc
    script:
        "../scripts/l2g_phase_cell.py"


rule l2g_phase_measures:
    """Per run: excess loss, plateau, escape, final closed fraction, noise, the rank-one structure of
    its final weights; per cell: resolvability."""
    input:
        evaluations=cell_files(L2G.phase, "evaluations.csv"),
        runs=cell_files(L2G.phase, "runs.csv"),
        final=cell_files(L2G.phase, "final.npz"),
    output:
        runs=f"{PHASE_DIR}/measures.csv",
        cells=f"{PHASE_DIR}/cells.csv",
    log:
        "logs/local_to_global/phase_measures.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        cells=L2G_PHASE_CELLS,
        phase=rule_param(L2G.phase),
    script:
        "../scripts/l2g_phase_measures.py"


rule l2g_phase_heatmaps:
    """Heatmaps over (p, q), per init: median plateau length, fraction still on the plateau at the window end and the horizon."""
    input:
        cells=rules.l2g_phase_measures.output.cells,
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/phase_heatmaps.pdf"),
    log:
        "logs/local_to_global/phase_heatmaps.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        settings=rule_param(L2G.phase),
    script:
        "../scripts/l2g_phase_heatmaps.py"


rule l2g_phase_plateau:
    """Plateau length of every run against |p + q - 1|, the gap H(pi) - entropy rate and |pi1 - 1/2|."""
    input:
        runs=rules.l2g_phase_measures.output.runs,
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/phase_plateau.pdf"),
    log:
        "logs/local_to_global/phase_plateau.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        settings=rule_param(L2G.phase),
    script:
        "../scripts/l2g_phase_plateau.py"


rule l2g_phase_claims:
    """Per cell over seeds: 6g (rank one, aligned with e), the plateau (p + q > 1), the entropy rate (p + q < 1; ours)."""
    input:
        runs=rules.l2g_phase_measures.output.runs,
        cells=rules.l2g_phase_measures.output.cells,
    output:
        L2G_PHASE_CLAIMS,
    log:
        "logs/local_to_global/phase_claims.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        phase=rule_param(L2G.phase),
        claims=rule_param(L2G.transformer.claims),
    script:
        "../scripts/l2g_phase_claims.py"
