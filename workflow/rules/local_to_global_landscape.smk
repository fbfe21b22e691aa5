# Local to Global: the loss landscape and gradient flow of the canonical models (Figs. 1, 2, 5).

FIG1 = register_figure("figures/local_to_global/fig1.pdf", "Local to Global", "Fig. 1")


rule l2g_fig1_flows:
    """Integrate gradient-flow trajectories of the (e, w) model for every chain of Fig. 1."""
    output:
        "results/local_to_global/fig1_flows.csv",
    params:
        settings=config["local_to_global"]["fig1"],
    benchmark:
        "benchmarks/l2g_fig1_flows/run.tsv",
    log:
        "logs/local_to_global/fig1_flows.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_fig1_flows.py"


rule l2g_fig1:
    """Fig. 1: energy lines, -grad L, critical sets and basins, with the integrated flows."""
    input:
        flows=rules.l2g_fig1_flows.output[0],
    output:
        **figure_outputs(FIG1, caption="../report/l2g_fig1.rst", category="Local to Global"),
    params:
        settings=config["local_to_global"]["fig1"],
    benchmark:
        "benchmarks/l2g_fig1/run.tsv",
    log:
        "logs/local_to_global/fig1.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_fig1.py"


# The model with the attention scalar, theta = (e, w, a) (Figs. 2, 5), and the measured basins.

FIG2 = register_figure("figures/local_to_global/fig2.pdf", "Local to Global", "Fig. 2")
FIG5 = register_figure("figures/local_to_global/fig5.pdf", "Local to Global", "Fig. 5")
BASINS = register_figure("figures/local_to_global/basins.pdf", "Local to Global", "Basins of initialisation (beyond the paper)")
register_claims("results/local_to_global/claims_landscape.csv")


rule l2g_attention_flows:
    """Integrate (e, w, a) gradient flows from N(0, sigma^2 I_3) starts for Fig. 2 or Fig. 5."""
    output:
        "results/local_to_global/{fig}_flows.csv",
    wildcard_constraints:
        fig="fig2|fig5",
    params:
        settings=lambda wildcards: config["local_to_global"][wildcards.fig],
    benchmark:
        "benchmarks/l2g_attention_flows/{fig}_flows.tsv",
    log:
        "logs/local_to_global/{fig}_flows.log",
    resources:
        mem_mb=1000,
        runtime=30,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_attention_flows.py"


rule l2g_fig2:
    """Fig. 2: critical sets of the (e, w, a) model and flows coloured by where they end."""
    input:
        flows="results/local_to_global/fig2_flows.csv",
    output:
        **figure_outputs(FIG2, caption="../report/l2g_fig2.rst", category="Local to Global"),
    params:
        settings=config["local_to_global"]["fig2"],
        zoomed=False,
    benchmark:
        "benchmarks/l2g_fig2/run.tsv",
    log:
        "logs/local_to_global/fig2.log",
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_attention_figure.py"


rule l2g_fig5:
    """Fig. 5: Fig. 2 near the origin, with |e| against time (attracting or repelling e = 0)."""
    input:
        flows="results/local_to_global/fig5_flows.csv",
    output:
        **figure_outputs(FIG5, caption="../report/l2g_fig5.rst", category="Local to Global"),
    params:
        settings=config["local_to_global"]["fig5"],
        zoomed=True,
    benchmark:
        "benchmarks/l2g_fig5/run.tsv",
    log:
        "logs/local_to_global/fig5.log",
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_attention_figure.py"


rule l2g_basins:
    """Fraction of N(0, sigma^2 I) starts whose 2-D / 3-D flow ends at a local minimum."""
    output:
        "results/local_to_global/basins.csv",
    params:
        settings=config["local_to_global"]["basins"],
    benchmark:
        "benchmarks/l2g_basins/run.tsv",
    priority: 50
    log:
        "logs/local_to_global/basins.log",
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_basins.py"


rule l2g_basin_grid:
    """2-D flow endpoints from a grid of starts against the basins of Thms 2/8 (claim 1)."""
    output:
        "results/local_to_global/basin_grid.csv",
    params:
        settings=config["local_to_global"]["basins"],
    benchmark:
        "benchmarks/l2g_basin_grid/run.tsv",
    priority: 20
    log:
        "logs/local_to_global/basin_grid.log",
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_basin_grid.py"


rule l2g_basins_figure:
    """Basins figure: fraction ending at a local minimum against sigma, 2-D (with theory) and 3-D."""
    input:
        basins=rules.l2g_basins.output[0],
    output:
        **figure_outputs(BASINS, caption="../report/l2g_basins.rst", category="Local to Global"),
    params:
        settings=config["local_to_global"]["basins"],
    benchmark:
        "benchmarks/l2g_basins_figure/run.tsv",
    log:
        "logs/local_to_global/basins_figure.log",
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_basins_figure.py"


rule l2g_claims_landscape:
    """Claims 1-4 of the spec (basins, energy, endpoint losses on sampled sequences, small initialisations)."""
    input:
        basins=rules.l2g_basins.output[0],
        grid=rules.l2g_basin_grid.output[0],
    output:
        "results/local_to_global/claims_landscape.csv",
        sampled="results/local_to_global/endpoint_losses_sampled.csv",
    params:
        settings=config["local_to_global"]["basins"],
    benchmark:
        "benchmarks/l2g_claims_landscape/run.tsv",
    log:
        "logs/local_to_global/claims_landscape.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_claims_landscape.py"
