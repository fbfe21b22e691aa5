# Local to Global: the loss landscape and gradient flow of the canonical models (Figs. 1, 2, 5).
# Figure rules are localrules: on a cluster they run in the driver (seconds each, not worth a queue wait).

from replication.papers import local_to_global

L2G = SETTINGS["local_to_global"]  # the paper's settings, built once (common.smk)
L2G_PAPER = local_to_global.PAPER
L2G_FIGURES = local_to_global.PAPER.figures_dir


rule l2g_fig1_flows:
    """Integrate gradient-flow trajectories of the (e, w) model for every chain of Fig. 1."""
    output:
        "results/local_to_global/fig1_flows.csv",
    log:
        "logs/local_to_global/fig1_flows.log",
    benchmark:
        "benchmarks/l2g_fig1_flows/run.tsv"
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        settings=rule_param(L2G.landscape.fig1),
    script:
        "../scripts/l2g_fig1_flows.py"


rule l2g_fig1:
    """Fig. 1: energy lines, -grad L, critical sets and basins, with the integrated flows."""
    input:
        flows=rules.l2g_fig1_flows.output[0],
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/fig1.pdf"),
    log:
        "logs/local_to_global/fig1.log",
    benchmark:
        "benchmarks/l2g_fig1/run.tsv"
    localrule: True
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        settings=rule_param(L2G.landscape.fig1),
    script:
        "../scripts/l2g_fig1.py"


# The model with the attention scalar, theta = (e, w, a) (Figs. 2, 5), and the measured basins.


rule l2g_canonical3d_flows:
    """Integrate (e, w, a) gradient flows from N(0, sigma^2 I_3) starts for Fig. 2 or Fig. 5."""
    output:
        "results/local_to_global/canonical3d_flows/{fig}.csv",
    log:
        "logs/local_to_global/canonical3d_flows/{fig}.log",
    benchmark:
        "benchmarks/l2g_canonical3d_flows/{fig}.tsv"
    wildcard_constraints:
        fig="fig2|fig5",
    conda:
        ENVIRONMENT
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        settings=lambda wildcards: rule_param(getattr(L2G.landscape, wildcards.fig)),
    script:
        "../scripts/l2g_canonical3d_flows.py"


rule l2g_fig2:
    """Fig. 2: critical sets of the (e, w, a) model and flows coloured by where they end."""
    input:
        flows="results/local_to_global/canonical3d_flows/fig2.csv",
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/fig2.pdf"),
    log:
        "logs/local_to_global/fig2.log",
    benchmark:
        "benchmarks/l2g_fig2/run.tsv"
    localrule: True
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        settings=rule_param(L2G.landscape.fig2),
    script:
        "../scripts/l2g_fig2.py"


rule l2g_fig5:
    """Fig. 5: Fig. 2 near the origin, with |e| against time (attracting or repelling e = 0)."""
    input:
        flows="results/local_to_global/canonical3d_flows/fig5.csv",
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/fig5.pdf"),
    log:
        "logs/local_to_global/fig5.log",
    benchmark:
        "benchmarks/l2g_fig5/run.tsv"
    localrule: True
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        settings=rule_param(L2G.landscape.fig5),
    script:
        "../scripts/l2g_fig5.py"


rule l2g_basin_fractions:
    """Fraction of N(0, sigma^2 I) starts whose 2-D / 3-D flow ends at a local minimum."""
    output:
        "results/local_to_global/basin_fractions.csv",
    log:
        "logs/local_to_global/basin_fractions.log",
    benchmark:
        "benchmarks/l2g_basin_fractions/run.tsv"
    # The longest single job at paper settings (~100 s, longer than any training run): it starts first.
    priority: 200
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        settings=rule_param(L2G.landscape.basins),
    script:
        "../scripts/l2g_basin_fractions.py"


rule l2g_basin_grid:
    """2-D flow endpoints from a grid of starts against the basins of Thms 2/8 (claim 1)."""
    output:
        "results/local_to_global/basin_grid.csv",
    log:
        "logs/local_to_global/basin_grid.log",
    benchmark:
        "benchmarks/l2g_basin_grid/run.tsv"
    priority: 20
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        settings=rule_param(L2G.landscape.basins),
    script:
        "../scripts/l2g_basin_grid.py"


rule l2g_basins:
    """Basins figure: fraction ending at a local minimum against sigma, 2-D (with theory) and 3-D."""
    input:
        basins=rules.l2g_basin_fractions.output[0],
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/basins.pdf"),
    log:
        "logs/local_to_global/basins.log",
    benchmark:
        "benchmarks/l2g_basins/run.tsv"
    localrule: True
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        settings=rule_param(L2G.landscape.basins),
    script:
        "../scripts/l2g_basins.py"


rule l2g_claims_landscape:
    """Claims 1-4 of the spec (basins, energy, endpoint losses on sampled sequences, small initialisations)."""
    input:
        basins=rules.l2g_basin_fractions.output[0],
        grid=rules.l2g_basin_grid.output[0],
    output:
        local_to_global.landscape.PART.claims[0],
        sampled="results/local_to_global/endpoint_losses_sampled.csv",
    log:
        "logs/local_to_global/claims_landscape.log",
    benchmark:
        "benchmarks/l2g_claims_landscape/run.tsv"
    conda:
        ENVIRONMENT
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        settings=rule_param(L2G.landscape.basins),
    script:
        "../scripts/l2g_claims_landscape.py"
