# Local to Global: a single-layer transformer trained on Markov chains (Figs. 3, 4, 6; Tables 1, 2).
# One training job per (experiment, init, seed); figures, tables and claims read the runs and are
# localrules: on a cluster they run in the driver (seconds each, not worth a queue wait).

from replication.papers import local_to_global
from replication.papers.local_to_global.transformer import INITS
from replication.papers.local_to_global.transformer.ablation_variants import RETRAINED, variant_settings
from replication.papers.local_to_global.transformer.jobs import (
    ABLATION_PATTERN,
    RUN_PATTERN,
    ablation_files,
    ablation_runs,
    run_files,
    training_priority,
)

L2G = SETTINGS["local_to_global"]  # the paper's settings, built once (common.smk)
L2G_PAPER = local_to_global.PAPER
L2G_FIGURES = local_to_global.PAPER.figures_dir
L2G_EXPERIMENTS = L2G.transformer.experiments
L2G_RUN_SETTINGS = {name: L2G.transformer.run(name) for name in L2G_EXPERIMENTS}
L2G_CLAIMS = local_to_global.transformer.PART.claims[0]  # declared with what the part makes


rule l2g_transformer:
    """Train one run: test loss every eval_every steps (losses.csv) and parameter checkpoints (.npz)."""
    output:
        losses=f"{RUN_PATTERN}/losses.csv",
        checkpoints=f"{RUN_PATTERN}/checkpoints.npz",
    log:
        "logs/local_to_global/transformer/{experiment}/{init}/seed{seed}.log",
    benchmark:
        "benchmarks/l2g_transformer/{experiment}/{init}/seed{seed}.tsv"
    wildcard_constraints:
        experiment="|".join(L2G_EXPERIMENTS),
        init="|".join(INITS),
        seed=r"\d+",
    priority: lambda wildcards: training_priority(L2G_RUN_SETTINGS[wildcards.experiment])
    conda:
        ENVIRONMENT
    threads: L2G.transformer.threads
    resources:
        mem_mb=4000,
        runtime=240,
    params:
        settings=lambda wildcards: rule_param(L2G_RUN_SETTINGS[wildcards.experiment]),
        run=lambda wildcards: f"{wildcards.experiment}/{wildcards.init}/seed{wildcards.seed}",
    script:
        "../scripts/l2g_transformer.py"


rule l2g_ablation_run:
    """Retrain a figure's first run with one setting of the authors' code changed (Fig. 3 / Fig. 6 ablation)."""
    output:
        losses=f"{ABLATION_PATTERN}/losses.csv",
        checkpoints=f"{ABLATION_PATTERN}/checkpoints.npz",
    log:
        "logs/local_to_global/ablation_run/{experiment}/{variant}/{init}/seed{seed}.log",
    benchmark:
        "benchmarks/l2g_ablation_run/{experiment}/{variant}/{init}/seed{seed}.tsv"
    wildcard_constraints:
        experiment="fig3|fig6",
        variant="|".join(RETRAINED),
        init="standard|rank_one",
        seed=r"\d+",
    priority: lambda wildcards: training_priority(L2G_RUN_SETTINGS[wildcards.experiment])
    conda:
        ENVIRONMENT
    threads: L2G.transformer.threads
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        settings=lambda wildcards: rule_param(
            variant_settings(
                L2G_RUN_SETTINGS[wildcards.experiment], L2G.transformer.ablation, wildcards.variant, wildcards.init
            )
        ),
        run=lambda wildcards: f"ablation/{wildcards.experiment}/{wildcards.variant}/seed{wildcards.seed}",
    script:
        "../scripts/l2g_ablation_run.py"


rule l2g_ablation:
    """W_V's and W_1's top share and alignment with e at the checkpoints, per ablation variant."""
    input:
        checkpoints=lambda wildcards: ablation_files(L2G.transformer, wildcards.experiment),
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/{{experiment}}_ablation.pdf"),
    log:
        "logs/local_to_global/{experiment}_ablation.log",
    benchmark:
        "benchmarks/l2g_ablation/{experiment}.tsv"
    wildcard_constraints:
        experiment="fig3|fig6",
    localrule: True
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        runs=lambda wildcards: ablation_runs(L2G.transformer, wildcards.experiment),
        settings=rule_param(L2G.transformer.ablation),
        experiment=lambda wildcards: wildcards.experiment,
    script:
        "../scripts/l2g_ablation.py"


rule l2g_fig3:
    """Fig. 3: W_V and W_1 from the standard init at the checkpoints, and their top singular value share."""
    input:
        # The first seed's heatmaps; the structure table covers every seed.
        checkpoints=run_files(L2G.transformer, "fig3", "checkpoints.npz"),
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/fig3.pdf"),
        structure=f"{L2G_FIGURES}/fig3_structure.csv",
    log:
        "logs/local_to_global/fig3.log",
    benchmark:
        "benchmarks/l2g_fig3/run.tsv"
    localrule: True
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        settings=rule_param(L2G_RUN_SETTINGS["fig3"]),
        runs=L2G.transformer.runs("fig3"),
    script:
        "../scripts/l2g_fig3.py"


rule l2g_fig6:
    """Fig. 6: as Fig. 3, from the rank-one init."""
    input:
        # The first seed's heatmaps; the structure table covers every seed.
        checkpoints=run_files(L2G.transformer, "fig6", "checkpoints.npz"),
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/fig6.pdf"),
        structure=f"{L2G_FIGURES}/fig6_structure.csv",
    log:
        "logs/local_to_global/fig6.log",
    benchmark:
        "benchmarks/l2g_fig6/run.tsv"
    localrule: True
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        settings=rule_param(L2G_RUN_SETTINGS["fig6"]),
        runs=L2G.transformer.runs("fig6"),
    script:
        "../scripts/l2g_fig6.py"


rule l2g_fig4:
    """Fig. 4: test loss (mean +- std over seeds), standard init vs ours: the paper's window, then every step."""
    input:
        losses=run_files(L2G.transformer, "fig4", "losses.csv"),
    output:
        **figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/fig4.pdf"),
        **{f"long_{kind}": path for kind, path in figure_outputs(L2G_PAPER, f"{L2G_FIGURES}/fig4_long.pdf").items()},
    log:
        "logs/local_to_global/fig4.log",
    benchmark:
        "benchmarks/l2g_fig4/run.tsv"
    localrule: True
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        runs=L2G.transformer.runs("fig4"),
        chain=rule_param(L2G_EXPERIMENTS["fig4"].chain),
        window=L2G.transformer.fig4.window,
        smooth=L2G.transformer.fig4.smooth,
        settings=rule_param(L2G_RUN_SETTINGS["fig4"]),
    script:
        "../scripts/l2g_fig4.py"


rule l2g_tables:
    """Tables 1 (parameters, shapes, counts) and 2 (training settings), Markdown and LaTeX."""
    output:
        table1_md=f"{L2G_FIGURES}/table1.md",
        table1_tex=f"{L2G_FIGURES}/table1.tex",
        table2_md=f"{L2G_FIGURES}/table2.md",
        table2_tex=f"{L2G_FIGURES}/table2.tex",
    log:
        "logs/local_to_global/tables.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        settings=rule_param(L2G.transformer),
    script:
        "../scripts/l2g_tables.py"


rule l2g_claims_transformer:
    """Claims 5 (Fig. 4 plateau and escape) and 6 (rank one in Figs. 3, 6) of spec section 5."""
    input:
        fig4=rules.l2g_fig4.output.long_csv,
        fig3=rules.l2g_fig3.output.structure,
        fig6=rules.l2g_fig6.output.structure,
        ablation3=f"{L2G_FIGURES}/fig3_ablation.csv",
        ablation6=f"{L2G_FIGURES}/fig6_ablation.csv",
    output:
        L2G_CLAIMS,
    log:
        "logs/local_to_global/claims_transformer.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        chain=rule_param(L2G_EXPERIMENTS["fig4"].chain),
        fig3_chain=rule_param(L2G_EXPERIMENTS["fig3"].chain),
        settings=rule_param(L2G.transformer.claims),
    script:
        "../scripts/l2g_claims_transformer.py"
