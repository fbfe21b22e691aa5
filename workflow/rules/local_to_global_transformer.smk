# Local to Global: a single-layer transformer trained on Markov chains (Figs. 3, 4, 6; Tables 1, 2).
# One training job per (experiment, init, seed); figures, tables and claims read the runs.

from replication.local_to_global.runs import RUN_PATTERN, run_files, run_settings, runs

L2G_TRANSFORMER = config["local_to_global"]["transformer"]
L2G_EXPERIMENTS = L2G_TRANSFORMER["experiments"]
L2G_RUN_SETTINGS = {name: run_settings(L2G_TRANSFORMER, name) for name in L2G_EXPERIMENTS}
L2G_FIGURES = "figures/local_to_global"

L2G_FIG3 = register_figure(f"{L2G_FIGURES}/fig3.pdf", "Local to Global", "Fig. 3")
L2G_FIG4 = register_figure(f"{L2G_FIGURES}/fig4.pdf", "Local to Global", "Fig. 4")
L2G_FIG4_LONG = register_figure(f"{L2G_FIGURES}/fig4_long.pdf", "Local to Global", "Fig. 4 (longer horizon)")
L2G_FIG6 = register_figure(f"{L2G_FIGURES}/fig6.pdf", "Local to Global", "Fig. 6")
L2G_CLAIMS = register_claims("results/local_to_global/claims_transformer.csv")


rule l2g_transformer_train:
    """Train one run: test loss every eval_every steps (losses.csv) and parameter checkpoints (.npz)."""
    output:
        losses=f"{RUN_PATTERN}/losses.csv",
        checkpoints=f"{RUN_PATTERN}/checkpoints.npz",
    wildcard_constraints:
        experiment="|".join(L2G_EXPERIMENTS),
        init="standard|ours|rank_one",
        seed=r"\d+",
    params:
        settings=lambda wildcards: L2G_RUN_SETTINGS[wildcards.experiment],
        run=lambda wildcards: f"{wildcards.experiment}/{wildcards.init}/seed{wildcards.seed}",
    threads: L2G_TRANSFORMER["threads"]
    benchmark:
        "benchmarks/l2g_transformer_train/{experiment}/{init}/seed{seed}.tsv",
    priority: 100
    log:
        "logs/local_to_global/transformer/{experiment}/{init}/seed{seed}.log",
    resources:
        mem_mb=4000,
        runtime=240,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_transformer_train.py"


rule l2g_fig3:
    """Fig. 3: W_V and W_1 from the standard init at the checkpoints, and their top singular value share."""
    input:
        checkpoints=run_files(L2G_TRANSFORMER, "fig3", "checkpoints.npz")[0],
    output:
        **figure_outputs(L2G_FIG3, caption="../report/l2g_fig3.rst", category="Local to Global"),
        structure=f"{L2G_FIGURES}/fig3_structure.csv",
    params:
        settings=L2G_RUN_SETTINGS["fig3"],
    benchmark:
        "benchmarks/l2g_fig3/run.tsv",
    log:
        "logs/local_to_global/fig3.log",
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_transformer_heatmaps.py"


rule l2g_fig6:
    """Fig. 6: as Fig. 3, from the rank-one init."""
    input:
        checkpoints=run_files(L2G_TRANSFORMER, "fig6", "checkpoints.npz")[0],
    output:
        **figure_outputs(L2G_FIG6, caption="../report/l2g_fig6.rst", category="Local to Global"),
        structure=f"{L2G_FIGURES}/fig6_structure.csv",
    params:
        settings=L2G_RUN_SETTINGS["fig6"],
    benchmark:
        "benchmarks/l2g_fig6/run.tsv",
    log:
        "logs/local_to_global/fig6.log",
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_transformer_heatmaps.py"


rule l2g_fig4:
    """Fig. 4: test loss (mean +- std over seeds), standard init vs ours: the paper's window, then every step."""
    input:
        losses=run_files(L2G_TRANSFORMER, "fig4", "losses.csv"),
    output:
        **figure_outputs(L2G_FIG4, caption="../report/l2g_fig4.rst", category="Local to Global"),
        **{
            f"long_{kind}": path
            for kind, path in figure_outputs(
                L2G_FIG4_LONG, caption="../report/l2g_fig4_long.rst", category="Local to Global"
            ).items()
        },
    params:
        runs=runs(L2G_TRANSFORMER, "fig4"),
        chain=L2G_EXPERIMENTS["fig4"]["chain"],
        window=L2G_TRANSFORMER["fig4"]["window"],
        smooth=L2G_TRANSFORMER["fig4"]["smooth"],
        settings=L2G_RUN_SETTINGS["fig4"],
    benchmark:
        "benchmarks/l2g_fig4/run.tsv",
    log:
        "logs/local_to_global/fig4.log",
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        ENVIRONMENT
    script:
        "../../scripts/local_to_global_transformer_losses.py"


rule l2g_transformer_tables:
    """Tables 1 (parameters, shapes, counts) and 2 (training settings), Markdown and LaTeX."""
    output:
        table1_md=register_table(f"{L2G_FIGURES}/table1.md", "Local to Global", "Table 1"),
        table1_tex=register_table(f"{L2G_FIGURES}/table1.tex", "Local to Global", "Table 1"),
        table2_md=register_table(f"{L2G_FIGURES}/table2.md", "Local to Global", "Table 2"),
        table2_tex=register_table(f"{L2G_FIGURES}/table2.tex", "Local to Global", "Table 2"),
    params:
        settings={**L2G_TRANSFORMER, "experiments": L2G_EXPERIMENTS},
    log:
        "logs/local_to_global/transformer_tables.log",
    conda:
        ENVIRONMENT
    localrule: True
    script:
        "../../scripts/local_to_global_transformer_tables.py"


rule l2g_transformer_claims:
    """Claims 5 (Fig. 4 plateau and escape) and 6 (rank one in Figs. 3, 6) of spec section 5."""
    input:
        fig4=rules.l2g_fig4.output.long_csv,
        fig3=rules.l2g_fig3.output.structure,
        fig6=rules.l2g_fig6.output.structure,
    output:
        L2G_CLAIMS,
    params:
        chain=L2G_EXPERIMENTS["fig4"]["chain"],
        settings=L2G_TRANSFORMER["claims"],
    log:
        "logs/local_to_global/claims_transformer.log",
    conda:
        ENVIRONMENT
    localrule: True
    script:
        "../../scripts/local_to_global_transformer_claims.py"
