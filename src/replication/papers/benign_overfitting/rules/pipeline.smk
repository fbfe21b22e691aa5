# Benign overfitting in token selection (arXiv 2409.17625 v1): Fig. 1 selections, recorded runs
# (Figs. 2, 3), the d x ||mu|| grid in shards (Figs. 4-6, accuracy), then the claims table.
# The grid merge and the figure rules are localrules: on a cluster they run in the driver (seconds each).
from replication.papers import benign_overfitting
from replication.papers.benign_overfitting.settings import grid_cells, shards

BO = SETTINGS["benign_overfitting"]  # the paper's settings, built once (common.smk)
BO_PAPER = benign_overfitting.PAPER
BO_RESULTS = benign_overfitting.PAPER.results_dir
BO_FIGURES = benign_overfitting.PAPER.figures_dir
BO_SHARDS = shards(grid_cells(BO.grid), BO.grid.shard_size)
BO_SHARD_IDS = [f"{k:03d}" for k in range(len(BO_SHARDS))]
BO_CLAIMS = register_claims(f"{BO_RESULTS}/claims.csv")


wildcard_constraints:
    bo_shard=r"\d{3}",


rule bo_fig1_selections:
    """Fig. 1 data: hand-built p for the three scenarios, hard token selection on train and test."""
    output:
        f"{BO_RESULTS}/fig1_selections.csv",
    log:
        "logs/benign_overfitting/fig1_selections.log",
    benchmark:
        "benchmarks/bo_fig1_selections/run.tsv"
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        model=rule_param(BO.model),
        settings=rule_param(BO.fig1),
    script:
        "../scripts/bo_fig1_selections.py"


rule bo_trajectories:
    """Recorded training runs (every token's probability every record_every steps) of Figs. 2, 3."""
    output:
        expand(f"{BO_RESULTS}/trajectories/{{bo_panel}}.npz", bo_panel=benign_overfitting.PANELS),
    log:
        "logs/benign_overfitting/trajectories.log",
    benchmark:
        "benchmarks/bo_trajectories/run.tsv"
    conda:
        ENVIRONMENT
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        model=rule_param(BO.model),
        settings=rule_param(BO.trajectories),
        panels=list(benign_overfitting.PANELS),
    script:
        "../scripts/bo_trajectories.py"


rule bo_grid_shard:
    """Train one shard of grid runs (shard_size cells; 20 = one d) with the exact Gram trainer."""
    output:
        f"{BO_RESULTS}/grid_shard/{{bo_shard}}.csv",
    log:
        "logs/benign_overfitting/grid_shard/{bo_shard}.log",
    benchmark:
        "benchmarks/bo_grid_shard/{bo_shard}.tsv"
    priority: 10
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=120,
    params:
        model=rule_param(BO.model),
        steps=BO.grid.steps,
        cells=lambda wildcards: BO_SHARDS[int(wildcards.bo_shard)],
    script:
        "../scripts/bo_grid_shard.py"


rule bo_grid:
    """Merge the shards into one tidy table: one row per (d, ||mu||, seed)."""
    input:
        expand(f"{BO_RESULTS}/grid_shard/{{bo_shard}}.csv", bo_shard=BO_SHARD_IDS),
    output:
        f"{BO_RESULTS}/grid.csv",
    log:
        "logs/benign_overfitting/grid.log",
    benchmark:
        "benchmarks/bo_grid/run.tsv"
    localrule: True
    conda:
        ENVIRONMENT
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/bo_grid.py"


rule bo_fig1:
    """Fig. 1: selected tokens along mu_{-1} and mu_{+1}, train over test, three scenarios."""
    input:
        selections=rules.bo_fig1_selections.output[0],
    output:
        **figure_outputs(BO_PAPER, f"{BO_FIGURES}/fig1.pdf"),
    log:
        "logs/benign_overfitting/fig1.log",
    benchmark:
        "benchmarks/bo_fig1/run.tsv"
    localrule: True
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        settings=rule_param(BO.fig1),
        model=rule_param(BO.model),
    script:
        "../scripts/bo_fig1.py"


rule bo_fig2:
    """Fig. 2: S against the relevant-token probability along the run of Fig. 3a."""
    input:
        trajectory=rules.bo_trajectories.output[0],
    output:
        **figure_outputs(BO_PAPER, f"{BO_FIGURES}/fig2.pdf"),
    log:
        "logs/benign_overfitting/fig2.log",
    benchmark:
        "benchmarks/bo_fig2/run.tsv"
    localrule: True
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        settings=rule_param(BO.trajectories),
        model=rule_param(BO.model),
    script:
        "../scripts/bo_fig2.py"


rule bo_fig3:
    """Figs. 3a-c: softmax dynamics of samples picked by their final argmax token."""
    input:
        trajectories=rules.bo_trajectories.output,
    output:
        # <name>_pdf, <name>_png, <name>_csv for each of the three figures
        **{
            f"fig3{panel}_{kind}": path
            for panel in benign_overfitting.PANELS
            for kind, path in figure_outputs(BO_PAPER, f"{BO_FIGURES}/fig3{panel}.pdf").items()
        },
    log:
        "logs/benign_overfitting/fig3.log",
    benchmark:
        "benchmarks/bo_fig3/run.tsv"
    localrule: True
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        panels=list(benign_overfitting.PANELS),
        settings=rule_param(BO.trajectories),
        model=rule_param(BO.model),
    script:
        "../scripts/bo_fig3.py"


rule bo_heatmaps:
    """Figs. 4, 5, 6 (as defined and as coded) and the accuracy heatmaps from grid.csv."""
    input:
        grid=rules.bo_grid.output[0],
    output:
        **{
            f"{name}_{kind}": path
            for name in benign_overfitting.HEATMAPS
            for kind, path in figure_outputs(BO_PAPER, f"{BO_FIGURES}/{name}.pdf").items()
        },
    log:
        "logs/benign_overfitting/heatmaps.log",
    benchmark:
        "benchmarks/bo_heatmaps/run.tsv"
    localrule: True
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        names=list(benign_overfitting.HEATMAPS),
        settings=rule_param(BO.grid),
        model=rule_param(BO.model),
        claims=rule_param(BO.claims),
    script:
        "../scripts/bo_heatmaps.py"


rule bo_claims:
    """The claims of the paper (spec section 4), measured: claim, value, threshold, holds."""
    input:
        grid=rules.bo_grid.output[0],
        selections=rules.bo_fig1_selections.output[0],
        trajectories=rules.bo_trajectories.output,
    output:
        BO_CLAIMS,
    log:
        "logs/benign_overfitting/claims.log",
    benchmark:
        "benchmarks/bo_claims/run.tsv"
    conda:
        ENVIRONMENT
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        claims=rule_param(BO.claims),
    script:
        "../scripts/bo_claims.py"
