# figures/all: included last, once every rule file has registered its figures.


rule figures_manifest:
    """figures/all: one line per figure with its sha256 and the paper figure it reproduces."""
    input:
        [path for record in FIGURES for path in figure_files(record["path"])],
    output:
        "figures/all",
    params:
        figures=FIGURES,
    log:
        "logs/figures_manifest.log",
    conda:
        ENVIRONMENT
    localrule: True
    default_target: True
    script:
        "../../scripts/write_manifest.py"
