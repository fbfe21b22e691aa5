# figures/all: included last, once every rule file has registered its figures.


rule settings_record:
    """figures/settings.yaml: the settings of this tree (validated, defaults filled in), its name and sha256."""
    output:
        "figures/settings.yaml",
    log:
        "logs/settings_record.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        record=SETTINGS_RECORD,
    script:
        "../../scripts/settings_record.py"


rule figures_manifest:
    """figures/all: one line per figure, and the claims report, with sha256 and what it reproduces;
    figures/provenance.json beside it: the code, config, software and machine that made them."""
    input:
        [path for record in FIGURES for path in figure_files(record["path"])],
        [record["path"] for record in TABLES],
        CLAIMS_REPORT,
        rules.settings_record.output,
    output:
        manifest="figures/all",
        provenance="figures/provenance.json",
    log:
        "logs/figures_manifest.log",
    localrule: True
    conda:
        ENVIRONMENT
    params:
        # The config that made the figures; how they are compared (diff) does not make them.
        config={key: value for key, value in config.items() if key != "diff"},
        project_root=str(PROJECT_ROOT),
        figures=FIGURES
        + TABLES
        + [
            {"path": CLAIMS_REPORT, "paper": "all", "figure": "claims report"},
            {"path": "figures/settings.yaml", "paper": "all", "figure": "settings"},
        ],
        settings={key: SETTINGS_RECORD[key] for key in ("name", "over", "sha256")},
        tree=TREE,
    script:
        "../../scripts/figures_manifest.py"


if OTHER_MANIFESTS:

    rule figures_manifest_other:
        """figures/<manifest> for a manifest other than figures/all (e.g. a workload too long for a
        laptop): its figures, its claims report and the tree's settings, with sha256, and the
        provenance beside it."""
        input:
            lambda wildcards: [
                path for record in FIGURES_BY_MANIFEST[wildcards.manifest] for path in figure_files(record["path"])
            ],
            lambda wildcards: [record["path"] for record in TABLES_BY_MANIFEST[wildcards.manifest]],
            "figures/{manifest}_claims.md",
            rules.settings_record.output,
        output:
            manifest="figures/{manifest}",
            provenance="figures/{manifest}_provenance.json",
        log:
            "logs/figures_manifest_{manifest}.log",
        wildcard_constraints:
            manifest="|".join(OTHER_MANIFESTS),
        localrule: True
        conda:
            ENVIRONMENT
        params:
            config={key: value for key, value in config.items() if key != "diff"},
            project_root=str(PROJECT_ROOT),
            figures=lambda wildcards: FIGURES_BY_MANIFEST[wildcards.manifest]
            + TABLES_BY_MANIFEST[wildcards.manifest]
            + [
                {
                    "path": f"figures/{wildcards.manifest}_claims.md",
                    "paper": "all",
                    "figure": "claims report",
                },
                {"path": "figures/settings.yaml", "paper": "all", "figure": "settings"},
            ],
            settings={key: SETTINGS_RECORD[key] for key in ("name", "over", "sha256")},
            tree=TREE,
        script:
            "../../scripts/figures_manifest.py"
