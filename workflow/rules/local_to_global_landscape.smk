# Local to Global: the loss landscape and gradient flow of the canonical models (Figs. 1, 2, 5).

FIG1 = register_figure("figures/local_to_global/fig1.pdf", "Local to Global", "Fig. 1")


rule l2g_fig1_flows:
    """Integrate gradient-flow trajectories of the (e, w) model for every chain of Fig. 1."""
    output:
        "results/local_to_global/fig1_flows.csv",
    params:
        settings=config["local_to_global"]["fig1"],
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
