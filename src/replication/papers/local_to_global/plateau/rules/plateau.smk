# Local to Global, the loss landscape at the unigram plateau: the phase grid's standard-init runs
# above the line trained again to points on their plateau, and the Hessian of the full loss there.
# Built by figures/plateau (its own manifest); reads the phase grid's measures (figures/phase's runs).
# Training and Hessian jobs are per cell; tables, figures and claims are localrules.

# Self-contained: included before or after the package's other rule files (sorted by path).
from replication.papers import local_to_global
from replication.papers.local_to_global.phase.grid import Cell
from replication.papers.local_to_global.phase.settings import PHASE_DIR, phase_run_settings
from replication.papers.local_to_global.plateau.settings import (
    PLATEAU_DIR,
    SWEEPS,
    escape_files,
    escape_phase,
    escape_run_settings,
    escape_runtime,
    from_phase_grid,
    plateau_cells,
    plateau_files,
    value_name,
)

L2G = SETTINGS["local_to_global"]  # the paper's settings, built once (common.smk)
L2G_PAPER = local_to_global.PAPER
L2G_FIGURES = local_to_global.PAPER.figures_dir
L2G_PLATEAU_CELLS = [cell.name for cell in plateau_cells(L2G.phase)]
L2G_PLATEAU_CLAIMS = local_to_global.plateau.PART.claims[0]  # declared with what the part makes
L2G_GROWTH_CELLS = [cell.name for cell in L2G.growth.cell_list]
L2G_ESCAPE_CELLS = [cell.name for cell in L2G.escape.cell_list]
L2G_ESCAPE_VALUES = {value_name(value) for sweep in SWEEPS for value in L2G.escape.values(sweep)}


rule l2g_plateau_points:
    """Train the cell's standard-init runs again to their plateau points (fixed iterations and the
    midpoint of each escaping run's plateau): the parameters there, exactly the phase runs'."""
    input:
        measures=f"{PHASE_DIR}/measures.csv",
    output:
        points=f"{PLATEAU_DIR}/cells/{{cell}}/points.csv",
        parameters=f"{PLATEAU_DIR}/cells/{{cell}}/points.npz",
    log:
        "logs/local_to_global/plateau/{cell}_points.log",
    wildcard_constraints:
        cell="|".join(L2G_PLATEAU_CELLS) or "no-cell",
    conda:
        ENVIRONMENT
    threads: L2G.transformer.threads
    resources:
        # Three runs to at most the horizon at 16-32 ms a step (docs/plateau.md): minutes.
        mem_mb=2000,
        runtime=60,
    params:
        settings=lambda wildcards: rule_param(
            phase_run_settings(L2G.transformer, L2G.phase, Cell.named(wildcards.cell))
        ),
        plateau=rule_param(L2G.plateau),
    script:
        "../scripts/l2g_plateau_points.py"


rule l2g_plateau_spectrum:
    """The Hessian at every point of the cell, and AdamW's preconditioned Hessian: lowest eigenvalues
    and directions, held-out curvatures and verdicts, the canonical restriction, the optimiser's rates."""
    input:
        points=rules.l2g_plateau_points.output.points,
        parameters=rules.l2g_plateau_points.output.parameters,
    output:
        spectrum=f"{PLATEAU_DIR}/cells/{{cell}}/spectrum.csv",
        directions=f"{PLATEAU_DIR}/cells/{{cell}}/directions.npz",
    log:
        "logs/local_to_global/plateau/{cell}_spectrum.log",
    wildcard_constraints:
        cell="|".join(L2G_PLATEAU_CELLS) or "no-cell",
    conda:
        ENVIRONMENT
    threads: L2G.transformer.threads
    resources:
        # ~130 CPU-s a point at the default batches, three points a cell (docs/plateau.md).
        mem_mb=4000,
        runtime=60,
    params:
        hessian=rule_param(L2G.plateau.hessian),
        settings=lambda wildcards: rule_param(
            phase_run_settings(L2G.transformer, L2G.phase, Cell.named(wildcards.cell))
        ),
    script:
        "../scripts/l2g_plateau_spectrum.py"


rule l2g_plateau_tables:
    """Every point with its run's plateau (points.csv), per (cell, point) over seeds (cells.csv), and
    the escape predicted from AdamW's mode against the measured one: per escaping run (law.csv), per
    sweep cell and seed (slopes.csv), summarised (fits.csv)."""
    input:
        spectra=plateau_files(L2G.phase, "spectrum.csv"),
        measures=f"{PHASE_DIR}/measures.csv",
        escape=f"{PLATEAU_DIR}/escape.csv",
    output:
        points=f"{PLATEAU_DIR}/points.csv",
        cells=f"{PLATEAU_DIR}/cells.csv",
        law=f"{PLATEAU_DIR}/law.csv",
        slopes=f"{PLATEAU_DIR}/slopes.csv",
        fits=f"{PLATEAU_DIR}/fits.csv",
    log:
        "logs/local_to_global/plateau_tables.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        # Every cell's runs share the schedule (the phase horizon's); the first cell's stands for all.
        settings=rule_param(phase_run_settings(L2G.transformer, L2G.phase, plateau_cells(L2G.phase)[0])),
    script:
        "../scripts/l2g_plateau_tables.py"


rule l2g_plateau_curvature:
    """Heatmaps over (p, q) of the held-out curvature along the lowest Hessian eigenvector, full model
    and canonical restriction, per point, with the seeds' verdicts."""
    input:
        cells=rules.l2g_plateau_tables.output.cells,
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/plateau_curvature.pdf"),
    log:
        "logs/local_to_global/plateau_curvature.log",
    localrule: True
    conda:
        ENVIRONMENT
    script:
        "../scripts/l2g_plateau_curvature.py"


rule l2g_plateau_law:
    """The escape predicted from AdamW's mode against the measured one: per escaping run, and the slope
    against log(1/sigma) at the sweeps' cells."""
    input:
        law=rules.l2g_plateau_tables.output.law,
        slopes=rules.l2g_plateau_tables.output.slopes,
        fits=rules.l2g_plateau_tables.output.fits,
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/plateau_law.pdf"),
    log:
        "logs/local_to_global/plateau_law.log",
    localrule: True
    conda:
        ENVIRONMENT
    script:
        "../scripts/l2g_plateau_law.py"


rule l2g_plateau_directions:
    """The bottom eigenvector's share per parameter block, for cells across the range of lambda_min."""
    input:
        cells=rules.l2g_plateau_tables.output.cells,
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/plateau_directions.pdf"),
    log:
        "logs/local_to_global/plateau_directions.log",
    localrule: True
    conda:
        ENVIRONMENT
    script:
        "../scripts/l2g_plateau_directions.py"


rule l2g_plateau_growth:
    """One growth cell's runs trained again through the plateau with dense checkpoints, projected on
    the unstable mode, the bottom eigenvector and the canonical directions at the fixed point."""
    input:
        points=rules.l2g_plateau_points.output.points,
        directions=rules.l2g_plateau_spectrum.output.directions,
    output:
        f"{PLATEAU_DIR}/growth/{{cell}}.csv",
    log:
        "logs/local_to_global/plateau/{cell}_growth.log",
    wildcard_constraints:
        cell="|".join(L2G_GROWTH_CELLS) or "no-cell",
    conda:
        ENVIRONMENT
    threads: L2G.transformer.threads
    resources:
        # A run to at most the horizon per seed at 16-32 ms a step (docs/plateau.md).
        mem_mb=2000,
        runtime=60,
    params:
        settings=lambda wildcards: rule_param(
            phase_run_settings(L2G.transformer, L2G.phase, Cell.named(wildcards.cell))
        ),
        growth=rule_param(L2G.growth),
        point=L2G.plateau.points[0],
    script:
        "../scripts/l2g_plateau_growth.py"


rule l2g_plateau_growth_figure:
    """The projection on the unstable mode against the learning rate spent, with the predicted
    growth; the fitted rate against the predicted one per run (growth_rates.csv)."""
    input:
        runs=expand(f"{PLATEAU_DIR}/growth/{{cell}}.csv", cell=L2G_GROWTH_CELLS),
        points=rules.l2g_plateau_tables.output.points,
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/plateau_growth.pdf"),
        rates=f"{PLATEAU_DIR}/growth_rates.csv",
    log:
        "logs/local_to_global/plateau_growth_figure.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        cells=L2G_GROWTH_CELLS,
        point=L2G.plateau.points[0],
    script:
        "../scripts/l2g_plateau_growth_figure.py"


rule l2g_plateau_escape_runs:
    """One cell's standard-init runs (every seed of the sweeps) trained as the phase grid trains them,
    with sigma or the batch size set to one value of its sweep, each to its escape: their escape,
    plateau and CPU-s."""
    output:
        f"{PLATEAU_DIR}/escape/{{cell}}/{{sweep}}_{{value}}.csv",
    log:
        "logs/local_to_global/plateau/escape/{cell}_{sweep}_{value}.log",
    wildcard_constraints:
        cell="|".join(L2G_ESCAPE_CELLS),
        sweep="|".join(SWEEPS),
        value="|".join(sorted(L2G_ESCAPE_VALUES)),
    conda:
        ENVIRONMENT
    threads: L2G.transformer.threads
    resources:
        # Up to three runs of the horizon at 16-32 ms a step at batch 16 (docs/phase-diagram.md), a step
        # about batch / 16 times that: 30 min per 16 sequences of batch, and memory for the largest batch.
        mem_mb=4000,
        runtime=lambda wildcards: escape_runtime(
            L2G.escape, L2G.transformer.batch_size, wildcards.sweep, wildcards.value
        ),
    params:
        settings=lambda wildcards: rule_param(
            escape_run_settings(
                L2G.transformer,
                L2G.phase,
                L2G.escape,
                Cell.named(wildcards.cell),
                wildcards.sweep,
                L2G.escape.value_named(wildcards.sweep, wildcards.value),
            )
        ),
        phase=lambda wildcards: rule_param(escape_phase(L2G.phase, L2G.escape, Cell.named(wildcards.cell))),
    script:
        "../scripts/l2g_plateau_escape_runs.py"


rule l2g_plateau_escape_phase_runs:
    """An escape job whose runs are the phase grid's (the transformer's own sigma or batch size at a
    cell of the grid): its rows read from the grid's measures, not trained again."""
    input:
        measures=f"{PHASE_DIR}/measures.csv",
        costs=f"{PHASE_DIR}/cells/{{cell}}/runs.csv",
    output:
        f"{PLATEAU_DIR}/escape/{{cell}}/phase_{{sweep}}_{{value}}.csv",
    log:
        "logs/local_to_global/plateau/escape/{cell}_phase_{sweep}_{value}.log",
    wildcard_constraints:
        cell="|".join(L2G_ESCAPE_CELLS),
        sweep="|".join(SWEEPS),
        value="|".join(sorted(L2G_ESCAPE_VALUES)),
    localrule: True
    conda:
        ENVIRONMENT
    params:
        settings=lambda wildcards: rule_param(
            escape_run_settings(
                L2G.transformer,
                L2G.phase,
                L2G.escape,
                Cell.named(wildcards.cell),
                wildcards.sweep,
                L2G.escape.value_named(wildcards.sweep, wildcards.value),
            )
        ),
    script:
        "../scripts/l2g_plateau_escape_phase_runs.py"


rule l2g_plateau_escape_table:
    """Every escape job's runs joined: one row per (cell, sweep, value, seed)."""
    input:
        runs=escape_files(L2G.transformer, L2G.phase, L2G.escape),
    output:
        f"{PLATEAU_DIR}/escape.csv",
    log:
        "logs/local_to_global/plateau_escape_table.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        batch_factor=L2G.escape.batch_factor,
    script:
        "../scripts/l2g_plateau_escape_table.py"


rule l2g_plateau_escape:
    """The escape iteration against log(1/sigma) and against the batch size, per cell (never escaped: at the horizon)."""
    input:
        escape=rules.l2g_plateau_escape_table.output[0],
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/plateau_escape.pdf"),
    log:
        "logs/local_to_global/plateau_escape.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        batch_factor=L2G.escape.batch_factor,
    script:
        "../scripts/l2g_plateau_escape.py"


rule l2g_plateau_claims:
    """Per cell and point over seeds: a local minimum of the full model (3m) and of the canonical
    restriction (3c); per point: the saddle law within a factor 2 (5s); per escape cell over seeds:
    the escape grows with log(1/sigma) (5i) and does not depend on the batch (5b)."""
    input:
        points=rules.l2g_plateau_tables.output.points,
        fits=rules.l2g_plateau_tables.output.fits,
        slopes=rules.l2g_plateau_tables.output.slopes,
        growth=rules.l2g_plateau_growth_figure.output.rates,
        escape=rules.l2g_plateau_escape_table.output[0],
    output:
        L2G_PLATEAU_CLAIMS,
    log:
        "logs/local_to_global/plateau_claims.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        hessian=rule_param(L2G.plateau.hessian),
        escape=rule_param(L2G.escape),
    script:
        "../scripts/l2g_plateau_claims.py"


rule l2g_plateau_findings:
    """figures/plateau_findings.md: where the plateau is a minimum and where a saddle, and what decides
    the escape at the sweeps' cells, in words, from the tables."""
    input:
        cells=rules.l2g_plateau_tables.output.cells,
        points=rules.l2g_plateau_tables.output.points,
        fits=rules.l2g_plateau_tables.output.fits,
        slopes=rules.l2g_plateau_tables.output.slopes,
        growth=rules.l2g_plateau_growth_figure.output.rates,
        escape=rules.l2g_plateau_escape_table.output[0],
    output:
        "figures/plateau_findings.md",
    log:
        "logs/local_to_global/plateau_findings.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        batch_factor=L2G.escape.batch_factor,
        significance=L2G.plateau.hessian.significance,
    script:
        "../scripts/l2g_plateau_findings.py"
