# The example paper: one figure of y(t) = exp(-k t), then its claims table.
from replication.papers.exponential_decay import PAPER as DECAY

DECAY_SETTINGS = config[DECAY.id]
DECAY_CLAIMS = register_claims(f"{DECAY.results_dir}/claims.csv")


rule decay_fig1:
    """Fig. 1: y(t) on a grid of t."""
    output:
        **figure_outputs(DECAY, f"{DECAY.figures_dir}/fig1.pdf"),
    log:
        f"logs/{DECAY.id}/fig1.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        settings=DECAY_SETTINGS,
    script:
        "../scripts/decay_fig1.py"


rule decay_claims:
    """The two claims, measured on the figure's data."""
    input:
        data=rules.decay_fig1.output.csv,
    output:
        DECAY_CLAIMS,
    log:
        f"logs/{DECAY.id}/claims.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        settings=DECAY_SETTINGS,
    script:
        "../scripts/decay_claims.py"
