# The claims report of every paper, and regenerated figures against committed references.
# Inputs come from the registries through functions, so figures registered by rule files
# included after this one are covered too.
from replication.perturbation import active as perturbation_from_environment
from replication.paths import files_under, reference_set_dir, shown_path

perturbation_from_environment()  # a malformed REPLICATION_PERTURBATION stops the run before any job

REFERENCE_SET = reference_set_dir(config["diff"], PROJECT_ROOT)


rule claims_report:
    """results/claims.csv and figures/claims.md: every claim of every paper's spec, measured or failing."""
    input:
        tables=lambda wildcards: CLAIM_TABLES,
        paper_report=paper_report("all"),
    output:
        csv="results/claims.csv",
        md=CLAIMS_REPORT,
    log:
        "logs/claims_report.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        settings={key: SETTINGS_RECORD[key] for key in ("name", "over", "sha256")},
        complete=True,
        title="Claims of the papers, checked by the pipeline",
    script:
        "../../scripts/claims_report.py"


# The other manifests' claims reports: only the rows of their own tables (no spec catalogue).
if OTHER_MANIFESTS:

    rule claims_report_manifest:
        """results/<manifest>_claims.csv and figures/<manifest>_claims.md: the claims tables of one
        manifest other than figures/all, as they are (spec claims they do not report stay in figures/claims.md)."""
        input:
            tables=lambda wildcards: CLAIM_TABLES_BY_MANIFEST[wildcards.manifest],
            paper_report=lambda wildcards: paper_report(wildcards.manifest),
        output:
            csv="results/{manifest}_claims.csv",
            md="figures/{manifest}_claims.md",
        log:
            "logs/claims_report_{manifest}.log",
        wildcard_constraints:
            manifest="|".join(OTHER_MANIFESTS),
        localrule: True
        conda:
            ENVIRONMENT
        params:
            settings={key: SETTINGS_RECORD[key] for key in ("name", "over", "sha256")},
            complete=False,
            title=lambda wildcards: f"Claims checked by figures/{wildcards.manifest}",
        script:
            "../../scripts/claims_report.py"


rule figures_diff:
    """Every figure's PNG (RMS) and data against the reference set, within k x the reference set's
    numerical-noise envelope plus the configured floors: summary.csv with margins, an HTML report."""
    input:
        figures=lambda wildcards: [p for r in FIGURES for p in figure_files(r["path"]) if not p.endswith(".pdf")],
        # References and external images are inputs, so that `make bless` brings a new diff.
        references=lambda wildcards: files_under(REFERENCE_SET),
        external=lambda wildcards: files_under(config["diff"]["external_dir"]),
        provenance="figures/provenance.json",  # written with figures/all (manifest.smk)
    output:
        report="figures/diff/report.html",
        summary="figures/diff/summary.csv",
        images=directory("figures/diff/images"),
    log:
        "logs/figures_diff.log",
    benchmark:
        "benchmarks/figures_diff/run.tsv"
    conda:
        ENVIRONMENT
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        figures=lambda wildcards: FIGURES,
        reference_dir=str(REFERENCE_SET),
        settings=config["diff"],
    script:
        "../../scripts/figures_diff.py"


rule figures_diff_check:
    """Fails, naming the figures, when any exceeds tolerance; the report of figures_diff stays, and
    the verdict in one line beside it (figures/diff/verdict.txt, printed by `make diff`)."""
    input:
        rules.figures_diff.output.summary,
    output:
        "figures/diff/passed",
    log:
        "logs/figures_diff_check.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        reference=lambda wildcards: shown_path(REFERENCE_SET),
    script:
        "../../scripts/figures_diff_check.py"
